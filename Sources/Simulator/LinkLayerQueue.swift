import Transport
internal import DequeModule

/// One side's controller transmit buffer: application packets waiting, each with the LL PDU payloads that
/// carry it (``AirTimeModel/fragments(ofPacketSize:)``), the first possibly half sent.
struct LinkLayerQueue {
    private var packets: Deque<(packet: [UInt8], fragments: [Int])> = []
    /// LL PDUs of the first packet already sent.
    private var sentOfFirst = 0

    var count: Int { packets.count }
    var isEmpty: Bool { packets.isEmpty }

    mutating func append(_ packet: [UInt8], fragments: [Int]) { packets.append((packet, fragments)) }

    /// Payload size of the next LL PDU, 0 (an empty PDU) when nothing is queued.
    func nextPayload() -> Int {
        guard let first = packets.first else { return 0 }
        return first.fragments[sentOfFirst]
    }

    /// Sends the next LL PDU; returns the packet its last fragment completed, if it did.
    mutating func transmitPDU() -> [UInt8]? {
        guard let first = packets.first else { return nil }
        sentOfFirst += 1
        guard sentOfFirst >= first.fragments.count else { return nil }
        sentOfFirst = 0
        return packets.popFirst()?.packet
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
