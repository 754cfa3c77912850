import MsgPipe
import ArgumentParser

/// `msgpipe frame`: cuts one payload into packets of a wire format and prints them as hex lines.
struct FrameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frame",
        abstract: "Cut a payload into packets of a wire format, one lowercase hex line per packet.",
        discussion: """
            The payload is read whole from FILE, or from standard input. A packet holds at most min(MTU - 3, 512) \
            bytes, the value of one notification or Write Command. The packets of legacy, eom and lines are what \
            apps built on those conventions send; msgpipe is described byte by byte in docs/PROTOCOL.md.

            Exit codes:
              0   every packet was written
              5   the payload cannot be framed (e.g. lines: it contains a newline)
              64  usage error (unknown format, an MTU too small for the format)
              66  FILE cannot be opened
              74  read or write error
            """)

    @Option(help: "ATT MTU of the link; packets hold at most min(MTU - 3, 512) bytes.")
    var mtu: Int

    @Option(help: "Wire format: msgpipe, legacy, eom or lines.", transform: parseFrameFormat)
    var format: FrameFormat = .msgpipe

    @Option(name: .customLong("message-id"), help: "Message id (msgpipe format).")
    var messageID: UInt32 = 1

    @Argument(help: "Payload file (default: standard input).")
    var file: String?

    func run() throws {
        do {
            let payload = try InputFile(path: file).readAll()
            var lines = try HexPacketLineEncoder(
                format: format, payload: payload, packetSize: ATTOpcode.maximumValueLength(mtu: mtu), messageID: messageID)
            var output = OutputBuffer()
            var line: [UInt8] = []
            while lines.writeNextLine(into: &line) { try output.append(line) }
            try output.flush()
        } catch let error as FileIOError {
            printError(error.description)
            throw ExitCode(error.exitCode)
        } catch let error as FramingError {
            printError(error.description)
            if case .packetSizeTooSmall = error { throw ExitCode(64) }
            throw ExitCode(5)
        }
    }
}

/// Parses a `--format` value.
@Sendable
func parseFrameFormat(_ name: String) throws -> FrameFormat {
    guard let format = FrameFormat(rawValue: name) else {
        throw ValidationError(
            "unknown format '\(name)' (one of: \(FrameFormat.allCases.map(\.rawValue).joined(separator: ", ")))")
    }
    return format
}
