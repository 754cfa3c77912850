/// Packets as text, one per line in lowercase hex ending in `\n`: how `msgpipe frame` prints the packets of a
/// message and what `msgpipe deframe` reads back (``HexPacketLineDecoder``).
///
/// ```swift
/// var lines = try HexPacketLineEncoder(format: .eom, payload: Array("hi".utf8), packetSize: 20)
/// var line: [UInt8] = []
/// while lines.writeNextLine(into: &line) { write(line) }   // "6869\n", then "454f4d\n"
/// ```
public struct HexPacketLineEncoder: Sendable {
    private var encoder: any FrameEncoder
    private var packet: [UInt8] = []

    /// The packets of `payload` in `format`, each at most `packetSize` bytes; `messageID` is used by msgpipe
    /// only. Throws what ``FrameFormat/makeEncoder(payload:packetSize:messageID:)`` throws (e.g.
    /// ``FramingError/packetSizeTooSmall(format:packetSize:minimum:)``).
    public init(format: FrameFormat, payload: [UInt8], packetSize: Int, messageID: UInt32 = 1) throws(FramingError) {
        encoder = try format.makeEncoder(payload: payload, packetSize: packetSize, messageID: messageID)
    }

    /// Writes the next packet's line, with its `\n`, into `out` (replacing its contents, keeping its storage)
    /// and returns true, or returns false when every packet was written.
    public mutating func writeNextLine(into out: inout [UInt8]) -> Bool {
        guard encoder.writeNextPacket(into: &packet) else { return false }
        out.removeAll(keepingCapacity: true)
        Hex.append(packet, to: &out)
        out.append(UInt8(ascii: "\n"))
        return true
    }
}

/// Reassembles messages from hex packet lines (``HexPacketLineEncoder``) read in any chunks; `\r`, spaces,
/// tabs, blank lines and control packets are skipped. Holds at most one line (``maximumLineLength``) plus its
/// ``ReassemblyLimits``. The first problem is ``Event/failure(_:)``, after every message before it; it ends
/// the decoding.
///
/// ```swift
/// var decoder = HexPacketLineDecoder(format: .msgpipe, limits: ReassemblyLimits())
/// decoder.receive(chunk[...]) { event in ... }   // .message(body) or .failure(error), in input order
/// decoder.finish { event in ... }                // at the end of the input: a partial message is a failure
/// ```
public struct HexPacketLineDecoder: Sendable {
    /// What the decoder hands out, in input order.
    public enum Event: Equatable, Sendable {
        /// The bytes of a whole message.
        case message([UInt8])
        /// The first problem; nothing follows it.
        case failure(HexPacketLineError)
    }

    /// Packets over this many bytes are refused (``FramingError/packetTooLarge(size:limit:)``).
    public let maximumPacketSize: Int
    /// Lines over this many characters (besides `\n` and one `\r`) are refused: twice the larger of
    /// ``maximumPacketSize`` and 65536, plus 64 for spaces.
    public let maximumLineLength: Int
    /// The number of the last line read whole (1-based).
    public private(set) var lineNumber = 0
    private var decoder: any FrameDecoder
    private var line: [UInt8] = []
    private var packet: [UInt8] = []
    private var failed = false

    /// A decoder of `format`'s packets, bounded by `limits`, refusing packets over `maximumPacketSize` bytes.
    public init(format: FrameFormat, limits: ReassemblyLimits, maximumPacketSize: Int = 1 << 16) {
        self.maximumPacketSize = maximumPacketSize
        maximumLineLength = 2 * max(maximumPacketSize, 1 << 16) + 64
        decoder = format.makeDecoder(limits: limits)
    }

