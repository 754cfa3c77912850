import DequeModule
import Framing

/// msgpipe's reliable message protocol as a sans-I/O state machine (PROTOCOL.md section 3).
///
/// Submit messages with ``submit(_:options:now:)``, drive it through ``PacketEndpoint``, read what happened
/// with ``pollEvent()`` and take delivered messages with ``takeMessage()``: messages not taken keep the
/// receiver's memory occupied, which makes the peer's sender wait (end-to-end backpressure).
public struct TransportEndpoint: PacketEndpoint, Sendable {
    public let configuration: EndpointConfiguration
    private var sender: Sender
    private var receiver: Receiver
    private var events = Deque<EndpointEvent>()
    public private(set) var maximumPacketSize: Int?

    /// An endpoint; `session` names its sending side to the peer (PROTOCOL.md 3.9) and must differ between
    /// endpoints that may talk to the same receiver one after another (a random value does).
    public init(
        configuration: EndpointConfiguration = EndpointConfiguration(), session: UInt64 = .random(in: 1 ... .max)
    ) {
        self.configuration = configuration
        sender = Sender(configuration: configuration, session: session)
        receiver = Receiver(configuration: configuration)
    }

    /// An endpoint whose sending side goes on with `session`: same session, ids from its next message id.
    public init(configuration: EndpointConfiguration = EndpointConfiguration(), resuming session: SenderSession) {
        self.configuration = configuration
        sender = Sender(configuration: configuration, session: session.id, nextMessageID: session.nextMessageID, resumed: true)
        receiver = Receiver(configuration: configuration)
    }

    // MARK: Application API

    /// True while another message can be submitted (the send queue has room).
    public var canSubmit: Bool { sender.canSubmit }

    /// True when nothing is queued, in flight, or waiting for a response on the sending side.
    public var isSendIdle: Bool { sender.isIdle }

    /// Queues a message; its outcome arrives as `sendCompleted`/`sendFailed` (and `responseReceived`).
    ///
    /// Throws ``TransportError/messageTooLarge(size:limit:)`` above the maximum message size and
    /// ``TransportError/sendQueueFull(limit:)`` while the send queue is full (check ``canSubmit``).
    public mutating func submit(
        _ body: [UInt8], options: SendOptions = SendOptions(), now: Duration
    ) throws(TransportError) -> SubmissionID {
        try sender.submit(body, options: options)
    }

    /// Abandons a submitted message: it is reported as failed with `error` and cancelled at the peer.
    public mutating func cancel(_ submission: SubmissionID, error: TransportError = .cancelled, now: Duration) {
        sender.abandon(submission, error: error, now: now)
    }

    /// The next thing that happened, or nil.
    public mutating func pollEvent() -> EndpointEvent? {
        routeDeliveries()
        if let event = events.popFirst() { return event }
        // Before the sender's outcomes: a send the new peer session refused is seen after the change.
        if let change = receiver.popSessionChange() {
            return .peerSessionChanged(previous: change.previous, current: change.current)
        }
        if let event = sender.popEvent() { return event }
        if let failure = receiver.popFailure() { return .receiveFailed(failure) }
        return nil
    }

    /// The next message delivered by the peer, in order, exactly once; nil when none is waiting.
    public mutating func takeMessage() -> ReceivedMessage? {
        routeDeliveries()
        return receiver.takeMessage()
    }

    /// With ``EndpointConfiguration/holdsAcknowledgements``: the application accepted `message` (taken from
    /// ``takeMessage()``), so its `complete` goes to the sender now and its memory is freed. Until then the
    /// sender's `send` does not complete. Accepting twice, or a message of a sender session that ended, only
    /// frees the memory.
    public mutating func accept(_ message: ReceivedMessage) {
        receiver.accept(session: message.senderSession, messageID: message.messageID)
    }

