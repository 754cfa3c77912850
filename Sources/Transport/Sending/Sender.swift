import DequeModule
import Framing

/// The sending half of a ``TransportEndpoint``: segments, windows, acknowledgements, retransmissions, resume.
struct Sender: Sendable {
    /// Retransmit a missing segment once a packet sent this many packets later was acknowledged.
    static let reorderTolerance: UInt64 = 3
    /// First transmissions sent with an explicit index after a burst may have been lost.
    static let explicitAfterGap = 3
    /// The smallest packet size Transport works with (ATT_MTU 23).
    static let minimumPacketSize = 20
    /// After this many retransmission timeouts on a connection without an acknowledgement the peer counts as
    /// silent (``EndpointEvent/peerSilent``), and again every as many after that while it stays so.
    static let renewAfterSilentTimeouts = 2
    /// A resumed session's messages from its first id on, this many, may be partly held by the receiver.
    static let resumedMayBeKnown: UInt32 = 64

    let configuration: EndpointConfiguration
    private(set) var messages: [OutgoingMessage] = []
    private(set) var events = Deque<EndpointEvent>()
    private var nextSubmission: UInt64 = 1
    private var nextMessageID: UInt32 = 1
    private var sequence: UInt64 = 0
    private(set) var inFlight = 0
    private var roundTrip: RoundTripEstimator
    private var checkedMessagesLeft = 0
    private var sentSegments = 0
    /// Segments sent again (retransmission: true), since the sender began; never reset or halved.
    private(set) var retransmittedSegments = 0
    private var lostSegments = 0
    /// Retransmission timeouts since the peer was last heard from on this connection (``EndpointEvent/peerSilent``).
    private var silentTimeouts = 0
    /// When each channel may carry a new message: packets of its previous message may still be on the way.
    private var channelQuietUntil: [Duration] = [.zero, .zero, .zero, .zero]
    var packetSize: Int?
    /// The latest `now` seen, for bookkeeping in calls that carry no time.
    var lastNow: Duration = .zero
    /// This sender's session (PROTOCOL.md 3.9): a new one per endpoint, or one resumed (``SenderSession``).
    let session: UInt64
    /// A resumed session's first id: the receiver may hold part of the messages an earlier process started from it.
    private let resumedFrom: UInt32?
    /// The receiver answered this connection's `hello` with `welcome` (until then the hello is resent).
    private(set) var greeted = false
    private var helloPending = false
    private var helloTimerAt: Duration?
    private var helloAttempts = 0
    /// Hello timeouts in a row at which the hello asked for at the previous one was still unwritten: the link
    /// takes no packet (a notification queue or channel that stays full). Past the retry limit every message
    /// fails with ``TransportError/linkStalled(timeouts:)``: without this a writer stuck on the first packet
    /// left no timer, and a send without a deadline waited for ever.
    private var stalledHelloTimeouts = 0

    /// With `resumed`, the session goes on from an earlier process: the receiver may hold part of the messages
    /// from `nextMessageID` on (``OutgoingMessage/mayBeKnownToReceiver``).
    init(configuration: EndpointConfiguration, session: UInt64, nextMessageID: UInt32 = 1, resumed: Bool = false) {
        self.configuration = configuration
        self.session = session
        self.nextMessageID = nextMessageID == 0 ? 1 : nextMessageID
        resumedFrom = resumed ? self.nextMessageID : nil
        roundTrip = RoundTripEstimator(
            initial: configuration.initialRetransmissionTimeout,
            minimum: configuration.minimumRetransmissionTimeout,
            maximum: configuration.maximumRetransmissionTimeout)
    }

    var canSubmit: Bool { messages.count < configuration.maximumQueuedMessages }
    var isIdle: Bool { messages.isEmpty }
    var bufferedBytes: Int { messages.reduce(0) { $0 + $1.streamCount } }

    mutating func popEvent() -> EndpointEvent? { events.popFirst() }

