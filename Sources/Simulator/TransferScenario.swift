import MemoryLinks
import Transport
/// One simulated transfer: `messageCount` messages of `messageSize` bytes from the central to the peripheral
/// over a configured, possibly faulty, BLE connection.
public struct TransferScenario: Sendable, Equatable {
    /// The modelled connection.
    public var link: BLELinkConfiguration
    /// The injected faults.
    public var faults: SimulatedFaults
    /// Seeds the faults and the message contents.
    public var seed: UInt64
    /// Bytes per message (at least 4: each message starts with its index).
    public var messageSize: Int
    /// Messages to send.
    public var messageCount: Int
    /// The run stops at this simulated time even if messages are missing.
    public var timeLimit: Duration

    /// A scenario; without a time limit it gets ten times the ideal transfer time plus a minute.
    public init(
        link: BLELinkConfiguration, faults: SimulatedFaults = .none, seed: UInt64 = 1, messageSize: Int,
        messageCount: Int, timeLimit: Duration? = nil
    ) {
        self.link = link
        self.faults = faults
        self.seed = seed
        self.messageSize = messageSize
        self.messageCount = messageCount
        let limit = AirTimeModel(configuration: link).applicationThroughputLimit
        let idealSeconds = limit > 0 ? Double(messageSize * messageCount * 8) / limit : 0
        self.timeLimit = timeLimit ?? .seconds(60) + .milliseconds(Int64(idealSeconds * 10_000))
    }

    /// Checks the message shape and the link and fault settings.
    public func validate() throws(SimulationError) {
        try link.validate()
        try faults.validate()
        guard messageSize >= 4 else { throw .invalidConfiguration("message size must be at least 4 bytes") }
        guard messageCount >= 1 else { throw .invalidConfiguration("at least one message must be sent") }
    }

    /// Message `index`: its index (little-endian UInt32; its first `messageSize` bytes below 4), then bytes
    /// drawn from the seed and the index. Empty for a size below 1.
    public func message(_ index: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(messageSize, 0))
        let head = min(bytes.count, 4)
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: index).littleEndian) { bytes.replaceSubrange(0..<head, with: $0.prefix(head)) }
        var random = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(index))
        var position = 4
        while position < messageSize {
            var word = random.next()
            for _ in 0..<8 where position < messageSize {
                bytes[position] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                position += 1
            }
        }
        return bytes
    }
}
