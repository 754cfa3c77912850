/// Reassembles msgpipe data messages from packets (PROTOCOL 1.4): up to four interleaved channels,
/// duplicates ignored, length and CRC-32 checked, every limit enforced before buffering.
///
/// Each message is appended into one buffer reserved at its announced length; the CRC is updated over
/// 32 KiB stretches as bytes arrive. Control packets are surfaced as ``FrameEvent/control(_:)``. Packets must
/// arrive in order (as on GATT); explicit-offset packets resume a message from what was received.
public struct MsgPipeReassembler: FrameDecoder {
    /// The bounds in force.
    public let limits: ReassemblyLimits
    private var channels = [Channel](repeating: Channel(), count: 4)
    /// No message can go stale before this time (a lower bound, so checks between packets stay cheap).
    private var staleCheckTime = Duration.zero

    /// A reassembler with no message in progress.
    public init(limits: ReassemblyLimits = ReassemblyLimits()) {
        self.limits = limits
    }

    /// Messages currently being assembled.
    public var messagesInProgress: Int { channels.reduce(0) { $0 + ($1.phase == .assembling ? 1 : 0) } }
    /// Bytes reserved for messages in progress (announced length plus trailer each).
    public var bufferedBytes: Int {
        channels.reduce(0) { $0 + ($1.phase == .assembling ? $1.streamCount : 0) }
    }
    /// When the earliest partial message goes stale, if any is in progress.
    public var nextStaleDeadline: Duration? {
        channels.lazy.filter { $0.phase == .assembling }.map { $0.lastActivity + limits.staleTimeout }.min()
    }

    /// The message being assembled on `channel` and how many of its stream bytes arrived (for resume: the
    /// sender continues from that stream offset with explicit-offset packets); nil when none is.
    public func progress(onChannel channel: UInt8) -> MessageProgress? {
        guard channel < 4, channels[Int(channel)].phase == .assembling else { return nil }
        let state = channels[Int(channel)]
        return MessageProgress(header: state.header, channel: channel, receivedStreamBytes: state.body.count)
    }

