/// Limits and timings of a ``TransportEndpoint``; the defaults suit BLE links from 7.5 ms to 50 ms intervals.
public struct EndpointConfiguration: Sendable, Equatable {
    /// Largest message body (after inflating) either side accepts.
    public var maximumMessageSize = 16 << 20
    /// Receiver: bytes held for messages in progress, completed out of order, or not yet taken by the app.
    public var maximumBufferedBytes = 32 << 20
    /// Receiver: messages in progress plus completed messages not yet taken by the app.
    public var maximumMessagesInProgress = 8
    /// Receiver: the `complete` that finishes a delivered message waits until the application accepted it
    /// (``TransportEndpoint/accept(_:)``), e.g. once a broker stored it. Until then the message counts against
    /// ``maximumBufferedBytes`` and ``maximumMessagesInProgress``, and the sender's queries are answered `busy`:
    /// the sender waits (its deadline still applies) and learns `complete` as soon as the message is accepted.
    /// Responses (correlated to a request) are never held.
    public var holdsAcknowledgements = false
    /// Sender: messages accepted by ``TransportEndpoint/submit(_:options:now:)`` and not yet finished.
    public var maximumQueuedMessages = 64
    /// Sender: messages whose packets are in flight at once (one channel each, at most 4).
    public var maximumConcurrentMessages = 4
    /// Sender: packets sent and not yet acknowledged, across all messages.
    public var sendWindow = 256
    /// Receiver: acknowledge after this many data packets of a message.
    public var acknowledgeEvery = 16
    /// Receiver: acknowledge at the latest this long after an unacknowledged packet arrived.
    public var acknowledgementDelay: Duration = .milliseconds(10)
    /// Sender: retransmission timeout before an RTT sample exists.
    public var initialRetransmissionTimeout: Duration = .milliseconds(300)
    /// Sender: bounds of the adaptive retransmission timeout.
    public var minimumRetransmissionTimeout: Duration = .milliseconds(40)
    public var maximumRetransmissionTimeout: Duration = .seconds(4)
    /// Sender: a message fails after this many retransmission timeouts in a row without progress.
    public var maximumRetries = 10
    /// Sender: how long a message refused with `busy` waits before asking again (a lost `ready` is survived).
    public var busyProbeInterval: Duration = .seconds(1)
    /// Sender: per-packet checks (PROTOCOL.md 3.3).
    public var packetChecks: PacketCheckPolicy = .adaptive
    /// Sender: zlib level for messages sent with compression.
    public var compressionLevel: Int32 = 6

    public init() {}
}

/// When a sender protects every packet of a message with a 2-byte check (PROTOCOL.md 3.3).
public enum PacketCheckPolicy: Sendable, Equatable {
    /// Never, except a restart after a CRC failure.
    case never
    /// Always.
    case always
    /// When the check costs under 1 % (packets of 200+ bytes), after a CRC failure, or under heavy loss.
    case adaptive
}
