import GATT
import ArgumentParser
import BLELink
import Framing
import Glibc
import Logging
import Transport

/// `msgpipe listen`: receives messages and writes every one, in order, to standard output, a directory, or
/// JSON lines: as the peripheral (default) serving the GATT service to one central after another, or as the
/// central (`--to`, `--role central`) subscribed to a peripheral that sends.
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Receive messages as the peripheral (GATT server) or the central until interrupted.",
        discussion: """
            As the peripheral (default): serves the GATT service (--profile) on --link unix:PATH or on a \
            Bluetooth adapter (advertising --name), one central after another, until SIGINT/SIGTERM (exit 0), \
            --connections centrals were served or --count messages written. When it is ready it prints \
            "msgpipe: listening on unix:PATH" or "msgpipe: advertising 'NAME' on hciN (ADDRESS)" on standard \
            error.

            As the central (--to NAME|ADDRESS over Bluetooth, or --role central with --link unix:PATH): \
            connects to a peripheral that sends (msgpipe send --name, send --role peripheral, or a phone app \
            notifying on the profile's TX), subscribes, and receives what it notifies; after a drop it \
            reconnects (at once, then with backoff up to 8 s, without limit) and Transport resumes, until \
            SIGINT/SIGTERM or --count messages (exit 0). A first connection that fails is exit 1. After --count messages \
            either role waits up to 2 s for the peer to end the connection, so it gets its last \
            acknowledgement.

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
              0   interrupted by SIGINT/SIGTERM, --connections centrals served, or --count messages written
              1   link failure (cannot listen on PATH; as central: the first connect failed or the \
            peripheral's info names another --format; Bluetooth error)
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

    @Option(help: "Exit after serving this many centrals (peripheral; default: until interrupted).")
    var connections: Int?

    @Option(name: .customLong("max-centrals"), help: "Centrals served at once (peripheral); more wait until one leaves.")
    var maximumCentrals: Int = 8

    @Option(help: "Exit after writing this many messages (default: until interrupted).")
    var count: Int?

    @Option(help: "Without --to/--name: peripheral (default: serve the service) or central (connect and subscribe).")
    var role: LinkRole?

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
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if try link.role(role, default: .peripheral) == .central, connections != nil {
            throw ValidationError("--connections counts the centrals a peripheral serves: not with --to or --role central")
        }
    }

    func run() async throws {
        let output: MessageSink
        do {
            output = try MessageSink(json ? .json : outDirectory.map { .directory($0) } ?? .stdout)
        } catch {
            printError(error.description)
            throw ExitCode(error.exitCode)
        }
        let shutdown = ShutdownSignal()
        if try link.role(role, default: .peripheral) == .central {
            return try await receiveAsCentral(sink: output, shutdown: shutdown)
        }
        let outcomes = AsyncStream<ListenOutcome>.makeStream()
        let sink = SharedMessageSink(
            output, limit: count, onFailure: { outcomes.continuation.yield(.failedOutput($0)) },
            onLimit: { outcomes.continuation.yield(.counted) })
        let info = MsgPipeServiceInfo(
            formats: Self.advertisedFormats(format), maximumMessageSize: UInt32(maximumMessageSize),
            serverMTU: UInt16(ATTOpcode.maximumMTU))
        let receiver = PeripheralReceiver(
            link: link, format: format, maximumMessageSize: maximumMessageSize, maximumCentrals: maximumCentrals,
            connections: connections, logger: CLILogging.logger("listen", verbose: verbose), verbose: verbose,
            dropAfterBytes: dropAfterBytes, onConnectionEnded: { outcomes.continuation.yield(.connectionEnded($0)) })
        let serving = Task {
            do {
                try await receiver.run(sink: sink, info: info, shutdown: shutdown, onReady: { printError($0) })
                outcomes.continuation.yield(.served)
            } catch {
                outcomes.continuation.yield(.failed(error))
            }
        }
        Task {
            let number = await shutdown.wait()
            outcomes.continuation.yield(.signal(number))
        }
        loop: for await outcome in outcomes.stream {
            switch outcome {
            case .served:
                if let error = sink.failure { try fail(error) }
                return
            case let .failedOutput(error):
                serving.cancel()
                try fail(error)
            case .counted:
                // Let the centrals take their last acknowledgements (plain formats: the Write Response to the
                // last packet) and leave (at most 2 s).
                Task {
                    try? await Task.sleep(for: .seconds(2))
                    outcomes.continuation.yield(.graceOver)
                }
            case let .connectionEnded(remaining):
                if sink.reachedLimit && remaining == 0 { break loop }
            case .graceOver:
                break loop
            case let .failed(error):
                serving.cancel()
                printError("\(error)")
                throw ExitCode(1)
            case .signal:
                // Whole messages were written as they arrived; a partial one is dropped with the process.
                if let error = sink.failure { try fail(error) }
                return
            }
        }
        serving.cancel()
        // The socket's accept wait ends on cancellation and removes the socket file (Bluetooth: with the process).
        if case .unix? = try? link.endpoint() { await serving.value }
    }

    func fail(_ error: FileIOError) throws -> Never {
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
    case served
    /// Writing the output failed.
    case failedOutput(FileIOError)
    /// `--count` messages written.
    case counted
    /// A central's connection ended; how many are still connected.
    case connectionEnded(Int)
    /// The wait for the centrals to leave after `--count` is over.
    case graceOver
    case failed(any Error)
    case signal(Int32)
}