    // MARK: Submission

    mutating func submit(_ body: [UInt8], options: SendOptions) throws(TransportError) -> SubmissionID {
        guard body.count <= configuration.maximumMessageSize else {
            throw .messageTooLarge(size: body.count, limit: configuration.maximumMessageSize)
        }
        guard canSubmit else { throw .sendQueueFull(limit: configuration.maximumQueuedMessages) }
        var flags: MessageFlags = [.reliable]
        var carried = body
        if options.compress, let deflated = try Deflate.compress(body, level: configuration.compressionLevel) {
            carried = deflated
            flags.insert(.deflate)
        }
        switch options.kind {
        case .message: break
        case .request: flags.insert(.request)
        case .response: flags.insert(.response)
        }
        let id = SubmissionID(rawValue: nextSubmission)
        nextSubmission += 1
        messages.append(OutgoingMessage(submission: id, options: options, body: carried, flags: flags))
        return id
    }

    /// Abandons a message: the caller is told `error`; a started message is cancelled at the receiver.
    mutating func abandon(_ submission: SubmissionID, error: TransportError, now: Duration) {
        guard let index = messages.firstIndex(where: { $0.submission == submission }) else { return }
        events.append(.sendFailed(submission, error))
        abandonMessage(at: index, now: now)
    }

    private mutating func abandonMessage(at index: Int, now: Duration) {
        switch messages[index].phase {
        case .queued, .awaitingResponse:
            messages.remove(at: index)
        case .cancelling:
            break
        case .sending, .resyncing, .parked:
            clearFlights(at: index)
            messages[index].phase = .cancelling
            messages[index].cancelPending = true
            messages[index].timeoutsWithoutProgress = 0
            messages[index].timerAt = packetSize == nil ? nil : now + roundTrip.timeout()
        }
    }

    // MARK: Connection

    mutating func connected(packetSize: Int, now: Duration) {
        self.packetSize = packetSize
        // The hello goes first: the receiver may be another process than on the last connection, or this
        // sender a new one. Data follows at once (the bearer is in order); the hello is resent until welcome.
        greeted = false
        helloPending = true
        helloTimerAt = nil
        silentTimeouts = 0
        helloAttempts = 0
        stalledHelloTimeouts = 0
        for index in messages.indices where messages[index].holdsChannel {
            // Ask what the receiver kept; data waits for the answer.
            if messages[index].phase == .sending { messages[index].phase = .resyncing }
            if messages[index].phase == .cancelling {
                messages[index].cancelPending = true
            } else {
                messages[index].queryPending = true
            }
            messages[index].timerAt = now + roundTrip.timeout()
        }
    }

    mutating func disconnected() {
        packetSize = nil
        greeted = false
        helloPending = false
        helloTimerAt = nil
        for index in messages.indices where messages[index].holdsChannel {
            messages[index].mayHaveLateCopies = true
            clearFlights(at: index)
            messages[index].queryPending = false
            messages[index].querySequence = nil
            messages[index].timerAt = nil
        }
    }

    private mutating func clearFlights(at index: Int) {
        inFlight -= messages[index].flights.count
        messages[index].flights.removeAll()
        messages[index].piece = nil
    }

    /// A packet from the peer failed its check: the link corrupts. The next messages go checked, and
    /// unchecked messages in progress restart checked now rather than fail their CRC at the end.
    mutating func noteCorruption(now: Duration) {
        guard configuration.packetChecks == .adaptive else { return }
        checkedMessagesLeft = 32
        for index in messages.indices.reversed()
        where messages[index].phase == .sending && !messages[index].isChecked {
            restart(at: index, checked: true, now: now)
        }
    }

    // MARK: Control packets from the receiver

