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
    /// A resumed session's message the receiver may hold part of from the sender's earlier process: its first
    /// pass goes with explicit offsets until the receiver's first acknowledgement says what it holds.
    var mayBeKnownToReceiver = false
    /// Some packet of it went more than once (a retransmission, a restart) or was in flight when a connection
    /// dropped: a copy may still be on the way after it completes, so its channel rests before reuse.
    var mayHaveLateCopies = false
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

extension OutgoingMessage {
    /// What an acknowledgement changed (``apply(_:segments:now:reorderTolerance:)``).
    struct AcknowledgementOutcome {
        /// New segments were confirmed.
        var progressed = false
        /// A round-trip sample from the latest confirmed first transmission.
        var sample: Duration?
        /// Flights that left the window (confirmed or declared lost).
        var flightsDone = 0
        /// Segments declared lost and queued for retransmission.
        var lost = 0
    }

    /// Applies an acknowledgement in place, allocating nothing: marks the segments it reports held, drops
    /// confirmed flights and queues for retransmission those it reports missing although a packet sent more
    /// than `reorderTolerance` packets later arrived, or sent before the query it answers (PROTOCOL.md 3.5).
    mutating func apply(
        _ ack: Acknowledgement, segments: Int, now: Duration, reorderTolerance: UInt64
    ) -> AcknowledgementOutcome {
        var outcome = AcknowledgementOutcome()
        heardFromReceiver = true
        let cumulative = min(Int(ack.cumulative), segments)
        var segment = acked.firstMissing()
        while segment < cumulative {
            if acked.insert(segment) { outcome.progressed = true }
            segment = acked.firstMissing(from: segment + 1)
        }
        for bit in 0 ..< ack.bitmap.count * 8 where ack.isHeldInBitmap(Int(ack.bitmapStart) + bit) {
            let held = Int(ack.bitmapStart) + bit
            guard held < segments else { break }
            if acked.insert(held) { outcome.progressed = true }
        }
        // Drop confirmed flights, learn the RTT from first transmissions (compacting the queue in place).
        let before = flights.count
        var kept = 0
        for read in 0 ..< flights.count {
            let flight = flights[read]
            if acked.contains(flight.segment) {
                highestAckedSequence = max(highestAckedSequence, flight.sequence)
                if !flight.isRetransmission { outcome.sample = now - flight.sentAt }
            } else {
                flights[kept] = flight
                kept += 1
            }
        }
        flights.removeLast(flights.count - kept)
        // Declare lost what the receiver reports missing although later packets arrived.
        kept = 0
        for read in 0 ..< flights.count {
            let flight = flights[read]
            let overtaken = flight.sequence + reorderTolerance < highestAckedSequence
            let beforeQuery = querySequence.map { flight.sequence <= $0 } ?? false
            if ack.reportsMissing(flight.segment) && (overtaken || beforeQuery) {
                enqueueRetransmit(flight.segment)
                outcome.lost += 1
            } else {
                flights[kept] = flight
                kept += 1
            }
        }
        flights.removeLast(flights.count - kept)
        outcome.flightsDone = before - flights.count
        return outcome
    }

    /// After a resume's first answer: every segment sent before and neither confirmed nor in flight goes again.
    mutating func requeueUnconfirmed() {
        phase = .sending
        piece = nil
        for missing in 0 ..< nextUnsent
        where !acked.contains(missing) && !flights.contains(where: { $0.segment == missing }) {
            enqueueRetransmit(missing)
        }
    }
}
