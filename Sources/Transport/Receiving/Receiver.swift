import DequeModule
import Framing

/// The receiving half of a ``TransportEndpoint``: reassembly, acknowledgements, in-order exactly-once
/// delivery, admission within memory bounds.
struct Receiver: Sendable {
    enum ChannelState: Sendable, Equatable {
        case idle
        case open(UInt32)
        case refused(UInt32)
        case failed(UInt32)
    }

    /// How a message id ended: delivered, or skipped with the answer to repeat to the sender.
    enum Resolution: Sendable {
        case delivered(ReceivedMessage)
        case skipped(TransportControl)
    }

    /// Ids further ahead of the next one to deliver are ignored (they cannot come from a correct sender).
    static let idWindow: UInt32 = 4096
    static let controlQueueLimit = 64
    static let rememberedOutcomes = 64

    let configuration: EndpointConfiguration
    private(set) var channels = [ChannelState](repeating: .idle, count: 4)
    private(set) var open: [IncomingMessage] = []
    private(set) var nextDeliveryID: UInt32 = 1
    private var ahead: [UInt32: Resolution] = [:]
    private var aheadHeld = 0
    private var outcomes: [UInt32: TransportControl] = [:]
    private var outcomeOrder = Deque<UInt32>()
    private var controls = Deque<TransportControl>()
    private(set) var output = Deque<ReceivedMessage>()
    private(set) var applicationQueue = Deque<ReceivedMessage>()
    private(set) var bufferedBytes = 0
    private var busyOutstanding = false
    private var startMissingCounts = [0, 0, 0, 0]
    private(set) var failures = Deque<TransportError>()
    /// Peer sender sessions replaced by another one's hello, not yet reported: (previous, current).
    private var sessionChanges = Deque<(previous: UInt64, current: UInt64)>()
    /// With ``EndpointConfiguration/holdsAcknowledgements``: delivered messages whose `complete` waits for
    /// the application's acceptance, keyed by sender session and id; the bytes of those the application
    /// took stay counted in ``bufferedBytes``.
    private var unaccepted: [HeldKey: Held] = [:]
    private var unacceptedTaken = 0

    struct HeldKey: Hashable, Sendable {
        var session: UInt64
        var id: UInt32
    }

    struct Held: Sendable {
        /// The body's size once the application took it (then counted in ``bufferedBytes``); nil before.
        var takenBytes: Int?
    }
    var packetSize = Sender.minimumPacketSize
    /// The session of the sender whose messages this receiver numbers (PROTOCOL.md 3.9); nil before a hello.
    private(set) var peerSession: UInt64?
    /// A hello arrived on the current connection: until then data, queries and cancels are ignored, since
    /// they may come from a sender other than the last one (3.9).
    private(set) var greetedOnConnection = false

    init(configuration: EndpointConfiguration) {
        self.configuration = configuration
    }

    var messagesHeld: Int { open.count + aheadHeld + applicationQueue.count + unacceptedTaken }

    /// Ids completed out of order, and ids delivered and not accepted yet, in order (for ``TransportEndpoint/debugSummary``).
    var aheadIDs: [UInt32] { ahead.keys.sorted() }
    var unacceptedIDs: [UInt32] { unaccepted.keys.map(\.id).sorted() }

    /// Delivered messages waiting for the application's acceptance.
    var messagesAwaitingAcceptance: Int { unaccepted.count }

    /// The next message in order is admitted regardless of the limits once the application took and
    /// accepted everything delivered (so out-of-order completions cannot deadlock the receiver). Messages
    /// completed out of order wait for this one, not for the application: they do not count.
    private func mustAdmit(_ id: UInt32) -> Bool {
        id == nextDeliveryID && applicationQueue.isEmpty
            && unaccepted.keys.allSatisfy { $0.session == peerSession && ahead[$0.id] != nil }
    }

    private func isUnaccepted(_ id: UInt32) -> Bool {
        guard let session = peerSession else { return false }
        return unaccepted[HeldKey(session: session, id: id)] != nil
    }

