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
        let limits = ReassemblyLimits(
            maximumMessageSize: maximumMessageSize, maximumBufferedBytes: max(maximumMessageSize, 1) * 4 + 16)
        var decoder = HexPacketLineDecoder(
            format: format, limits: limits, maximumPacketSize: mtu.map { ATTOpcode.maximumValueLength(mtu: $0) } ?? (1 << 16))
        var output = OutputBuffer()
        do {
            let problem = try InputFile(path: file).decodeHexPacketLines(with: &decoder) { body throws(FileIOError) in
                try output.append(body)
            }
            try output.flush()
            if let problem {
                printError("\(problem)")
                throw ExitCode(Self.exitCode(for: problem))
            }
        } catch let error as FileIOError {
            printError(error.description)
            throw ExitCode(error.exitCode)
        }
    }

    /// The documented exit code for why decoding stopped (the library's ``HexPacketLineError/Kind``).
    static func exitCode(for error: HexPacketLineError) -> Int32 {
        switch error.kind {
        case .badHex: 3
        case .overLimit: 4
        case .incomplete: 2
        case .integrity: 1
        }
    }
}