    /// Handles a control packet meant for the sending side; returns false when it is not one.
    mutating func handle(_ control: TransportControl, now: Duration) -> Bool {
        lastNow = max(lastNow, now)
        switch control {
        case .query, .cancel, .hello, .welcome:
            break
        default:
            // Before its welcome a sender takes no answer: it may be about another session's message with the
            // same id, e.g. a receiver's acknowledgement delayed from the previous connection (PROTOCOL.md 3.9).
            guard greeted else { return true }
        }
        switch control {
        case let .acknowledgement(ack):
            acknowledge(ack, now: now)
        case let .complete(id):
            guard let index = startedIndex(id) else { break }
            completeMessage(at: index)
        case let .cancelled(id):
            guard let index = startedIndex(id) else { break }
            if messages[index].phase != .cancelling {
                // The receiver gave this id up earlier in the session (a resumed sender sends it again).
                events.append(.sendFailed(messages[index].submission, .abandonedAtPeer(messageID: id)))
            }
            removeMessage(at: index)
        case let .unknown(id) where phase(of: id) == .cancelling:
            if let index = startedIndex(id) { removeMessage(at: index) }
        case let .unknown(id):
            guard let index = startedIndex(id), messages[index].holdsChannel else { break }
            restart(at: index, checked: messages[index].isChecked, now: now)
        case let .checkFailed(id):
            guard let index = startedIndex(id), messages[index].holdsChannel,
                messages[index].phase != .cancelling
            else { break }
            checkedMessagesLeft = 32
            restart(at: index, checked: true, now: now)
        case let .busy(id):
            guard let index = startedIndex(id), messages[index].phase != .cancelling,
                messages[index].holdsChannel
            else { break }
            clearFlights(at: index)
            messages[index].phase = .parked
            messages[index].queryPending = false
            messages[index].timerAt = now + configuration.busyProbeInterval
        case .ready:
            for index in messages.indices.reversed() where messages[index].phase == .parked {
                restart(at: index, checked: messages[index].isChecked, now: now)
            }
        case let .startMissing(channel):
            guard
                let index = messages.firstIndex(where: {
                    $0.channel == channel && $0.phase == .sending && !$0.heardFromReceiver
                })
            else { break }
            let recent = messages[index].flights.contains {
                $0.segment == 0 && now - $0.sentAt < roundTrip.timeout() / 2
            }
            if !recent { messages[index].startResendPending = true }
        case let .rejected(id, reason):
            guard let index = startedIndex(id) else { break }
            if messages[index].phase != .cancelling {
                events.append(.sendFailed(messages[index].submission, .rejectedByPeer(messageID: id, reason: reason)))
            }
            removeMessage(at: index)
        case let .welcome(session):
            guard session == self.session, !greeted else { break }
            greeted = true
            helloTimerAt = nil
            helloAttempts = 0
        case .query, .cancel, .hello:
            return false
        }
        return true
    }

    /// The lowest message id this sender may still send data or a cancel for: the oldest unfinished
    /// message, else the next id. Ids below it are finished here; the receiver may forget them.
    var firstUnfinishedID: UInt32 {
        messages.filter(\.isStarted).map(\.messageID).min { ($0 &- nextMessageID) < ($1 &- nextMessageID) }
            ?? nextMessageID
    }

    private func phase(of id: UInt32) -> OutgoingMessage.Phase? {
        startedIndex(id).map { messages[$0].phase }
    }

    private func startedIndex(_ id: UInt32) -> Int? {
        messages.firstIndex { $0.isStarted && $0.messageID == id }
    }

    private mutating func completeMessage(at index: Int) {
        let message = messages[index]
        clearFlights(at: index)
        releaseChannel(of: message, now: nil, completed: message.phase != .cancelling)
        if message.phase == .cancelling || message.phase == .awaitingResponse {
            if message.phase == .cancelling { removeMessage(at: index) }
            return
        }
        events.append(.sendCompleted(message.submission, messageID: message.messageID))
        if message.options.kind == .request {
            messages[index].phase = .awaitingResponse
            messages[index].timerAt = nil
        } else {
            messages.remove(at: index)  // its flights and channel are released above
        }
        if checkedMessagesLeft > 0 { checkedMessagesLeft -= 1 }
    }