    /// What a message in progress counts against ``EndpointConfiguration/maximumBufferedBytes``: its stream, or
    /// for a deflated one the most its body may inflate to, since it is held inflated once complete (found by
    /// fuzzing: counted at its size on the wire, several deflated messages swelled far beyond the limit).
    private func reservation(_ header: MessageHeader) -> Int {
        header.flags.contains(.deflate) ? max(Int(header.length), configuration.maximumMessageSize) + 4 : Int(header.length) + 4
    }

    private func hasRoom(for streamLength: Int) -> Bool {
        messagesHeld < configuration.maximumMessagesInProgress
            && bufferedBytes + streamLength <= configuration.maximumBufferedBytes
    }

    // MARK: Application side

    mutating func popOutput() -> ReceivedMessage? { output.popFirst() }
    mutating func popFailure() -> TransportError? { failures.popFirst() }
    mutating func popSessionChange() -> (previous: UInt64, current: UInt64)? { sessionChanges.popFirst() }

    mutating func enqueueForApplication(_ message: ReceivedMessage) {
        applicationQueue.append(message)
        bufferedBytes += message.body.count
    }

    /// The next delivered message for the application; taking it frees room (and may send `ready`).
    mutating func takeMessage() -> ReceivedMessage? {
        guard let message = applicationQueue.popFirst() else { return nil }
        let key = HeldKey(session: message.senderSession, id: message.messageID)
        if unaccepted[key] != nil {
            unaccepted[key] = Held(takenBytes: message.body.count)  // stays counted until accepted
            unacceptedTaken += 1
            return message
        }
        bufferedBytes -= message.body.count
        if busyOutstanding && (hasRoom(for: 0) || (applicationQueue.isEmpty && unaccepted.isEmpty)) {
            busyOutstanding = false
            enqueue(.ready)
        }
        return message
    }

    /// The application accepted a message it took: its `complete` goes out now (if its sender session is
    /// still the current one) and its bytes are freed. Unknown or already accepted messages are ignored.
    mutating func accept(session: UInt64, messageID id: UInt32) {
        settle(session: session, messageID: id, answer: .complete(messageID: id))
    }

    /// The application refused a held message: it leaves the books and the sender learns `reason`.
    mutating func reject(session: UInt64, messageID id: UInt32, reason: RejectionReason) {
        settle(session: session, messageID: id, answer: .rejected(messageID: id, reason: reason))
    }

    /// A held message leaves the books (its memory freed); its sender gets `answer` if its session is the
    /// current one; a receiver that said busy says ready once there is room.
    private mutating func settle(session: UInt64, messageID id: UInt32, answer: TransportControl) {
        guard let held = unaccepted.removeValue(forKey: HeldKey(session: session, id: id)) else { return }
        if let bytes = held.takenBytes {
            bufferedBytes -= bytes
            unacceptedTaken -= 1
        }
        if session == peerSession { enqueue(answer) }
        if busyOutstanding && (hasRoom(for: 0) || (applicationQueue.isEmpty && unaccepted.isEmpty)) {
            busyOutstanding = false
            enqueue(.ready)
        }
    }

    // MARK: Packets

    /// The link connected or disconnected: the next connection starts without a hello.
    mutating func connectionChanged() { greetedOnConnection = false }

    mutating func receiveData(_ packet: ArraySlice<UInt8>, now: Duration) {
        guard greetedOnConnection else { return }
        // Framing parses the packet; a Start whose message header does not decode counts as corruption (3.3).
        let decoded: MsgPipePacket
        do {
            decoded = try MsgPipePacket(decoding: packet)
        } catch {
            // A Start (header byte, version/kind, flags, id, length: at least 5 bytes) whose rest is broken.
            var reader = ByteReader(packet)
            if packet.count >= 5, (try? PacketHeader(decoding: &reader))?.isStart == true { noteCorruption() }
            return
        }
        switch decoded {
        case let .start(header, message, data):
            receiveStart(packet, header: header, message: message, data: data, now: now)
        case let .continuation(header, data):
            receiveSegment(packet, header: header, data: data, now: now)
        case .control:
            break
        }
    }