    public mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration, emit: (FrameEvent) -> Void) {
        expireStaleMessages(now: now, emit: emit)
        // Packet bytes are appended straight from the caller's storage: no slice copies per packet.
        packet.withUnsafeBufferPointer { bytes in receive(packet, bytes: bytes, now: now, emit: emit) }
    }

    private mutating func receive(
        _ packet: ArraySlice<UInt8>, bytes: UnsafeBufferPointer<UInt8>, now: Duration, emit: (FrameEvent) -> Void
    ) {
        /// The bytes of `packet` from `data`'s start on (`data` is a slice of `packet`).
        func buffer(from data: ArraySlice<UInt8>) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: bytes[(data.startIndex - packet.startIndex)...])
        }
        if let byte = bytes.first, byte & (PacketHeader.startBit | PacketHeader.explicitBit) == 0 {
            // The common case, a plain continuation packet: one header byte, then data.
            let header = PacketHeader(byte: byte)
            return continuation(header, data: UnsafeBufferPointer(rebasing: bytes[1...]), now: now, emit: emit)
        }
        let decoded: MsgPipePacket
        do {
            decoded = try MsgPipePacket(decoding: packet)
        } catch {
            emit(.failure(error))
            return
        }
        switch decoded {
        case let .control(control):
            emit(.control(control))
        case let .start(packetHeader, messageHeader, data):
            let fingerprint = fingerprint(bytes)
            start(packetHeader, messageHeader, data: buffer(from: data), fingerprint: fingerprint, now: now, emit: emit)
        case let .continuation(packetHeader, data):
            continuation(packetHeader, data: buffer(from: data), now: now, emit: emit)
        }
    }

    public mutating func expireStaleMessages(now: Duration, emit: (FrameEvent) -> Void) {
        guard now > staleCheckTime else { return }
        // Activity only moves forward, so the earliest deadline found now stays a valid lower bound.
        staleCheckTime = now + limits.staleTimeout
        defer {
            for channel in channels where channel.phase == .assembling {
                staleCheckTime = min(staleCheckTime, channel.lastActivity + limits.staleTimeout)
            }
        }
        for channel in channels.indices
        where channels[channel].phase == .assembling && now - channels[channel].lastActivity > limits.staleTimeout {
            let failure = FramingError.staleMessage(
                messageID: channels[channel].header.messageID, channel: UInt8(channel),
                receivedBytes: channels[channel].body.count)
            channels[channel].reset(to: .idle)
            emit(.failure(failure))
        }
    }

    public mutating func finish(emit: (FrameEvent) -> Void) {
        for channel in channels.indices {
            if channels[channel].phase == .assembling {
                emit(.failure(.incompleteMessage(
                    messageID: channels[channel].header.messageID, channel: UInt8(channel),
                    receivedBytes: channels[channel].body.count)))
            }
            channels[channel].reset(to: .idle)
        }
    }

    // MARK: Start packets

    private mutating func start(
        _ packetHeader: PacketHeader, _ header: MessageHeader, data: UnsafeBufferPointer<UInt8>,
        fingerprint startFingerprint: UInt64, now: Duration, emit: (FrameEvent) -> Void
    ) {
        let channel = Int(packetHeader.channel)
        let id = header.messageID
        switch channels[channel].phase {
        case .assembling:
            if channels[channel].header == header, channels[channel].packetsSinceStart == 0 { return }  // duplicate
            let failure = FramingError.messageInterrupted(
                messageID: channels[channel].header.messageID, channel: packetHeader.channel,
                receivedBytes: channels[channel].body.count)
            channels[channel].reset(to: .idle)
            emit(.failure(failure))
        case .idle where channels[channel].lastCompleted?.isDuplicateStart(id, startFingerprint) == true:
            return  // the Start packet of the message this channel just completed, again
        case .idle, .discarding:
            break
        }
        let streamCount = Int(header.length) + 4
        let failure: FramingError? =
            if !header.flags.isDisjoint(with: [.reliable, .checked]) {
                .checkedMessage(messageID: id)
            } else if Int(header.length) > limits.maximumMessageSize {
                .messageTooLarge(messageID: id, size: Int(header.length), limit: limits.maximumMessageSize)
            } else if messagesInProgress >= limits.maximumMessagesInProgress {
                .tooManyMessagesInProgress(messageID: id, limit: limits.maximumMessagesInProgress)
            } else if bufferedBytes + streamCount > limits.maximumBufferedBytes {
                .bufferedBytesExceeded(
                    messageID: id, needed: bufferedBytes + streamCount, limit: limits.maximumBufferedBytes)
            } else { nil }
        if let failure {
            return drop(channel, packetHeader, emit, failure)
        }
        channels[channel].begin(header, startFingerprint: startFingerprint, now: now)
        accept(packetHeader, data: data, channel: channel, emit: emit)
    }

    // MARK: Continuation packets

    private mutating func continuation(
        _ packetHeader: PacketHeader, data: UnsafeBufferPointer<UInt8>, now: Duration, emit: (FrameEvent) -> Void
    ) {
        let channel = Int(packetHeader.channel)
        switch channels[channel].phase {
        case .idle:
            if let lastCompleted = channels[channel].lastCompleted,
                lastCompleted.isDuplicate(packetHeader, dataCount: data.count)
            {
                return
            }
            emit(.failure(.packetOutsideMessage(channel: packetHeader.channel)))
        case .discarding:
            if packetHeader.isEnd { channels[channel].reset(to: .idle) }
        case .assembling:
            channels[channel].lastActivity = now
            let id = channels[channel].header.messageID
            let received = channels[channel].body.count
            var data = data
            if let offset = packetHeader.explicitOffset.map(Int.init) {
                if offset + data.count <= received { return }  // everything already here: a duplicate
                guard offset <= received else {
                    return drop(channel, packetHeader, emit, .missingPacket(
                        messageID: id, channel: packetHeader.channel,
                        detail: "stream offset \(offset), expected at most \(received)"))
                }
                data = UnsafeBufferPointer(rebasing: data[(received - offset)...])
            } else {
                let last = channels[channel].lastSequence
                if channels[channel].packetsSinceStart > 0, packetHeader.sequence == last { return }  // duplicate
                guard packetHeader.sequence == (last &+ 1) & 0x07 else {
                    return drop(channel, packetHeader, emit, .missingPacket(
                        messageID: id, channel: packetHeader.channel,
                        detail: "sequence \(packetHeader.sequence), expected \((last &+ 1) & 0x07)"))
                }
            }
            channels[channel].packetsSinceStart += 1
            accept(packetHeader, data: data, channel: channel, emit: emit)
        }
    }

    /// Drops the channel's message (its other packets are then ignored up to its End) and reports `failure`.
    private mutating func drop(
        _ channel: Int, _ packetHeader: PacketHeader, _ emit: (FrameEvent) -> Void, _ failure: FramingError
    ) {
        channels[channel].reset(to: packetHeader.isEnd ? .idle : .discarding)
        emit(.failure(failure))
    }

    /// Appends a packet's stream bytes and completes the message when its stream is whole.
    private mutating func accept(
        _ packetHeader: PacketHeader, data: UnsafeBufferPointer<UInt8>, channel: Int, emit: (FrameEvent) -> Void
    ) {
        let id = channels[channel].header.messageID
        let streamCount = channels[channel].streamCount
        let received = channels[channel].body.count + data.count
        guard received <= streamCount else {
            return drop(channel, packetHeader, emit, .streamOverrun(messageID: id, expected: streamCount))
        }
        channels[channel].append(data)
        channels[channel].lastSequence = packetHeader.sequence
        switch (received == streamCount, packetHeader.isEnd) {
        case (false, false):
            break
        case (false, true):
            drop(channel, packetHeader, emit, .endBeforeComplete(
                messageID: id, received: received, expected: streamCount))
        case (true, false):
            drop(channel, packetHeader, emit, .missingEndFlag(messageID: id))
        case (true, true):
            let (computed, trailer) = channels[channel].finishChecksum()
            let header = channels[channel].header
            var body = channels[channel].complete(lastSequence: packetHeader.sequence)
            guard trailer == computed else {
                emit(.failure(.crcMismatch(messageID: id, expected: trailer, actual: computed)))
                return
            }
            body.removeLast(4)
            emit(.message(FramedMessage(body: body, header: header, channel: UInt8(channel))))
        }
    }
}