    private mutating func removeMessage(at index: Int, now: Duration? = nil) {
        clearFlights(at: index)
        releaseChannel(of: messages[index], now: now)
        messages.remove(at: index)
    }

    /// Keeps a finished message's channel unused for a retransmission timeout, so that its late packets
    /// (retransmissions still on the way) cannot be taken for the next message's. A message that completed with
    /// every packet sent once has none left on the way (the receiver took them all): its channel is free at once.
    private mutating func releaseChannel(of message: OutgoingMessage, now: Duration?, completed: Bool = false) {
        guard message.holdsChannel else { return }
        if completed && !message.mayHaveLateCopies { return }
        channelQuietUntil[message.channel] = (now ?? lastNow) + roundTrip.timeout()
    }

    /// Sends the message again from its Start (the receiver holds nothing of it), checked if asked.
    private mutating func restart(at index: Int, checked: Bool, now: Duration) {
        clearFlights(at: index)
        if checked { messages[index].flags.insert(.checked) }
        guard buildLayout(at: index, packetSize: packetSize) else {
            events.append(
                .sendFailed(
                    messages[index].submission,
                    .packetSizeTooSmall(size: packetSize ?? 0, minimum: Self.minimumPacketSize)))
            messages.remove(at: index)
            return
        }
        messages[index].resetTransmission()
        messages[index].nextUnsent = 1
        messages[index].startResendPending = true
        messages[index].phase = .sending
        messages[index].queryPending = false
        messages[index].timeoutsWithoutProgress = 0
        messages[index].timerAt = packetSize == nil ? nil : now + roundTrip.timeout()
    }

    private mutating func acknowledge(_ ack: Acknowledgement, now: Duration) {
        guard let index = startedIndex(ack.messageID), let segments = messages[index].encoder?.packetCount else { return }
        guard ack.checked == messages[index].isChecked else {
            // The receiver still holds the unchecked attempt of a message restarted checked: the checked Start
            // was lost. Restart again (unless a Start went out within the last timeout: a late acknowledgement).
            let phase = messages[index].phase
            if messages[index].isChecked, phase == .sending || phase == .resyncing,
                !messages[index].flights.contains(where: { $0.segment == 0 && now - $0.sentAt < roundTrip.timeout() })
            {
                restart(at: index, checked: true, now: now)
            }
            return
        }
        let phase = messages[index].phase
        guard phase == .sending || phase == .resyncing else { return }
        // In place (`messages[index]`): a copy would share the flight queue and segment sets, and the first
        // write would copy them for every acknowledgement.
        let outcome = messages[index].apply(
            ack, segments: segments, now: now, reorderTolerance: Self.reorderTolerance)
        if let sample = outcome.sample { roundTrip.addSample(sample) }
        inFlight -= outcome.flightsDone
        lostSegments += outcome.lost
        if phase == .resyncing {
            // Resume: everything sent before and not confirmed goes again.
            messages[index].requeueUnconfirmed()
            messages[index].explicitBudget = Self.explicitAfterGap
        }
        let next = messages[index].nextUnsent
        if next > 0, next < segments, messages[index].acked.contains(next) {
            // The receiver holds segments this sender has not sent yet: a resumed session's message it had part of
            // from an earlier process. The first pass skips them; its next packets carry explicit offsets, which
            // re-anchor the receiver (PROTOCOL.md 3.2).
            messages[index].nextUnsent = min(segments, messages[index].acked.firstMissing(from: next))
            messages[index].explicitBudget = Self.explicitAfterGap
        }
        // An answer to a query shows the receiver is alive: only timeouts it leaves unanswered count towards
        // "retries exhausted" (on a very lossy link a retransmission round may fail many times in a row).
        let answeredQuery = messages[index].querySequence != nil
        messages[index].querySequence = nil
        if outcome.progressed || answeredQuery {
            silentTimeouts = 0
            messages[index].timeoutsWithoutProgress = 0
            messages[index].timerAt = now + roundTrip.timeout()
        }
    }