    private mutating func receiveStart(
        _ packet: ArraySlice<UInt8>, header packetHeader: PacketHeader, message header: MessageHeader,
        data checkedData: ArraySlice<UInt8>, now: Duration
    ) {
        guard packetHeader.sequence == 0 else { return }
        // The Start of a reliable message always ends with the check (PROTOCOL.md 3.2).
        guard header.flags.contains(.reliable), checkedData.count >= PacketCheck.count,
            PacketCheck.verifiesData(packet, messageID: header.messageID, streamOffset: 0)
        else {
            noteCorruption()
            return
        }
        let data = checkedData.dropLast(PacketCheck.count)
        let id = header.messageID
        let channel = Int(packetHeader.channel)
        let checked = header.flags.contains(.checked)
        if let answer = resolvedAnswer(id) {
            enqueue(answer)
            return
        }
        if let index = openIndex(id) {
            if checked && !open[index].isChecked {
                dropOpen(at: index)
            } else if open[index].channel != channel {
                // The session's sender in a new process (a resumed session, PROTOCOL.md 3.9) may start the id on
                // another channel: what arrived moves there when the message is cut the same way, else it restarts.
                if MsgPipeCut(header: header, packetSize: packet.count) == open[index].cut {
                    moveOpen(id, to: channel)
                    if let moved = openIndex(id) { open[moved].stream.store(segment: 0, data: data) }
                    return
                }
                dropOpen(at: index)
            } else {
                open[index].stream.store(segment: 0, data: data)
                return
            }
        }
        guard id &- nextDeliveryID < Self.idWindow else { return }
        switch channels[channel] {
        case let .open(other):
            if let index = openIndex(other) { dropOpen(at: index) }
        case let .failed(failed) where failed == id && !checked:
            return
        default:
            break
        }
        guard Int(header.length) <= configuration.maximumMessageSize else {
            channels[channel] = .idle
            resolve(id, .skipped(.rejected(messageID: id, reason: .tooLarge)))
            enqueue(.rejected(messageID: id, reason: .tooLarge))
            return
        }
        guard hasRoom(for: reservation(header)) || mustAdmit(id) else {
            channels[channel] = .refused(id)
            busyOutstanding = true
            enqueue(.busy(messageID: id))
            return
        }
        // A multi-packet message's Start is exactly P0 long: its length gives the cut (PROTOCOL.md 3.2).
        guard let cut = MsgPipeCut(header: header, packetSize: packet.count),
            cut.count == 1 ? packetHeader.isEnd : !packetHeader.isEnd,
            data.count == cut.range(of: 0).count
        else { return }
        var message = IncomingMessage(header: header, channel: channel, cut: cut)
        message.stream.store(segment: 0, data: data)
        open.append(message)
        bufferedBytes += reservation(header)
        channels[channel] = .open(id)
        startMissingCounts[channel] = 0
        finishIfComplete(at: open.count - 1, now: now)
    }

    private mutating func receiveSegment(
        _ packet: ArraySlice<UInt8>, header: PacketHeader, data body: ArraySlice<UInt8>, now: Duration
    ) {
        let channel = Int(header.channel)
        guard case let .open(id) = channels[channel], let index = openIndex(id) else {
            if channels[channel] == .idle {
                startMissingCounts[channel] += 1
                if startMissingCounts[channel] % 8 == 1 { enqueue(.startMissing(channel: channel)) }
            }
            return
        }
        // Mutated in place (`open[index]`): a local copy of the message would share its stream buffer, and
        // the first write would copy the whole stream for every packet (quadratic in the message size).
        let previousHighest = open[index].highest
        let cut = open[index].cut
        if let rawOffset = header.explicitOffset {
            // Explicit-offset packets always carry the check (PROTOCOL.md 3.3).
            let offset = Int(rawOffset)
            guard body.count > PacketCheck.count,
                PacketCheck.verifiesData(packet, messageID: id, streamOffset: offset)
            else {
                noteCorruption()
                return
            }
            let data = body.dropLast(PacketCheck.count)
            guard offset + data.count <= cut.streamCount,
                header.isEnd == (offset + data.count == cut.streamCount)
            else { return }
            // The bytes may run over several segments.
            open[index].stream.store(fromStreamOffset: offset, data: data)
        } else {
            let checkSize = cut.checks.implicitCount
            guard body.count > checkSize else { return }
            let data = body.dropLast(checkSize)
            guard let segment = placeImplicit(packet, data: data, header: header, message: open[index]) else { return }
            open[index].stream.store(segment: segment, data: data)
        }
        open[index].packetsSinceAcknowledgement += 1
        if open[index].highest > previousHighest + 1 { open[index].acknowledgeNow = true }
        if open[index].acknowledgementDueAt == nil {
            open[index].acknowledgementDueAt = now + configuration.acknowledgementDelay
        }
        finishIfComplete(at: index, now: now)
    }

