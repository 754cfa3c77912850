/// A control packet (PROTOCOL 2): one packet, S and E set, kind 1; its payload belongs to Transport.
public struct ControlPacket: Equatable, Sendable {
    /// The header byte (S, E, channel 0, sequence 0) and version/kind byte every control packet starts with.
    public static let prefix: [UInt8] = [PacketHeader.startBit | PacketHeader.endBit, MessageHeader.controlKindByte]

    /// The payload, opaque to Framing.
    public var payload: ArraySlice<UInt8>

    /// A control packet carrying `payload`.
    public init(payload: ArraySlice<UInt8>) {
        self.payload = payload
    }

    /// The largest payload a packet of `packetSize` bytes can carry.
    public static func maximumPayloadCount(packetSize: Int) -> Int { max(0, packetSize - prefix.count) }

    /// Writes the packet into `out`, replacing its contents; throws when it exceeds `packetSize`.
    public func encode(into out: inout [UInt8], packetSize: Int) throws(FramingError) {
        let limit = Self.maximumPayloadCount(packetSize: packetSize)
        guard payload.count <= limit else { throw .controlPayloadTooLarge(size: payload.count, limit: limit) }
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: Self.prefix)
        out.append(contentsOf: payload)
    }
}
