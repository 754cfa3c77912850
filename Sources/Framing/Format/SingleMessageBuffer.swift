/// The one partial message a text-marker decoder (legacy, eom, lines) holds: bounded, stale-checked.
struct SingleMessageBuffer: Sendable {
    enum State: Sendable {
        /// No message open.
        case closed
        /// A message is open; its bytes so far.
        case open
        /// The open message went over the size limit; its bytes are ignored until it ends.
        case discarding
    }

    let limits: ReassemblyLimits
    private(set) var state = State.closed
    private(set) var bytes: [UInt8] = []
    private var lastActivity = Duration.zero

    init(limits: ReassemblyLimits) {
        self.limits = limits
    }

    /// The size limit: a single-message decoder buffers at most one message.
    var limit: Int { min(limits.maximumMessageSize, limits.maximumBufferedBytes) }

    /// Opens a message (reporting a partial one as interrupted).
    mutating func open(now: Duration, emit: (FrameEvent) -> Void) {
        if state == .open {
            emit(.failure(.messageInterrupted(messageID: nil, channel: 0, receivedBytes: bytes.count)))
        }
        bytes.removeAll(keepingCapacity: true)
        state = .open
        lastActivity = now
    }

    /// Appends data to the open message; over the limit the message is dropped and reported once.
    mutating func append(_ data: ArraySlice<UInt8>, now: Duration, emit: (FrameEvent) -> Void) {
        lastActivity = now
        guard state == .open else { return }
        guard bytes.count + data.count <= limit else {
            emit(.failure(.messageTooLarge(messageID: nil, size: bytes.count + data.count, limit: limit)))
            bytes = []
            state = .discarding
            return
        }
        bytes.append(contentsOf: data)
    }

    /// Closes the message, emitting it unless it was discarded.
    mutating func close(emit: (FrameEvent) -> Void) {
        if state == .open { emit(.message(FramedMessage(body: bytes))) }
        bytes = []
        state = .closed
    }

    /// Drops an open message idle for longer than the stale timeout.
    mutating func expire(now: Duration, emit: (FrameEvent) -> Void) {
        guard state != .closed, now - lastActivity > limits.staleTimeout else { return }
        if state == .open {
            emit(.failure(.staleMessage(messageID: nil, channel: 0, receivedBytes: bytes.count)))
        }
        bytes = []
        state = .closed
    }

    /// Reports an open message as incomplete and closes it.
    mutating func finish(emit: (FrameEvent) -> Void) {
        if state == .open {
            emit(.failure(.incompleteMessage(messageID: nil, channel: 0, receivedBytes: bytes.count)))
        }
        bytes = []
        state = .closed
    }
}

extension ArraySlice<UInt8> {
    /// True when these bytes begin with `prefix`.
    func begins(with prefix: [UInt8]) -> Bool {
        count >= prefix.count && self.prefix(prefix.count).elementsEqual(prefix)
    }
}