    /// The segment index of an implicitly indexed packet (PROTOCOL.md 3.2), or nil when it fits nowhere.
    private func placeImplicit(
        _ packet: ArraySlice<UInt8>, data: ArraySlice<UInt8>, header: PacketHeader, message: IncomingMessage
    ) -> Int? {
        let cut = message.cut
        let last = cut.count - 1
        func fits(_ segment: Int) -> Bool {
            guard segment >= 1, segment <= last, segment & 7 == Int(header.sequence),
                (segment == last) == header.isEnd, cut.range(of: segment).count == data.count
            else { return false }
            return !message.isChecked
                || PacketCheck.verifiesData(
                    packet, messageID: message.header.messageID, streamOffset: cut.range(of: segment).lowerBound)
        }
        if header.isEnd { return fits(last) ? last : nil }
        let next = message.highest + 1
        let distance = (Int(header.sequence) - next) & 7
        if !message.isChecked {
            let segment = distance <= 5 ? next + distance : next + distance - 8
            return fits(segment) ? segment : nil
        }
        // Checked: the check confirms the index. Only the three nearest candidates are tried: every further
        // candidate would add a 2^-16 chance of taking a corrupted packet for a missing segment.
        let forward = next + distance
        if fits(forward) { return forward }
        if fits(forward - 8) { return forward - 8 }
        if fits(forward + 8) { return forward + 8 }
        // A retransmission sent implicitly (PROTOCOL.md 3.5): one of the first two missing segments with this Q.
        var found = 0
        var scanned = 0
        var missing = message.held.firstMissing()
        while missing <= last, found < 2, scanned < 64 {
            if missing & 7 == Int(header.sequence) {
                if fits(missing) { return missing }
                found += 1
            }
            scanned += 1
            missing = message.held.firstMissing(from: missing + 1)
        }
        return nil
    }

    private mutating func finishIfComplete(at index: Int, now: Duration) {
        guard open[index].isComplete else { return }
        let message = open.remove(at: index)
        bufferedBytes -= reservation(message.header)
        let id = message.header.messageID
        guard var body = message.stream.verifiedBody() else {
            channels[message.channel] = .failed(id)
            enqueue(.checkFailed(messageID: id))
            return
        }
        channels[message.channel] = .idle
        if message.header.flags.contains(.deflate) {
            guard let inflated = Deflate.decompress(body[...], limit: configuration.maximumMessageSize) else {
                failures.append(.inflateFailed(messageID: id, limit: configuration.maximumMessageSize))
                resolve(id, .skipped(.rejected(messageID: id, reason: .inflateFailed)))
                enqueue(.rejected(messageID: id, reason: .inflateFailed))
                return
            }
            body = inflated
        }
        let session = peerSession ?? 0
        if configuration.holdsAcknowledgements && message.header.correlationID == nil {
            unaccepted[HeldKey(session: session, id: id)] = Held()
        } else {
            enqueue(.complete(messageID: id))
        }
        resolve(
            id,
            .delivered(
                ReceivedMessage(
                    messageID: id, body: body, isRequest: message.header.flags.contains(.request),
                    correlationID: message.header.correlationID, senderSession: session)))
    }

    /// A packet failed its check: the link corrupts, so unchecked messages in progress would fail their CRC.
    /// They are dropped now and the sender is asked to restart them checked (PROTOCOL.md 3.3).
    private mutating func noteCorruption() {
        for index in open.indices.reversed() where !open[index].isChecked {
            let id = open[index].header.messageID
            let channel = open[index].channel
            dropOpen(at: index)
            channels[channel] = .failed(id)
            enqueue(.checkFailed(messageID: id))
        }
    }