    // MARK: Responses

    /// Hands a received response to its waiting request; false when no request waits for it.
    mutating func matchResponse(_ response: ReceivedMessage) -> Bool {
        guard let correlation = response.correlationID,
            let index = messages.firstIndex(where: {
                $0.isStarted && $0.messageID == correlation && $0.options.kind == .request
            })
        else { return false }
        let message = messages[index]
        // A response proves the request arrived in any started phase, also parked by `busy` (its receiver
        // answered before it accepted the request, and its `complete` may come after the response).
        guard message.phase != .cancelling else { return false }
        if message.phase != .awaitingResponse {
            events.append(.sendCompleted(message.submission, messageID: message.messageID))
        }
        events.append(.responseReceived(message.submission, response))
        removeMessage(at: index)
        return true
    }

    // MARK: Timers

    var nextTimeout: Duration? {
        var earliest: Duration? = helloTimerAt
        func consider(_ candidate: Duration?) {
            if let candidate, earliest.map({ candidate < $0 }) ?? true { earliest = candidate }
        }
        for message in messages {
            consider(message.timerAt)
            if message.phase != .cancelling { consider(message.options.deadline) }
        }
        if messages.contains(where: { $0.phase == .queued }) {
            var quietEnd: Duration?
            for channel in 0 ..< 4 where !messages.contains(where: { $0.holdsChannel && $0.channel == channel }) {
                quietEnd = min(quietEnd ?? channelQuietUntil[channel], channelQuietUntil[channel])
            }
            if let quietEnd, quietEnd > lastNow { consider(quietEnd) }
        }
        return earliest
    }

    mutating func handleTimeout(now: Duration) {
        lastNow = max(lastNow, now)
        if let helloTimerAt, helloTimerAt <= now {
            stalledHelloTimeouts = helloPending ? stalledHelloTimeouts + 1 : 0
            if greeted && !helloPending {
                self.helloTimerAt = nil  // the hello went out and the session is welcomed: nothing to watch
            } else {
                // Resent with backoff until the welcome arrives (a lost hello or welcome); the next timeout is
                // armed now, written or not, so that a link that takes nothing is noticed.
                helloPending = true
                self.helloTimerAt = now + roundTrip.timeout(backoff: helloAttempts)
                helloAttempts += 1
            }
            if stalledHelloTimeouts > configuration.maximumRetries {
                for message in messages where message.phase != .cancelling {
                    events.append(.sendFailed(message.submission, .linkStalled(timeouts: stalledHelloTimeouts)))
                }
                while let index = messages.indices.last { removeMessage(at: index, now: now) }
                stalledHelloTimeouts = 0
            }
        }
        var index = 0
        while index < messages.count {
            let message = messages[index]
            if message.phase != .cancelling, let deadline = message.options.deadline, deadline <= now {
                let error: TransportError =
                    message.phase == .awaitingResponse
                    ? .responseTimedOut(requestID: message.messageID)
                    : .deadlineExceeded(messageID: message.isStarted ? message.messageID : nil)
                events.append(.sendFailed(message.submission, error))
                abandonMessage(at: index, now: now)
                continue
            }
            if let timer = message.timerAt, timer <= now {
                if !expireTimer(at: index, now: now) { continue }
            }
            index += 1
        }
    }

