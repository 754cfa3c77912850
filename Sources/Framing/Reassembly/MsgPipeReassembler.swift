/// Reassembles msgpipe data messages from packets (PROTOCOL 1.4): up to four interleaved channels,
/// duplicates ignored, length and CRC-32 checked, every limit enforced before buffering.
///
/// Each message is appended into one buffer reserved at its announced length; the CRC is updated as
/// bytes arrive. Control packets are surfaced as ``FrameEvent/control(_:)``.
public struct MsgPipeReassembler: FrameDecoder {
    /// The bounds in force.
    public let limits: ReassemblyLimits
    private var channels: [ChannelState] = Array(repeating: .idle(lastCompleted: nil), count: 4)

    /// A reassembler with no message in progress.
    public init(limits: ReassemblyLimits = ReassemblyLimits()) {
        self.limits = limits
    }

    /// Messages currently being assembled.
    public var messagesInProgress: Int { channels.reduce(0) { $0 + ($1.assembly == nil ? 0 : 1) } }
    /// Bytes reserved for messages in progress (announced length plus trailer each).
    public var bufferedBytes: Int { channels.reduce(0) { $0 + ($1.assembly?.streamCount ?? 0) } }
    /// When the earliest partial message goes stale, if any is in progress.
    public var nextStaleDeadline: Duration? {
        channels.compactMap { $0.assembly.map { $0.lastActivity + limits.staleTimeout } }.min()
    }

    public mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration, emit: (FrameEvent) -> Void) {
        expireStaleMessages(now: now, emit: emit)
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
            start(packetHeader, messageHeader, data: data, now: now, emit: emit)
        case let .continuation(packetHeader, data):
            continuation(packetHeader, data: data, now: now, emit: emit)
        }
    }

    public mutating func expireStaleMessages(now: Duration, emit: (FrameEvent) -> Void) {
        for channel in channels.indices {
            guard let assembly = channels[channel].assembly, now - assembly.lastActivity > limits.staleTimeout
            else { continue }
            channels[channel] = .idle(lastCompleted: nil)
            emit(.failure(.staleMessage(
                messageID: assembly.header.messageID, channel: UInt8(channel), receivedBytes: assembly.received)))
        }
    }

    public mutating func finish(emit: (FrameEvent) -> Void) {
        for channel in channels.indices {
            if let assembly = channels[channel].assembly {
                emit(.failure(.incompleteMessage(
                    messageID: assembly.header.messageID, channel: UInt8(channel),
                    receivedBytes: assembly.received)))
            }
            channels[channel] = .idle(lastCompleted: nil)
        }
    }

    // MARK: Start packets

    private mutating func start(
        _ packetHeader: PacketHeader, _ header: MessageHeader, data: ArraySlice<UInt8>, now: Duration,
        emit: (FrameEvent) -> Void
    ) {
        let channel = Int(packetHeader.channel)
        let id = header.messageID
        switch channels[channel] {
        case let .assembling(assembly):
            if assembly.header == header, assembly.packetsSinceStart == 0 { return }  // duplicate Start
            channels[channel] = .idle(lastCompleted: nil)
            emit(.failure(.messageInterrupted(
                messageID: assembly.header.messageID, channel: packetHeader.channel, receivedBytes: assembly.received)))
        case let .idle(lastCompleted?) where lastCompleted.messageID == id:
            return  // duplicate of the message this channel just completed
        case .idle, .discarding:
            break
        }
        let streamCount = Int(header.length) + 4
        let failure: FramingError? =
            if Int(header.length) > limits.maximumMessageSize {
                .messageTooLarge(messageID: id, size: Int(header.length), limit: limits.maximumMessageSize)
            } else if messagesInProgress >= limits.maximumMessagesInProgress {
                .tooManyMessagesInProgress(messageID: id, limit: limits.maximumMessagesInProgress)
            } else if bufferedBytes + streamCount > limits.maximumBufferedBytes {
                .bufferedBytesExceeded(messageID: id, needed: bufferedBytes + streamCount,
                    limit: limits.maximumBufferedBytes)
            } else { nil }
        if let failure {
            channels[channel] = packetHeader.isEnd ? .idle(lastCompleted: nil) : .discarding(messageID: id)
            emit(.failure(failure))
            return
        }
        var assembly = Assembly(header: header, now: now)
        assembly.body.reserveCapacity(streamCount)
        accept(&assembly, packetHeader, data: data, channel: channel, emit: emit)
    }

    // MARK: Continuation packets

    private mutating func continuation(
        _ packetHeader: PacketHeader, data: ArraySlice<UInt8>, now: Duration, emit: (FrameEvent) -> Void
    ) {
        let channel = Int(packetHeader.channel)
        switch channels[channel] {
        case let .idle(lastCompleted):
            if let lastCompleted, lastCompleted.isDuplicate(packetHeader, dataCount: data.count) { return }
            emit(.failure(.packetOutsideMessage(channel: packetHeader.channel)))
        case .discarding:
            if packetHeader.isEnd { channels[channel] = .idle(lastCompleted: nil) }
        case .assembling:
            guard var assembly = channels[channel].takeAssembly() else { return }
            assembly.lastActivity = now
            let id = assembly.header.messageID
            var data = data
            if let offset = packetHeader.explicitOffset.map(Int.init) {
                if offset + data.count <= assembly.received {  // everything already here: a duplicate
                    channels[channel] = .assembling(assembly)
                    return
                }
                guard offset <= assembly.received else {
                    return drop(id, channel, packetHeader, emit, .missingPacket(
                        messageID: id, channel: packetHeader.channel,
                        detail: "stream offset \(offset), expected at most \(assembly.received)"))
                }
                data = data.dropFirst(assembly.received - offset)
            } else if assembly.packetsSinceStart > 0, packetHeader.sequence == assembly.lastSequence {
                channels[channel] = .assembling(assembly)  // the same sequence again: a duplicate
                return
            } else if packetHeader.sequence != (assembly.lastSequence &+ 1) & 0x07 {
                let expected = (assembly.lastSequence &+ 1) & 0x07
                return drop(id, channel, packetHeader, emit, .missingPacket(
                    messageID: id, channel: packetHeader.channel,
                    detail: "sequence \(packetHeader.sequence), expected \(expected)"))
            }
            assembly.packetsSinceStart += 1
            accept(&assembly, packetHeader, data: data, channel: channel, emit: emit)
        }
    }

    private mutating func drop(
        _ id: UInt32, _ channel: Int, _ packetHeader: PacketHeader, _ emit: (FrameEvent) -> Void,
        _ failure: FramingError
    ) {
        channels[channel] = packetHeader.isEnd ? .idle(lastCompleted: nil) : .discarding(messageID: id)
        emit(.failure(failure))
    }

    /// Appends a packet's stream bytes and completes the message when its stream is whole.
    private mutating func accept(
        _ assembly: inout Assembly, _ packetHeader: PacketHeader, data: ArraySlice<UInt8>, channel: Int,
        emit: (FrameEvent) -> Void
    ) {
        let id = assembly.header.messageID
        let streamCount = assembly.streamCount
        guard assembly.received + data.count <= streamCount else {
            return drop(id, channel, packetHeader, emit, .streamOverrun(messageID: id, expected: streamCount))
        }
        let bodyCount = Int(assembly.header.length)
        let bodyPart = max(0, min(data.count, bodyCount - assembly.received))
        if bodyPart > 0 { assembly.crc.update(data.prefix(bodyPart)) }
        assembly.body.append(contentsOf: data)
        assembly.lastSequence = packetHeader.sequence
        let complete = assembly.received == streamCount
        switch (complete, packetHeader.isEnd) {
        case (false, false):
            channels[channel] = .assembling(assembly)
        case (false, true):
            drop(id, channel, packetHeader, emit, .endBeforeComplete(
                messageID: id, received: assembly.received, expected: streamCount))
        case (true, false):
            drop(id, channel, packetHeader, emit, .missingEndFlag(messageID: id))
        case (true, true):
            let trailer = assembly.body[bodyCount...].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let completed = CompletedMessage(
                messageID: id, lastSequence: packetHeader.sequence, streamCount: streamCount)
            channels[channel] = .idle(lastCompleted: completed)
            guard trailer == assembly.crc.value else {
                emit(.failure(.crcMismatch(messageID: id, expected: trailer, actual: assembly.crc.value)))
                return
            }
            assembly.body.removeLast(4)
            emit(.message(FramedMessage(body: assembly.body, header: assembly.header, channel: UInt8(channel))))
        }
    }
}