    /// Takes the next chunk of text and hands out the messages of every line it completes.
    public mutating func receive(_ text: ArraySlice<UInt8>, emit: (Event) -> Void) {
        var rest = text
        while !failed, let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            line.append(contentsOf: rest[..<newline])
            rest = rest[(newline + 1)...]
            lineNumber += 1
            guard line.count <= maximumLineLength + 1 else {
                return fail(.lineTooLong(line: lineNumber, limit: maximumLineLength), emit)
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            take(emit)
        }
        guard !failed else { return }
        line.append(contentsOf: rest)
        if line.count > maximumLineLength + 1 { fail(.lineTooLong(line: lineNumber + 1, limit: maximumLineLength), emit) }
    }

    /// Ends the input: takes a last line without `\n`, then reports a message left partial as a failure.
    public mutating func finish(emit: (Event) -> Void) {
        guard !failed else { return }
        if !line.isEmpty {
            lineNumber += 1
            take(emit)
        }
        guard !failed else { return }
        var events: [FrameEvent] = []
        decoder.finish { events.append($0) }
        deliver(events, line: nil, emit)
    }

    /// Decodes the line in `line` and empties it.
    private mutating func take(_ emit: (Event) -> Void) {
        defer { line.removeAll(keepingCapacity: true) }
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = line.firstIndex(where: { !isSpace($0) }), let last = line.lastIndex(where: { !isSpace($0) })
        else { return }
        guard Hex.decode(line[first...last], into: &packet) else { return fail(.badHex(line: lineNumber), emit) }
        guard packet.count <= maximumPacketSize else {
            return fail(.framing(.packetTooLarge(size: packet.count, limit: maximumPacketSize), line: lineNumber), emit)
        }
        var events: [FrameEvent] = []
        decoder.receive(packet[...], now: .zero) { events.append($0) }
        deliver(events, line: lineNumber, emit)
    }

    private mutating func deliver(_ events: [FrameEvent], line: Int?, _ emit: (Event) -> Void) {
        for event in events {
            switch event {
            case let .message(message): emit(.message(message.body))
            case .control: break
            case let .failure(error): return fail(.framing(error, line: line), emit)
            }
        }
    }

    private mutating func fail(_ error: HexPacketLineError, _ emit: (Event) -> Void) {
        failed = true
        line = []
        emit(.failure(error))
    }
}

/// Why ``HexPacketLineDecoder`` stopped.
public enum HexPacketLineError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A line that is not an even number of hex digits.
    case badHex(line: Int)
    /// A line longer than `limit` characters.
    case lineTooLong(line: Int, limit: Int)
    /// The packets' own failure, on input line `line`, or at the end of the input (nil).
    case framing(FramingError, line: Int?)

    public var description: String {
        switch self {
        case let .badHex(line): "bad hex on input line \(line)"
        case let .lineTooLong(line, limit): "input line \(line) is longer than \(limit) hex digits"
        case let .framing(error, line?): "\(error) on input line \(line)"
        case let .framing(error, nil): "\(error)"
        }
    }
}

extension HexPacketLineError {
    /// Why decoding stopped, in the terms a caller acts on (`msgpipe deframe`'s exit codes follow it).
    public enum Kind: Sendable, Equatable {
        /// A line that is not hex.
        case badHex
        /// Over a limit: a line's length, a packet's or message's size, messages or bytes in progress.
        case overLimit
        /// The input ended inside a message, or a message went stale.
        case incomplete
        /// The packets themselves are wrong: a CRC mismatch, a malformed packet, a protocol violation.
        case integrity
    }

    /// The kind of this failure.
    ///
    /// ```swift
    /// if let problem, problem.kind == .incomplete { print("the input ended inside a message") }
    /// ```
    public var kind: Kind {
        switch self {
        case .badHex: .badHex
        case .lineTooLong, .framing(.messageTooLarge, _), .framing(.tooManyMessagesInProgress, _),
            .framing(.bufferedBytesExceeded, _), .framing(.packetTooLarge, _):
            .overLimit
        case .framing(.incompleteMessage, _), .framing(.staleMessage, _): .incomplete
        case .framing: .integrity
        }
    }
}