    // MARK: Ordering and duplicates

    private mutating func resolve(_ id: UInt32, _ resolution: Resolution) {
        guard id == nextDeliveryID else {
            guard ahead[id] == nil else { return }
            ahead[id] = resolution
            if case let .delivered(message) = resolution {
                aheadHeld += 1
                bufferedBytes += message.body.count
            }
            return
        }
        apply(id, resolution)
        nextDeliveryID &+= 1
        while let next = ahead.removeValue(forKey: nextDeliveryID) {
            if case let .delivered(message) = next {
                aheadHeld -= 1
                bufferedBytes -= message.body.count
            }
            apply(nextDeliveryID, next)
            nextDeliveryID &+= 1
        }
    }

    private mutating func apply(_ id: UInt32, _ resolution: Resolution) {
        switch resolution {
        case let .delivered(message):
            output.append(message)
        case let .skipped(answer):
            outcomes[id] = answer
            outcomeOrder.append(id)
            if outcomeOrder.count > Self.rememberedOutcomes, let oldest = outcomeOrder.popFirst() {
                outcomes[oldest] = nil
            }
        }
    }

    /// What to tell a sender about an id that is finished here; nil if it is not.
    private func resolvedAnswer(_ id: UInt32) -> TransportControl? {
        // Delivered but not accepted yet: the sender waits, as for a full receiver.
        if isUnaccepted(id) { return .busy(messageID: id) }
        if nextDeliveryID &- id &- 1 < UInt32.max / 2 {  // id < nextDeliveryID (wrapping)
            return outcomes[id] ?? .complete(messageID: id)
        }
        switch ahead[id] {
        case .delivered: return .complete(messageID: id)
        case let .skipped(answer): return answer
        case nil: return nil
        }
    }

    private func openIndex(_ id: UInt32) -> Int? { open.firstIndex { $0.header.messageID == id } }

    /// Moves open message `id` to `channel`, dropping another message open there.
    private mutating func moveOpen(_ id: UInt32, to channel: Int) {
        if case let .open(other) = channels[channel], other != id, let index = openIndex(other) { dropOpen(at: index) }
        guard let index = openIndex(id) else { return }
        let old = open[index].channel
        if channels[old] == .open(id) { channels[old] = .idle }
        open[index].channel = channel
        channels[channel] = .open(id)
        startMissingCounts[channel] = 0
    }

    private mutating func dropOpen(at index: Int) {
        let message = open.remove(at: index)
        bufferedBytes -= reservation(message.header)
        channels[message.channel] = .idle
    }

    // MARK: Control packets from the sender

    /// A sender's `hello` (PROTOCOL.md 3.9). A new session is a new stream of message ids: what the previous
    /// session left partial is dropped (reported), what it completed out of order is delivered, and ids
    /// start at the sender's first id. The same session moves on to its first id (ids it gave up on are
    /// skipped, so they cannot block in-order delivery). Answered with `welcome`.
    mutating func handleHello(session: UInt64, firstMessageID: UInt32) {
        greetedOnConnection = true
        if peerSession != session {
            if let previous = peerSession {
                endSession()
                // Reported once per change; a peer that keeps changing is bounded by the link's own pace.
                if sessionChanges.count >= Self.controlQueueLimit { sessionChanges.removeFirst() }
                sessionChanges.append((previous, session))
            }
            peerSession = session
            nextDeliveryID = firstMessageID
        } else {
            var skipped: UInt32 = 0
            while nextDeliveryID != firstMessageID, firstMessageID &- nextDeliveryID < Self.idWindow,
                skipped < Self.idWindow
            {
                let id = nextDeliveryID
                if let index = openIndex(id) {
                    failures.append(.senderSessionEnded(messageID: id, length: Int(open[index].header.length)))
                    dropOpen(at: index)
                }
                resolve(id, ahead[id] ?? .skipped(.cancelled(messageID: id)))
                skipped += 1
            }
        }
        // The welcome goes before anything held for this session (PROTOCOL.md 3.9).
        controls.removeAll { $0 == .welcome(session: session) }
        controls.prepend(.welcome(session: session))
    }

