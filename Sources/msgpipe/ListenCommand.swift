import GATT
import ArgumentParser
import BLELink
import Framing
import Glibc
import Logging
import Transport

/// `msgpipe listen`: the peripheral. Serves the GATT service to one central after another and writes every
/// message it receives, in order, to standard output, a directory, or JSON lines.
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Receive messages as the peripheral (GATT server) until interrupted.",
        discussion: """
            Serves the msgpipe (or Nordic UART) GATT service on --link unix:PATH or on a Bluetooth adapter \
            (advertising --name), one central after another, until SIGINT/SIGTERM (exit 0) or --connections \
            centrals were served. When it is ready it prints "msgpipe: listening on unix:PATH" or \
            "msgpipe: advertising 'NAME' on hciN (ADDRESS)" on standard error.

            Every received message is written whole, in arrival order:
              (default)     its raw bytes to standard output
              --out-dir D   a file of its own in D: 00000001.msg, 00000002.msg, ... (continuing after files \
            already there; written under a hidden name and renamed, so a file never shows up partial)
              --json        one JSON line on standard output (keys sorted): {"bytes":B,"connection":C,\
            "crc32":"8 hex digits","data":"base64","id":ID,"index":N}; index counts from 1 in this process, \
            connection is the 1-based connection it arrived on, id is Transport's message id (null for the \
            plain formats), crc32 is zlib's CRC-32 of the bytes.

            With --format msgpipe (default) messages are acknowledged by Transport: delivered exactly once, \
            in the sender's order, resumed across reconnects of the same sender; a sender process that died \
            mid-message is replaced by the next one's session, and its partial message is dropped (logged). \
            legacy, eom and lines are plain framing without acknowledgements (interop).

            Exit codes:
              0   interrupted by SIGINT/SIGTERM, or --connections centrals served
              1   link failure (cannot listen on PATH, Bluetooth error)
              64  usage error
              73  --out-dir cannot be created or written
              74  standard output cannot be written
            """)

    @OptionGroup var link: LinkOptions

    @Option(help: "Wire format: msgpipe, legacy, eom or lines.", transform: parseFrameFormat)
    var format: FrameFormat = .msgpipe

    @Option(name: .customLong("out-dir"), help: "Write each message to a file of its own in this directory.")
    var outDirectory: String?

    @Flag(help: "Write one JSON line per message on standard output.")
    var json = false

    @Option(name: .customLong("max-message-size"), help: "Largest message accepted, in bytes.")
    var maximumMessageSize: Int = 16 << 20

    @Option(help: "Exit after serving this many centrals (default: until interrupted).")
    var connections: Int?

    @Option(name: .customLong("max-centrals"), help: "Centrals served at once; more wait until one leaves.")
    var maximumCentrals: Int = 8

    @Flag(help: "Log connections and Transport events on standard error.")
    var verbose = false

    /// Test and lab hook: drops each connection once this many bytes arrived on it, so the sender's
    /// reconnect and Transport's resume can be shown without a radio.
    @Option(name: .customLong("drop-after-bytes"), help: .hidden)
    var dropAfterBytes: Int?

    func validate() throws {
        if outDirectory != nil && json { throw ValidationError("--out-dir and --json exclude each other") }
        guard (0...Int(UInt32.max - 4)).contains(maximumMessageSize) else {
            throw ValidationError("--max-message-size must be between 0 and \(UInt32.max - 4)")
        }
        if let connections, connections < 1 { throw ValidationError("--connections must be at least 1") }
        guard (1...64).contains(maximumCentrals) else { throw ValidationError("--max-centrals must be 1...64") }
    }

    func run() async throws {
        let outcomes = AsyncStream<ListenOutcome>.makeStream()
        let sink: SharedMessageSink
        do {
            sink = SharedMessageSink(
                try MessageSink(json ? .json : outDirectory.map { .directory($0) } ?? .stdout),
                onFailure: { outcomes.continuation.yield(.served($0)) })
        } catch {
            printError(error.description)
            throw ExitCode(error.exitCode)
        }
        let shutdown = ShutdownSignal()
        let info = MsgPipeServiceInfo(
            formats: Self.advertisedFormats(format), maximumMessageSize: UInt32(maximumMessageSize),
            serverMTU: UInt16(ATTOpcode.maximumMTU))
        let receiver = PeripheralReceiver(
            link: link, format: format, maximumMessageSize: maximumMessageSize, maximumCentrals: maximumCentrals,
            connections: connections, logger: CLILogging.logger("listen", verbose: verbose), verbose: verbose,
            dropAfterBytes: dropAfterBytes)
        let serving = Task {
            do {
                let failure = try await receiver.run(sink: sink, info: info, shutdown: shutdown, onReady: { printError($0) })
                outcomes.continuation.yield(.served(failure))
            } catch {
                outcomes.continuation.yield(.failed(error))
            }
        }
        Task {
            let number = await shutdown.wait()
            outcomes.continuation.yield(.signal(number))
        }
        var iterator = outcomes.stream.makeAsyncIterator()
        switch await iterator.next() {
        case let .served(failure)?:
            if let failure { try fail(failure) }
        case let .failed(error)?:
            serving.cancel()
            printError("\(error)")
            throw ExitCode(1)
        case .signal?, nil:
            // Whole messages were written as they arrived; a partial one is dropped with the process.
            if let error = sink.failure { try fail(error) }
        }
    }

    private func fail(_ error: FileIOError) throws -> Never {
        printError(error.description)
        throw ExitCode(error.exitCode)
    }

    /// The info characteristic names the format this listener speaks, so a sender can refuse a mismatch.
    static func advertisedFormats(_ format: FrameFormat) -> MsgPipeServiceInfo.Formats {
        switch format {
        case .msgpipe: .msgpipe
        case .legacy: .legacy
        case .eom: .eom
        case .lines: .lines
        }
    }
}

/// How `listen`'s serving ended.
private enum ListenOutcome: Sendable {
    case served(FileIOError?)
    case failed(any Error)
    case signal(Int32)
}
