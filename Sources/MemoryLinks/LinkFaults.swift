import Transport
/// What a ``FaultInjectingLink`` does to the packets it sends, each a probability per packet from 0 to 1.
public struct LinkFaults: Sendable, Equatable {
    /// The packet is lost.
    public var drop: Double
    /// The packet is sent twice.
    public var duplicate: Double
    /// The packet is held back and sent right after the next one.
    public var reorder: Double
    /// One bit of one byte of the packet is flipped.
    public var corrupt: Double
    /// The packet is held back for 1 to `maximumDelayPackets` later packets (the link has no clock).
    public var delay: Double
    /// The longest delay, in later packets.
    public var maximumDelayPackets: Int
    /// Drop and restore the connection after every this many packets (nil: never). Held packets are lost.
    public var disconnectEveryPackets: Int?

    /// Faults as given; all zero by default (a transparent link).
    public init(
        drop: Double = 0, duplicate: Double = 0, reorder: Double = 0, corrupt: Double = 0,
        delay: Double = 0, maximumDelayPackets: Int = 4, disconnectEveryPackets: Int? = nil
    ) {
        self.drop = drop
        self.duplicate = duplicate
        self.reorder = reorder
        self.corrupt = corrupt
        self.delay = delay
        self.maximumDelayPackets = max(1, maximumDelayPackets)
        self.disconnectEveryPackets = disconnectEveryPackets.map { max(1, $0) }
    }
}

/// What a ``FaultInjectingLink`` did so far.
public struct LinkFaultStatistics: Sendable, Equatable {
    /// Packets given to `send`.
    public var packetsOffered = 0
    /// Packets passed to the wrapped link (duplicates and released held packets included).
    public var packetsForwarded = 0
    /// Packets dropped.
    public var dropped = 0
    /// Packets sent twice.
    public var duplicated = 0
    /// Packets held back behind their successor.
    public var reordered = 0
    /// Packets held back for several later packets.
    public var delayed = 0
    /// Packets with a flipped bit.
    public var corrupted = 0
    /// Held packets lost because the connection dropped.
    public var lostInFlight = 0
    /// Connection drops injected.
    public var disconnects = 0

    /// All zero.
    public init() {}
}
