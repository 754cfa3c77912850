import Transport
internal import DequeModule

/// One side's controller transmit buffer: application packets waiting, the first possibly half sent as LL
/// fragments of its ATT + L2CAP frame.
struct LinkLayerQueue {
    private var packets: Deque<[UInt8]> = []
    /// Bytes of the first packet's L2CAP frame already sent.
    private var sentOfFirst = 0

    var count: Int { packets.count }
    var isEmpty: Bool { packets.isEmpty }

    mutating func append(_ packet: [UInt8]) { packets.append(packet) }

    /// Payload size of the next LL PDU, 0 (an empty PDU) when nothing is queued.
    func nextPayload(linkLayerPayload: Int) -> Int {
        guard let first = packets.first else { return 0 }
        return min(linkLayerPayload, first.count + AirTimeModel.attAndL2CAPHeaderBytes - sentOfFirst)
    }

    /// Sends the next LL PDU; returns the packet its last fragment completed, if it did.
    mutating func transmitPDU(linkLayerPayload: Int) -> [UInt8]? {
        guard let first = packets.first else { return nil }
        sentOfFirst += nextPayload(linkLayerPayload: linkLayerPayload)
        guard sentOfFirst >= first.count + AirTimeModel.attAndL2CAPHeaderBytes else { return nil }
        sentOfFirst = 0
        return packets.popFirst()
    }

    /// Drops everything (the connection dropped); returns how many packets were lost.
    mutating func removeAll() -> Int {
        defer {
            packets.removeAll()
            sentOfFirst = 0
        }
        return packets.count
    }
}
