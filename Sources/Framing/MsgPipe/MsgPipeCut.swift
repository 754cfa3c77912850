/// Which packets of a message end with the 2-byte check (PROTOCOL 3.2, 3.3), as its flags say.
public enum PacketChecks: Sendable, Equatable {
    /// No packet: plain framing (section 1).
    case none
    /// The Start packet and explicit-offset packets: a `reliable` message that is not `checked`.
    case startAndExplicit
    /// Every packet: a `checked` message.
    case every

    /// The checks a message with `flags` carries.
    @inlinable
    public init(flags: MessageFlags) {
        self = flags.contains(.checked) ? .every : flags.contains(.reliable) ? .startAndExplicit : .none
    }

    /// Check bytes on the Start packet.
    @inlinable public var startCount: Int { self == .none ? 0 : PacketCheck.count }
    /// Check bytes on an implicit (X = 0) packet after the Start.
    @inlinable public var implicitCount: Int { self == .every ? PacketCheck.count : 0 }
    /// Check bytes on an explicit-offset packet.
    @inlinable public var explicitCount: Int { self == .none ? 0 : PacketCheck.count }
}

/// The greedy cut of a message's stream (body and CRC-32 trailer) into packets at one packet size (PROTOCOL
/// 1.3): packet 0 is the Start, every later one a full implicit packet, the last one shorter. Transport calls
/// the pieces segments and keeps the cut of the Start's packet size `P0` for the whole message (3.2).
public struct MsgPipeCut: Equatable, Sendable {
    /// Body plus 4-byte CRC trailer.
    public let streamCount: Int
    /// The packet size the cut is made at.
    public let packetSize: Int
    /// Which packets end with a check.
    public let checks: PacketChecks
    /// Stream bytes the Start packet carries.
    public let startCapacity: Int
    /// Stream bytes every later full packet carries.
    public let capacity: Int
    /// Packets (segments) in the cut.
    public let count: Int

    /// The cut of `streamCount` stream bytes after a message header of `headerCount` bytes; nil when a packet
    /// of `packetSize` cannot carry the Start's headers and check, or no stream byte in a later packet.
    @inlinable
    public init?(streamCount: Int, packetSize: Int, headerCount: Int, checks: PacketChecks) {
        let startCapacity = packetSize - 1 - headerCount - checks.startCount
        let capacity = packetSize - 1 - checks.implicitCount
        guard startCapacity >= 0, capacity >= 1, streamCount >= 0 else { return nil }
        self.streamCount = streamCount
        self.packetSize = packetSize
        self.checks = checks
        self.startCapacity = startCapacity
        self.capacity = capacity
        let rest = streamCount - startCapacity
        count = rest <= 0 ? 1 : 1 + (rest + capacity - 1) / capacity
    }

    /// The cut of the message `header` announces (its length plus the trailer), with the checks its flags ask for.
    @inlinable
    public init?(header: MessageHeader, packetSize: Int) {
        self.init(
            streamCount: Int(header.length) + 4, packetSize: packetSize, headerCount: header.encodedCount,
            checks: PacketChecks(flags: header.flags))
    }

    /// The packet (segment) holding stream byte `offset` (`0 ..< streamCount`).
    @inlinable
    public func segment(containing offset: Int) -> Int {
        offset < startCapacity ? 0 : 1 + (offset - startCapacity) / capacity
    }

    /// The stream bytes of packet (segment) `index` (`0 ..< count`).
    @inlinable
    public func range(of index: Int) -> Range<Int> {
        if index == 0 { return 0..<min(startCapacity, streamCount) }
        let lower = startCapacity + (index - 1) * capacity
        return lower..<min(lower + capacity, streamCount)
    }
}