    /// Forgets the previous sender session: its partial messages are dropped and reported, its messages
    /// completed out of order (already acknowledged) are delivered in id order, its answers are forgotten.
    private mutating func endSession() {
        for index in open.indices.reversed() {
            failures.append(
                .senderSessionEnded(messageID: open[index].header.messageID, length: Int(open[index].header.length)))
            dropOpen(at: index)
        }
        let order = ahead.keys.sorted { ($0 &- nextDeliveryID) < ($1 &- nextDeliveryID) }
        for id in order {
            guard case let .delivered(message) = ahead.removeValue(forKey: id) else { continue }
            aheadHeld -= 1
            bufferedBytes -= message.body.count
            output.append(message)
        }
        ahead.removeAll()
        outcomes.removeAll()
        outcomeOrder.removeAll()
        controls.removeAll()
        channels = [ChannelState](repeating: .idle, count: channels.count)
        startMissingCounts = [0, 0, 0, 0]
    }

    mutating func handleQuery(_ id: UInt32) {
        guard greetedOnConnection else { return }
        if let index = openIndex(id) {
            open[index].acknowledgeNow = true
        } else if let answer = resolvedAnswer(id) {
            enqueue(answer)
        } else if let channel = channels.firstIndex(of: .refused(id)) {
            if hasRoom(for: 0) || mustAdmit(id) {
                // Room now: the sender restarts the message from its Start.
                channels[channel] = .idle
                enqueue(.unknown(messageID: id))
            } else {
                enqueue(.busy(messageID: id))
            }
        } else if channels.contains(.failed(id)) {
            enqueue(.checkFailed(messageID: id))
        } else {
            enqueue(.unknown(messageID: id))
        }
    }

    mutating func handleCancel(_ id: UInt32) {
        guard greetedOnConnection else { return }
        // The sender gave up on a message delivered and not accepted yet: it stops asking; the application
        // may still accept it (its `complete` is then ignored).
        if isUnaccepted(id) {
            enqueue(.cancelled(messageID: id))
            return
        }
        if let answer = resolvedAnswer(id) {
            enqueue(answer)
            return
        }
        if let index = openIndex(id) { dropOpen(at: index) }
        for channel in channels.indices where channels[channel] == .refused(id) || channels[channel] == .failed(id) {
            channels[channel] = .idle
        }
        if id &- nextDeliveryID < Self.idWindow { resolve(id, .skipped(.cancelled(messageID: id))) }
        enqueue(.cancelled(messageID: id))
    }

    private mutating func enqueue(_ control: TransportControl) {
        guard controls.count < Self.controlQueueLimit, !controls.contains(control) else { return }
        controls.append(control)
    }

    // MARK: Output and timers

    /// Writes the next control packet or due acknowledgement; false when there is none. Nothing goes on a
    /// connection before its session is established (the hello arrived, the welcome goes first): what came
    /// due meanwhile may belong to the previous sender and is held (PROTOCOL.md 3.9).
    mutating func writeControl(into buffer: inout [UInt8]) -> Bool {
        guard greetedOnConnection else { return false }
        if let control = controls.popFirst() {
            control.encode(into: &buffer)
            return true
        }
        for index in open.indices
        where open[index].acknowledgeNow || open[index].packetsSinceAcknowledgement >= configuration.acknowledgeEvery {
            open[index].writeAcknowledgement(into: &buffer, packetSize: packetSize)
            return true
        }
        return false
    }

    /// True while control packets wait to be written: acknowledgements of whole messages (`complete`),
    /// rejections and the other answers to the sender.
    var owesControls: Bool { !controls.isEmpty }

    var nextTimeout: Duration? {
        var earliest: Duration?
        for message in open {
            if let due = message.acknowledgementDueAt { earliest = min(earliest ?? due, due) }
        }
        return earliest
    }

    mutating func handleTimeout(now: Duration) {
        for index in open.indices {
            if let due = open[index].acknowledgementDueAt, due <= now {
                open[index].acknowledgeNow = true
                open[index].acknowledgementDueAt = nil
            }
        }
    }
}
