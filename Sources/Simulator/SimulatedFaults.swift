import Transport
/// Faults the simulator injects at the application packet level (BLE's link layer itself is reliable; these
/// stand for stack bugs, buffer overruns and disconnects), each a probability per packet from 0 to 1.
public struct SimulatedFaults: Sendable, Equatable {
    /// A packet is lost.
    public var loss: Double
    /// A packet is delivered twice.
    public var duplicate: Double
    /// A packet is held back and delivered right after the next one in its direction.
    public var reorder: Double
    /// One bit of a packet is flipped.
    public var corrupt: Double
    /// The connection drops this long after each (re)connection; nil: never.
    public var disconnectEvery: Duration?
    /// Time from a drop to the next connection (supervision timeout, scanning, connecting).
    public var reconnectDelay: Duration

    /// No faults by default.
    public init(
        loss: Double = 0, duplicate: Double = 0, reorder: Double = 0, corrupt: Double = 0,
        disconnectEvery: Duration? = nil, reconnectDelay: Duration = .milliseconds(300)
    ) {
        self.loss = loss
        self.duplicate = duplicate
        self.reorder = reorder
        self.corrupt = corrupt
        self.disconnectEvery = disconnectEvery
        self.reconnectDelay = reconnectDelay
    }

    /// No faults at all.
    public static let none = SimulatedFaults()

    /// Checks that every probability is within 0...1 and the durations are positive.
    public func validate() throws(SimulationError) {
        for (name, value) in [("loss", loss), ("duplicate", duplicate), ("reorder", reorder), ("corrupt", corrupt)] {
            guard (0...1).contains(value) else {
                throw .invalidConfiguration("\(name) probability \(value) is outside 0...1")
            }
        }
        if let disconnectEvery, disconnectEvery <= .zero {
            throw .invalidConfiguration("disconnect period must be positive")
        }
        guard reconnectDelay >= .zero else { throw .invalidConfiguration("reconnect delay must not be negative") }
    }
}
