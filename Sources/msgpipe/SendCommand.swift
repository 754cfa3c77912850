import GATT
import ArgumentParser
import BLELink
import Framing
import Glibc
import Logging
import Transport

/// `msgpipe send`: sends each FILE (or standard input) as one message: as the central (default, `--to`) to a
/// listener, or as the peripheral (`--name`, `--role peripheral`) to each of `--centrals` subscribed
/// centrals; exits 0 only once every message was acknowledged.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send each FILE (or standard input) as one message, as the central or the peripheral.",
        discussion: """
            As the central (default; --to ADDRESS|NAME over Bluetooth, or --role central over --link \
            unix:PATH): connects, then sends the messages in order with Write Commands. As the peripheral \
            (--name NAME: advertise NAME over Bluetooth; or --role peripheral over --link unix:PATH, which \
            listens on PATH): serves the GATT service, waits until --centrals centrals (default 1) subscribed \
            to TX (e.g. `msgpipe listen --to NAME` or phone apps), and sends the messages to every one of them \
            by notification, each paced by its own link's readiness (a slow central does not hold the others). \
            Exit 0 then means every central acknowledged every message; a central that fails or leaves is \
            named on standard error and the exit code is its failure's. When it is ready it prints "msgpipe: listening on unix:PATH" or \
            "msgpipe: advertising 'NAME' on hciN" on standard error.

            With --format msgpipe (default) each message goes through Transport: acknowledged, \
            retransmitted, and over a link that drops mid-transfer Transport resumes the message where it \
            stopped: a central reconnects (with backoff, up to --reconnects times in a row), a peripheral \
            waits for its central to come back (until --timeout, if given).

            legacy, eom and lines are plain framing for interop: they have no acknowledgements. As central \
            their packets go out as Write Commands paced by the link's readiness, and the very last packet as \
            a Write Request, so exit 0 means the peer's ATT layer took every packet (not that an application \
            processed them). As peripheral they go out as notifications and the very last as an indication \
            where the central enabled indications (msgpipe listen --to does with the msgpipe profile): exit 0 \
            means its confirmation arrived. A central that enabled notifications only (a notify-only custom \
            or nus profile, most phone apps) cannot confirm: then exit 0 means every notification was handed \
            to the link, not that the central took it. A link that drops during a plain transfer is a \
            failure (exit 1). Through bluetoothd (--backend bluez) a central sends every plain packet as a \
            Write Request and waits for its response (slower), so exit 0 means the same as above: bluetoothd \
            answers our own descriptors' writes itself and queues without bound, which would hide a loss. \
            A bluetoothd that uses several ATT channels (EATT: 5.66, Debian 12's) may deliver a peripheral's \
            notifications out of order, which plain framing cannot repair: README's stock-box section turns it off.

            A progress bar is drawn on standard error when it is a terminal (not with --json). With --json \
            one line per acknowledged message goes to standard output (keys sorted): \
            {"bytes":B,"file":"PATH","index":N,"seconds":S}; as the peripheral one line per central per \
            message, with "peer":"ADDRESS".

            \(SendExitCode.help)
            """)

    @OptionGroup var link: LinkOptions

    @Option(help: "Wire format: msgpipe, legacy, eom or lines.", transform: parseFrameFormat)
    var format: FrameFormat = .msgpipe

    @Option(help: "Without --to/--name: peripheral (serve and send to a subscribing central) or central (default).")
    var role: LinkRole?

    @Option(help: "As the peripheral: wait until this many centrals subscribed, then send to every one.")
    var centrals: Int = 1

    @Option(help: "Seconds until every message must be acknowledged (default: no limit).")
    var timeout: Double?

    @Option(help: "Reconnect attempts in a row after the link drops (msgpipe format).")
    var reconnects: Int = 5

    @Flag(help: "Print one JSON line per acknowledged message on standard output; no progress bar.")
    var json = false

    @Flag(help: "Log connections and Transport events on standard error.")
    var verbose = false

    /// Test and lab hook: the process kills itself (SIGKILL, as `kill -9` would) once this many bytes went
    /// out on the link, to prove a dead sender's partial message is handled.
    @Option(name: .customLong("kill-after-bytes"), help: .hidden)
    var killAfterBytes: Int?

    @Argument(help: "Files to send, one message each ('-' or none: standard input).")
    var files: [String] = []

    func validate() throws {
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be positive") }
        guard reconnects >= 0 else { throw ValidationError("--reconnects must not be negative") }
        if files.count(where: { $0 == "-" }) > 1 { throw ValidationError("standard input ('-') can be sent once") }
        let asPeripheral = try link.role(role, default: .central) == .peripheral
        guard (1...64).contains(centrals) else { throw ValidationError("--centrals must be 1...64") }
        if centrals != 1 && !asPeripheral { throw ValidationError("--centrals is for the peripheral (--name or --role peripheral)") }
    }

    func run() async throws {
        let inputs = files.isEmpty ? ["-"] : files
        // Every input must open before anything is sent, so a typo does not leave a half-done batch.
        var sizes: [Int] = []
        for path in inputs {
            do {
                sizes.append(try SendInput.size(of: path))
            } catch {
                try fail(error.description, .noInput)
            }
        }
        var logger = Logger(label: "msgpipe") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        let progress = ProgressReporter(
            total: sizes.reduce(0, +) * centrals, enabled: !json, killAfterBytes: killAfterBytes)
        let deadline = timeout.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        if let deadline {
            // The whole run, connecting included, is bounded: a peer that connects but never answers (or a
            // connect that hangs) ends in exit 2 as well. Transport and plain sends also check the deadline
            // themselves to report which message was not acknowledged.
            Task.detached {
                try await Task.sleep(until: deadline + .milliseconds(500))
                printError("not every message was acknowledged before --timeout")
                Glibc.exit(SendExitCode.notAcknowledged.rawValue)
            }
        }
        let session = SendSession(
            link: link, format: format, profile: try link.gattProfile(), progress: progress, logger: logger,
            reconnects: reconnects, deadline: deadline)
        let outcome =
            try link.role(role, default: .central) == .peripheral
            ? await session.serve(inputs: SendInputs(paths: inputs, sizes: sizes), centrals: centrals, json: json)
            : await session.run(inputs: SendInputs(paths: inputs, sizes: sizes), json: json)
        progress.finish(complete: outcome == .success)
        if outcome != .success { throw ExitCode(outcome.rawValue) }
    }

    private func fail(_ message: String, _ code: SendExitCode) throws -> Never {
        printError(message)
        throw ExitCode(code.rawValue)
    }
}

/// Reading `send`'s inputs: each FILE (or '-': standard input) is one message.
enum SendInput {
    /// The size of a regular file (0 for standard input or a pipe: unknown); throws when it cannot be opened.
    static func size(of path: String) throws(FileIOError) -> Int {
        guard path != "-" else { return 0 }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FileIOError(description: "cannot open \(path): \(String(cString: strerror(errno)))", exitCode: 66)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return 0 }
        return status.st_mode & S_IFMT == S_IFREG ? Int(status.st_size) : 0
    }

    /// The whole content of `path` (or standard input).
    static func read(_ path: String) throws(FileIOError) -> [UInt8] {
        try InputFile(path: path).readAll()
    }
}