    /// Returns false when the message was removed.
    private mutating func expireTimer(at index: Int, now: Duration) -> Bool {
        switch messages[index].phase {
        case .parked:
            messages[index].queryPending = true
            messages[index].timerAt = now + configuration.busyProbeInterval
            // The hello goes with the probe: a receiver may still wait for ids this sender finished (a new
            // receiving process answered by its predecessor's acknowledgements) and hold the parked ones behind them.
            if greeted, packetSize != nil { helloPending = true }
            return true
        case .queued, .awaitingResponse:
            messages[index].timerAt = nil
            return true
        case .sending, .resyncing, .cancelling:
            messages[index].timeoutsWithoutProgress += 1
            let retries = messages[index].timeoutsWithoutProgress
            if retries > configuration.maximumRetries {
                if messages[index].phase != .cancelling {
                    events.append(
                        .sendFailed(
                            messages[index].submission,
                            .retriesExhausted(messageID: messages[index].messageID, retries: retries - 1)))
                }
                removeMessage(at: index)
                // The receiver would wait for this id forever: a hello moves its first id on (3.9). Its timer
                // watches that it is written.
                helloPending = packetSize != nil
                if helloPending, helloTimerAt == nil { helloTimerAt = now + roundTrip.timeout() }
                return false
            }
            silentTimeouts += 1
            if packetSize != nil, silentTimeouts % Self.renewAfterSilentTimeouts == 0 { events.append(.peerSilent) }
            if messages[index].phase == .cancelling {
                messages[index].cancelPending = true
            } else {
                messages[index].queryPending = true
                messages[index].explicitBudget = Self.explicitAfterGap
            }
            messages[index].timerAt = now + roundTrip.timeout(backoff: retries)
            return true
        }
    }

    // MARK: Output

    /// Writes a pending `hello`, `query` or `cancel`; false when there is none.
    mutating func writeControl(into buffer: inout [UInt8], now: Duration) -> Bool {
        guard packetSize != nil else { return false }
        if helloPending {
            helloPending = false
            TransportControl.hello(session: session, firstMessageID: firstUnfinishedID).encode(into: &buffer)
            if !greeted && helloTimerAt == nil {
                helloTimerAt = now + roundTrip.timeout(backoff: helloAttempts)
                helloAttempts += 1
            }
            return true
        }
        for index in messages.indices {
            if messages[index].cancelPending {
                messages[index].cancelPending = false
                TransportControl.cancel(messageID: messages[index].messageID).encode(into: &buffer)
                return true
            }
            if messages[index].queryPending {
                messages[index].queryPending = false
                messages[index].querySequence = sequence
                TransportControl.query(messageID: messages[index].messageID).encode(into: &buffer)
                return true
            }
        }
        return false
    }

    /// Writes the next data packet: a Start resend, a retransmission, or a first transmission.
    mutating func writeData(into buffer: inout [UInt8], now: Duration) -> Bool {
        lastNow = max(lastNow, now)
        guard let packetSize, inFlight < configuration.sendWindow else { return false }
        for index in messages.indices where messages[index].phase == .sending {
            while let first = messages[index].retransmitQueue.first, messages[index].acked.contains(first) {
                messages[index].retransmitQueue.removeFirst()
                messages[index].queuedForRetransmit.remove(first)
            }
            if messages[index].startResendPending {
                messages[index].startResendPending = false
                writeStart(at: index, into: &buffer)
                recordFlight(at: index, segment: 0, retransmission: true, now: now)
                return true
            }
            if messages[index].piece == nil, let segment = messages[index].retransmitQueue.first,
                canResendImplicitly(at: index, segment: segment, packetSize: packetSize)
            {
                messages[index].retransmitQueue.removeFirst()
                messages[index].queuedForRetransmit.remove(segment)
                writeImplicit(at: index, segment: segment, into: &buffer)
                recordFlight(at: index, segment: segment, retransmission: true, now: now)
                return true
            }
            if messages[index].piece != nil || !messages[index].retransmitQueue.isEmpty {
                writeExplicitPiece(at: index, into: &buffer, packetSize: packetSize, now: now)
                return true
            }
        }
        // First transmissions: one message at a time, in submission order.
        if let index = messages.firstIndex(where: { $0.phase == .sending && !$0.firstPassDone }) {
            writeFirstTransmission(at: index, into: &buffer, packetSize: packetSize, now: now)
            return true
        }
        guard let index = messages.firstIndex(where: { $0.phase == .queued }),
            messages.count(where: \.holdsChannel) < min(configuration.maximumConcurrentMessages, 4)
        else { return false }
        guard startMessage(at: index, packetSize: packetSize, now: now) else { return false }
        writeStart(at: index, into: &buffer)
        recordFlight(at: index, segment: 0, retransmission: false, now: now)
        messages[index].nextUnsent = 1
        return true
    }