/// One channel of a ``MsgPipeReassembler``, mutated in place (its buffer is never copied).
private struct Channel {
    enum Phase {
        /// No message in progress.
        case idle
        /// A message is being assembled.
        case assembling
        /// A message was dropped; its remaining packets are ignored until its End packet or a new Start.
        case discarding
    }

    /// The CRC is computed over stretches of this many received body bytes: zlib is far faster on large
    /// buffers than packet by packet, and the stretch is still in cache.
    static let checksumStretch = 1 << 15

    var phase = Phase.idle
    var header = MessageHeader(messageID: 0, length: 0)
    /// Stream bytes received (body, then trailer).
    var body: [UInt8] = []
    var crc = CRC32()
    /// Body bytes already fed to `crc`.
    var checked = 0
    var lastSequence: UInt8 = 0
    var packetsSinceStart = 0
    var lastActivity = Duration.zero
    /// The message this channel last completed, to recognise late duplicates of its packets.
    var lastCompleted: CompletedMessage?
    /// Fingerprint of the current message's Start packet, remembered to recognise its late duplicates.
    var startFingerprint: UInt64 = 0

    var streamCount: Int { Int(header.length) + 4 }

    mutating func begin(_ header: MessageHeader, startFingerprint: UInt64, now: Duration) {
        phase = .assembling
        self.header = header
        self.startFingerprint = startFingerprint
        body = []
        body.reserveCapacity(Int(header.length) + 4)
        crc = CRC32()
        checked = 0
        lastSequence = 0
        packetsSinceStart = 0
        lastActivity = now
        lastCompleted = nil
    }

    mutating func append(_ data: UnsafeBufferPointer<UInt8>) {
        body.append(contentsOf: data)
        if body.count - checked >= Self.checksumStretch { updateChecksum() }
    }

    private mutating func updateChecksum() {
        let end = min(body.count, Int(header.length))
        guard checked < end else { return }
        body.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[checked..<end])) }
        checked = end
    }

    /// The computed CRC of the whole body and the received trailer.
    mutating func finishChecksum() -> (computed: UInt32, trailer: UInt32) {
        updateChecksum()
        let trailer = body[Int(header.length)...].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return (crc.value, trailer)
    }

    /// Ends the message, remembering it for duplicate detection, and hands its buffer over.
    mutating func complete(lastSequence: UInt8) -> [UInt8] {
        let completed = CompletedMessage(
            messageID: header.messageID, startFingerprint: startFingerprint, lastSequence: lastSequence,
            streamCount: streamCount)
        let buffer = body
        reset(to: .idle)
        lastCompleted = completed
        return buffer
    }

    mutating func reset(to phase: Phase) {
        self.phase = phase
        body = []
        lastCompleted = nil
    }
}

/// The last message a channel completed, to recognise late duplicates of its packets.
private struct CompletedMessage {
    let messageID: UInt32
    let startFingerprint: UInt64
    let lastSequence: UInt8
    let streamCount: Int

    /// A Start packet byte-identical (by fingerprint) to this message's: a late duplicate. A different
    /// message reusing the id (e.g. two `msgpipe frame` outputs in a row) is not one.
    func isDuplicateStart(_ messageID: UInt32, _ fingerprint: UInt64) -> Bool {
        messageID == self.messageID && fingerprint == startFingerprint
    }

    func isDuplicate(_ header: PacketHeader, dataCount: Int) -> Bool {
        if let offset = header.explicitOffset { return Int(offset) + dataCount <= streamCount }
        return header.sequence == lastSequence
    }
}

/// FNV-1a over a packet: tells a repeated Start packet from a different one. (Not CRC-32: a packet that ends
/// with the CRC of its body has the same CRC-32 as any other of its header and length.)
private func fingerprint(_ packet: UnsafeBufferPointer<UInt8>) -> UInt64 {
    packet.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
}
