import DequeModule
import Framing

/// One packet handed to the link and not yet confirmed: which segment, when, and in which order.
struct Flight: Sendable {
    var segment: Int
    var sequence: UInt64
    var sentAt: Duration
    var isRetransmission: Bool
}

/// The sender's state of one submitted message.
struct OutgoingMessage: Sendable {
    enum Phase: Sendable, Equatable {
        /// Submitted, no packet sent yet.
        case queued
        /// Sending and retransmitting.
        case sending
        /// After a reconnect or timeout: waiting for the answer to a query before sending data again.
        case resyncing
        /// The receiver had no room (`busy`); waiting for `ready`.
        case parked
        /// Acknowledged as a request; waiting for the response.
        case awaitingResponse
        /// Abandoned (deadline or cancellation): telling the receiver with `cancel` until it confirms.
        case cancelling
    }

    let submission: SubmissionID
    let options: SendOptions
    var flags: MessageFlags
    let correlationID: UInt32?
    /// Body as carried (deflated if that was smaller); Framing's encoder adds the CRC-32 trailer.
    let body: [UInt8]

    var phase = Phase.queued
    var messageID: UInt32 = 0
    var channel = 0
    /// Framing's encoder for the message as started: its cut at the Start's packet size `P0` names the
    /// segments (PROTOCOL.md 3.2); it writes every packet of the message.
    var encoder: MsgPipeEncoder<[UInt8]>?
    var acked = SegmentSet(capacity: 0)
    var nextUnsent = 0
    var retransmitQueue = Deque<Int>()
    var queuedForRetransmit = SegmentSet(capacity: 0)
    var piece: (segment: Int, offset: Int)?
    var flights = Deque<Flight>()
    var highestAckedSequence: UInt64 = 0
    var querySequence: UInt64?
    var queryPending = false
    var cancelPending = false
    var startResendPending = false
    var heardFromReceiver = false
    /// First transmissions still to send with an explicit index (after a reconnect or a timeout).
    var explicitBudget = 0
    var timerAt: Duration?
    var timeoutsWithoutProgress = 0

    init(submission: SubmissionID, options: SendOptions, body: [UInt8], flags: MessageFlags) {
        self.submission = submission
        self.options = options
        self.flags = flags
        if case let .response(to: id) = options.kind { correlationID = id } else { correlationID = nil }
        self.body = body
    }

    /// Body plus CRC-32 trailer.
    var streamCount: Int { body.count + 4 }
    var isStarted: Bool { phase != .queued }
    var isChecked: Bool { flags.contains(.checked) }
    var firstPassDone: Bool { encoder.map { nextUnsent >= $0.packetCount } ?? false }
    /// True while the message holds a channel at the receiver.
    var holdsChannel: Bool { phase == .sending || phase == .resyncing || phase == .parked || phase == .cancelling }

    /// Forgets everything the receiver acknowledged: the message is sent again from its Start.
    mutating func resetTransmission() {
        guard let encoder else { return }
        acked = SegmentSet(capacity: encoder.packetCount)
        queuedForRetransmit = SegmentSet(capacity: encoder.packetCount)
        retransmitQueue.removeAll()
        piece = nil
        nextUnsent = 0
        highestAckedSequence = 0
        querySequence = nil
        startResendPending = false
        heardFromReceiver = false
        explicitBudget = 0
    }

    mutating func enqueueRetransmit(_ segment: Int) {
        if segment == 0 {
            startResendPending = true
        } else if !acked.contains(segment), queuedForRetransmit.insert(segment) {
            retransmitQueue.append(segment)
        }
    }
}