    private mutating func startMessage(at index: Int, packetSize: Int, now: Duration) -> Bool {
        guard let channel = freeChannel(now: now) else { return false }
        messages[index].messageID = nextMessageID
        if let resumedFrom, nextMessageID &- resumedFrom < Self.resumedMayBeKnown {
            messages[index].mayBeKnownToReceiver = true
        }
        nextMessageID &+= 1
        if nextMessageID == 0 { nextMessageID = 1 }
        messages[index].channel = channel
        if wantsChecks(packetSize: packetSize) { messages[index].flags.insert(.checked) }
        messages[index].phase = .sending
        guard buildLayout(at: index, packetSize: packetSize) else {
            events.append(
                .sendFailed(
                    messages[index].submission,
                    .packetSizeTooSmall(size: packetSize, minimum: Self.minimumPacketSize)))
            messages.remove(at: index)
            return false
        }
        messages[index].resetTransmission()
        messages[index].timerAt = now + roundTrip.timeout()
        return true
    }

    /// The free channel that has been quiet longest, if any is free and quiet at `now`.
    private func freeChannel(now: Duration) -> Int? {
        let used = Set(messages.filter(\.holdsChannel).map(\.channel))
        return (0 ..< 4).filter { !used.contains($0) && channelQuietUntil[$0] <= now }
            .min { channelQuietUntil[$0] < channelQuietUntil[$1] }
    }

    private func wantsChecks(packetSize: Int) -> Bool {
        switch configuration.packetChecks {
        case .never: false
        case .always: true
        case .adaptive:
            packetSize >= 200 || checkedMessagesLeft > 0 || (sentSegments > 64 && lostSegments * 7 > sentSegments)
        }
    }

    /// Makes Framing's encoder (header, cut, checks) for the message's current flags at `packetSize`.
    @discardableResult
    private mutating func buildLayout(at index: Int, packetSize: Int? = nil) -> Bool {
        let message = messages[index]
        let size = packetSize ?? message.encoder?.packetSize ?? self.packetSize ?? 0
        guard size >= Self.minimumPacketSize,
            let encoder = try? MsgPipeEncoder(
                payload: message.body, messageID: message.messageID, flags: message.flags,
                correlationID: message.correlationID, channel: UInt8(message.channel), packetSize: size)
        else { return false }
        messages[index].encoder = encoder
        messages[index].acked = SegmentSet(capacity: encoder.packetCount)
        messages[index].queuedForRetransmit = SegmentSet(capacity: encoder.packetCount)
        return true
    }

    /// Writes the message's Start packet (with its check, PROTOCOL.md 3.2).
    private func writeStart(at index: Int, into buffer: inout [UInt8]) {
        try? messages[index].encoder?.writePacket(index: 0, into: &buffer)
    }

    private mutating func writeFirstTransmission(
        at index: Int, into buffer: inout [UInt8], packetSize: Int, now: Duration
    ) {
        let segment = messages[index].nextUnsent
        guard let encoder = messages[index].encoder else { return }
        let mayMisplace = messages[index].mayBeKnownToReceiver && !messages[index].heardFromReceiver && segment > 0
        if messages[index].explicitBudget > 0 || packetSize < encoder.packetSize || mayMisplace {
            if messages[index].explicitBudget > 0 { messages[index].explicitBudget -= 1 }
            messages[index].nextUnsent += 1
            messages[index].piece = (segment, 0)
            writeExplicitPiece(at: index, into: &buffer, packetSize: packetSize, now: now, retransmission: false)
            return
        }
        writeImplicit(at: index, segment: segment, into: &buffer)
        messages[index].nextUnsent += 1
        recordFlight(at: index, segment: segment, retransmission: false, now: now)
    }

