import Transport
/// What a ``BLESimulator`` did, per direction where it matters (index 0: central → peripheral,
/// 1: peripheral → central).
public struct SimulationStatistics: Sendable, Equatable {
    /// Connection events run (idle events skipped while nothing was pending are not counted).
    public var connectionEvents = 0
    /// Data PDUs (non-empty) sent per direction.
    public var dataPDUs = [0, 0]
    /// Empty PDUs sent per direction.
    public var emptyPDUs = [0, 0]
    /// Application packets taken from the endpoints per direction.
    public var packetsSent = [0, 0]
    /// Application packets handed to the receiving endpoint per direction (duplicates included).
    public var packetsDelivered = [0, 0]
    /// ATT value bytes handed to the receiving endpoint per direction.
    public var bytesDelivered = [0, 0]
    /// Packets lost by fault injection.
    public var packetsLost = 0
    /// Packets delivered twice by fault injection.
    public var packetsDuplicated = 0
    /// Packets delivered out of order by fault injection.
    public var packetsReordered = 0
    /// Packets with a flipped bit.
    public var packetsCorrupted = 0
    /// Packets queued in a controller (or held for reordering) when the connection dropped.
    public var packetsLostToDisconnect = 0
    /// Connection drops.
    public var disconnects = 0

    /// All zero.
    public init() {}
}