/// What one channel of a ``MsgPipeReassembler`` is doing.
private enum ChannelState {
    /// No message in progress; remembers the message just completed to recognise its duplicates.
    case idle(lastCompleted: CompletedMessage?)
    /// A message is being assembled.
    case assembling(Assembly)
    /// A message was dropped; its remaining packets are ignored until its End packet or a new Start.
    case discarding(messageID: UInt32)

    var assembly: Assembly? {
        if case let .assembling(assembly) = self { assembly } else { nil }
    }

    /// Moves the assembly out (leaving the channel idle) so its buffer is mutated without a copy.
    mutating func takeAssembly() -> Assembly? {
        guard case let .assembling(assembly) = self else { return nil }
        self = .idle(lastCompleted: nil)
        return assembly
    }
}

/// A partial message.
private struct Assembly {
    let header: MessageHeader
    var body: [UInt8] = []
    var crc = CRC32()
    var lastSequence: UInt8 = 0
    var packetsSinceStart = 0
    var lastActivity: Duration

    init(header: MessageHeader, now: Duration) {
        self.header = header
        lastActivity = now
    }

    var streamCount: Int { Int(header.length) + 4 }
    var received: Int { body.count }
}

/// The last message a channel completed, to recognise late duplicates of its packets.
private struct CompletedMessage {
    let messageID: UInt32
    let lastSequence: UInt8
    let streamCount: Int

    func isDuplicate(_ header: PacketHeader, dataCount: Int) -> Bool {
        if let offset = header.explicitOffset { return Int(offset) + dataCount <= streamCount }
        return header.sequence == lastSequence
    }
}
