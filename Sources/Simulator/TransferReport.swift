import Transport
/// The outcome of a ``SimulatedTransfer``: what arrived, how fast on simulated time, against the limit.
public struct TransferReport: Sendable, Equatable {
    /// Messages the sender accepted.
    public var messagesSent = 0
    /// Distinct messages that arrived intact.
    public var messagesDelivered = 0
    /// Messages sent that never arrived intact.
    public var messagesLost = 0
    /// Extra deliveries of a message that had already arrived.
    public var messagesDuplicated = 0
    /// Deliveries whose content differed from what was sent.
    public var messagesCorrupted = 0
    /// Deliveries that came after a later message.
    public var messagesOutOfOrder = 0
    /// Messages the sender reported as failed.
    public var sendFailures = 0
    /// Bytes of the distinct intact messages.
    public var payloadBytes = 0
    /// Simulated seconds from the start to the last intact delivery (or to the end of the run).
    public var seconds = 0.0
    /// Application goodput: payload bits per simulated second / 1000.
    public var goodputKbps = 0.0
    /// The configuration's theoretical application throughput (``AirTimeModel``) / 1000.
    public var limitKbps = 0.0
    /// Goodput over limit.
    public var efficiency = 0.0
    /// Whether every message arrived before the time limit.
    public var completed = false
    /// The link's counters.
    public var link = SimulationStatistics()

    /// An empty report.
    public init() {}

    /// True when every message arrived exactly once, intact and in order.
    public var isExactlyOnceInOrder: Bool {
        completed && messagesLost == 0 && messagesDuplicated == 0 && messagesCorrupted == 0 && messagesOutOfOrder == 0
    }
}