    /// Writes segment `segment` as an implicitly indexed packet (PROTOCOL.md 3.2).
    private func writeImplicit(at index: Int, segment: Int, into buffer: inout [UInt8]) {
        try? messages[index].encoder?.writePacket(index: segment, into: &buffer)
    }

    /// A lost segment of a checked message may go again as one implicit packet when the receiver will find it:
    /// it is among the first two unacknowledged segments with its Q (the receiver's missing ones are a subset).
    private func canResendImplicitly(at index: Int, segment: Int, packetSize: Int) -> Bool {
        let message = messages[index]
        guard message.isChecked, let encoder = message.encoder, segment > 0, packetSize >= encoder.packetSize else {
            return false
        }
        var before = 0
        var scanned = 0
        var unacked = message.acked.firstMissing()
        while unacked < segment {
            if unacked & 7 == segment & 7 {
                before += 1
                if before >= 2 { return false }
            }
            scanned += 1
            if scanned >= 64 { return false }
            unacked = message.acked.firstMissing(from: unacked + 1)
        }
        return unacked == segment
    }

    /// Writes stream bytes from the current piece on as an explicit-offset packet (PROTOCOL.md 3.2): it runs on
    /// into the following segments while they are due too (queued retransmissions or, when sending first
    /// transmissions explicitly, unsent segments).
    private mutating func writeExplicitPiece(
        at index: Int, into buffer: inout [UInt8], packetSize: Int, now: Duration, retransmission: Bool = true
    ) {
        if messages[index].piece == nil, let next = messages[index].retransmitQueue.popFirst() {
            messages[index].queuedForRetransmit.remove(next)
            messages[index].piece = (next, 0)
        }
        guard let (segment, offset) = messages[index].piece, let encoder = messages[index].encoder else { return }
        let layout = encoder.cut
        let streamOffset = layout.range(of: segment).lowerBound + offset
        // Explicit-offset packets always carry the check: a corrupted offset would misplace bytes far away.
        let limit = streamOffset + encoder.explicitCapacity(fromStreamOffset: streamOffset, packetSize: packetSize)
        var current = segment
        var end = min(layout.range(of: current).upperBound, limit)
        while end == layout.range(of: current).upperBound, end < limit {
            if messages[index].retransmitQueue.first == current + 1 {
                messages[index].retransmitQueue.removeFirst()
                messages[index].queuedForRetransmit.remove(current + 1)
            } else if !retransmission, messages[index].nextUnsent == current + 1,
                current + 1 < layout.count
            {
                messages[index].nextUnsent += 1
            } else {
                break
            }
            current += 1
            end = min(layout.range(of: current).upperBound, limit)
        }
        let currentRange = layout.range(of: current)
        messages[index].piece = end < currentRange.upperBound ? (current, end - currentRange.lowerBound) : nil
        encoder.writePacket(streamRange: streamOffset ..< end, sequence: segment, explicitOffset: true, into: &buffer)
        for segment in segment ... current {
            recordFlight(at: index, segment: segment, retransmission: retransmission, now: now)
        }
    }

    private mutating func recordFlight(at index: Int, segment: Int, retransmission: Bool, now: Duration) {
        sequence += 1
        messages[index].flights.append(
            Flight(segment: segment, sequence: sequence, sentAt: now, isRetransmission: retransmission))
        inFlight += 1
        sentSegments += 1
        if retransmission {
            retransmittedSegments += 1
            messages[index].mayHaveLateCopies = true
        }
        if sentSegments > 1 << 14 {
            sentSegments /= 2
            lostSegments /= 2
        }
        if messages[index].timerAt == nil { messages[index].timerAt = now + roundTrip.timeout() }
    }
}
