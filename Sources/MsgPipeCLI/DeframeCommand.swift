import MsgPipe
import ArgumentParser

/// `msgpipe deframe`: reassembles messages from hex packet lines and writes their bytes to standard output.
struct DeframeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deframe",
        abstract: "Reassemble messages from hex packet lines; write each message's bytes to standard output.",
        discussion: """
            Reads one packet per line as hex from FILE or standard input, streaming (blank lines are \
            skipped), and writes the bytes of every reassembled message, in order (msgpipe control packets are \
            skipped). Stops at the first problem \
            and names it in one line on standard error, e.g. "msgpipe: CRC mismatch in message 7 ...".

            Exit codes:
              0   the input ended with no message left partial
              1   integrity or protocol failure (CRC mismatch, malformed packet, ...)
              2   incomplete input: it ended inside a message
              3   bad hex on an input line
              4   over a limit (message size, packet size with --mtu, line length)
              64  usage error
              66  FILE cannot be opened
              74  read or write error
            """)

    @Option(help: "Wire format: msgpipe, legacy, eom or lines.", transform: parseFrameFormat)
    var format: FrameFormat = .msgpipe

    @Option(help: "ATT MTU of the link: packets over min(MTU - 3, 512) bytes are refused.")
    var mtu: Int?

    @Option(name: .customLong("max-message-size"), help: "Largest message accepted, in bytes.")
    var maximumMessageSize: Int = 16 << 20

    @Argument(help: "Hex packet lines (default: standard input).")
    var file: String?

    func validate() throws {
        if let mtu, ATTOpcode.maximumValueLength(mtu: mtu) < 1 { throw ValidationError("MTU \(mtu) is too small") }
        guard maximumMessageSize >= 0 else { throw ValidationError("--max-message-size must not be negative") }
    }

    func run() throws {
        let packetLimit = mtu.map { ATTOpcode.maximumValueLength(mtu: $0) } ?? (1 << 16)
        let limits = ReassemblyLimits(
            maximumMessageSize: maximumMessageSize, maximumBufferedBytes: max(maximumMessageSize, 1) * 4 + 16)
        var decoder = format.makeDecoder(limits: limits)
        var output = OutputBuffer()
        var packet: [UInt8] = []
        var events: [FrameEvent] = []
        do {
            var lines = LineReader(try InputFile(path: file), maximumLength: 2 * max(packetLimit, 1 << 16) + 64)
            while let line = try nextLine(&lines) {
                let text = line.trimmingSpaces
                if text.isEmpty { continue }
                guard Hex.decode(text, into: &packet) else {
                    try output.flush()
                    try fail("bad hex on input line \(lines.lineNumber)", exitCode: 3)
                }
                guard packet.count <= packetLimit else {
                    try output.flush()
                    let error = FramingError.packetTooLarge(size: packet.count, limit: packetLimit)
                    try fail("\(cli: error) on input line \(lines.lineNumber)", exitCode: 4)
                }
                events.removeAll(keepingCapacity: true)
                decoder.receive(packet[...], now: .zero) { events.append($0) }
                try deliver(events, to: &output, where: " on input line \(lines.lineNumber)")
            }
            events.removeAll(keepingCapacity: true)
            decoder.finish { events.append($0) }
            try deliver(events, to: &output, where: "")
            try output.flush()
        } catch let error as FileIOError {
            try fail(error.description, exitCode: error.exitCode)
        }
    }

    /// Writes the messages among `events`; at the first failure flushes what came before and exits.
    private func deliver(_ events: [FrameEvent], to output: inout OutputBuffer, where place: String) throws {
        for event in events {
            switch event {
            case let .message(message):
                try output.append(message.body)
            case .control:
                break
            case let .failure(failure):
                try output.flush()
                try fail("\(failure)\(place)", exitCode: Self.exitCode(for: failure))
            }
        }
    }

    private func nextLine(_ lines: inout LineReader) throws -> ArraySlice<UInt8>? {
        do {
            return try lines.nextLine()
        } catch let .tooLong(line, limit) {
            try fail("input line \(line) is longer than \(limit) hex digits", exitCode: 4)
        } catch let .io(error) {
            throw error
        }
    }

    private func fail(_ message: String, exitCode: Int32) throws -> Never {
        printError(message)
        throw ExitCode(exitCode)
    }

    /// The documented exit code for a framing failure.
    static func exitCode(for failure: FramingError) -> Int32 {
        switch failure {
        case .incompleteMessage, .staleMessage: 2
        case .messageTooLarge, .tooManyMessagesInProgress, .bufferedBytesExceeded, .packetTooLarge: 4
        default: 1
        }
    }
}

extension ArraySlice<UInt8> {
    /// The bytes without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