    /// With ``EndpointConfiguration/holdsAcknowledgements``: the application refuses `message` for good; the
    /// sender's `send` of it fails with `reason` (``TransportError/rejectedByPeer(messageID:reason:)``) and is
    /// never acknowledged. A message already accepted, or of a sender session that ended, is left as it is.
    public mutating func reject(_ message: ReceivedMessage, reason: RejectionReason) {
        receiver.reject(session: message.senderSession, messageID: message.messageID, reason: reason)
    }

    /// Delivered messages whose acknowledgement waits for ``accept(_:)``.
    public var messagesAwaitingAcceptance: Int { receiver.messagesAwaitingAcceptance }

    /// True while the receiving side has answers for the peer not yet written by ``writeNextPacket(into:now:)``:
    /// the acknowledgement of a whole (or accepted) message, a rejection, an answer to a query. They go out
    /// only while connected, after the peer's hello on that connection.
    public var owesPeer: Bool { receiver.owesControls }

    /// The peer's sender session (PROTOCOL.md 3.9), from its latest hello; nil before the first.
    public var peerSession: UInt64? { receiver.peerSession }

    /// Messages waiting in ``takeMessage()``.
    public var availableMessages: Int { receiver.applicationQueue.count }

    /// Bytes the receiving side holds (messages in progress, out of order, or not yet taken).
    public var receiverBufferedBytes: Int { receiver.bufferedBytes }

    /// Bytes the sending side holds for messages not yet finished.
    public var senderBufferedBytes: Int { sender.bufferedBytes }

    /// Message segments the sending side sent again so far (never reset).
    public var retransmittedSegments: Int { sender.retransmittedSegments }

    var senderSummary: String { sender.summary }
    var receiverSummary: String { receiver.summary }

    private mutating func routeDeliveries() {
        while let message = receiver.popOutput() {
            if message.correlationID != nil, sender.matchResponse(message) { continue }
            if message.correlationID != nil { continue }  // a response nobody waits for any more
            receiver.enqueueForApplication(message)
            events.append(.messageAvailable)
        }
    }

    // MARK: PacketEndpoint

    public mutating func linkConnected(maximumPacketSize: Int, now: Duration) {
        self.maximumPacketSize = maximumPacketSize
        receiver.packetSize = maximumPacketSize
        receiver.connectionChanged()
        sender.connected(packetSize: maximumPacketSize, now: now)
    }

    public mutating func maximumPacketSizeChanged(_ maximumPacketSize: Int, now: Duration) {
        self.maximumPacketSize = maximumPacketSize
        receiver.packetSize = maximumPacketSize
        sender.packetSize = maximumPacketSize
    }

    public mutating func linkDisconnected(now: Duration) {
        maximumPacketSize = nil
        receiver.connectionChanged()
        sender.disconnected()
    }

    public mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration) {
        if packet.starts(with: ControlPacket.prefix) {
            guard let control = TransportControl(decoding: packet) else {
                sender.noteCorruption(now: now)
                return
            }
            if !sender.handle(control, now: now) {
                switch control {
                case let .query(id): receiver.handleQuery(id)
                case let .cancel(id): receiver.handleCancel(id)
                case let .hello(session, firstMessageID): receiver.handleHello(session: session, firstMessageID: firstMessageID)
                default: break
                }
            }
        } else {
            receiver.receiveData(packet, now: now)
        }
        routeDeliveries()
    }

    public mutating func writeNextPacket(into buffer: inout [UInt8], now: Duration) -> Bool {
        guard maximumPacketSize != nil else { return false }
        return receiver.writeControl(into: &buffer) || sender.writeControl(into: &buffer, now: now)
            || sender.writeData(into: &buffer, now: now)
    }

    public var nextTimeout: Duration? {
        switch (sender.nextTimeout, receiver.nextTimeout) {
        case let (.some(a), .some(b)): min(a, b)
        case let (a, b): a ?? b
        }
    }

    public mutating func handleTimeout(now: Duration) {
        sender.handleTimeout(now: now)
        receiver.handleTimeout(now: now)
    }
}
