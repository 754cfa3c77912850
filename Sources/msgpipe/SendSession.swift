import GATT
import BLELink
import Framing
import Logging
import Synchronization
import Transport

/// One run of `msgpipe send`: as the central it connects the GATT link and reconnects it when it drops; as
/// the peripheral it serves the profile and waits for a central to subscribe. Either way it then sends the
/// inputs in order over that one link (through Transport, or as plain framing) and maps what happened to a
/// ``SendExitCode``.
struct SendSession: Sendable {
    let link: LinkOptions
    let format: FrameFormat
    let profile: GATTServiceProfile
    let progress: ProgressReporter
    let logger: Logger
    let reconnects: Int
    let deadline: ContinuousClock.Instant?

    /// The central: connects to the listener (or any peripheral serving the profile) and sends.
    func run(inputs: SendInputs, json: Bool) async -> SendExitCode {
        let peerLink: PeerLink
        do {
            peerLink = try await link.makeCentralLink(verbose: logger.logLevel <= .debug, confirmedWrites: format != .msgpipe)
            let peer = try await link.connect(peerLink) { [progress] in progress.note("\($0)") }
            logger.debug("connected to \(peer)")
        } catch {
            printError("cannot connect to \(link.displayName): \(error)")
            return .linkFailure
        }
        if let info = peerLink.peerInfo, !info.formats.contains(ListenCommand.advertisedFormats(format)) {
            printError("the listener does not speak --format \(format.rawValue) (its info characteristic says so)")
            await peerLink.close()
            return .refused
        }
        var results = SendResults(inputs: inputs.paths, json: json)
        let outcome = await send(inputs, over: peerLink, results: &results, reconnecting: true)
        await peerLink.close()
        return outcome
    }

    /// Sends `inputs` in order to the one peer of `peerLink` (as central or as peripheral: the link is
    /// connected, or becomes connected when the central subscribes) and returns this peer's exit code.
    /// With `reconnecting` (central only) a dropped link is reconnected up to `reconnects` times in a row;
    /// otherwise Transport waits for the peer to come back (a peripheral's central reconnects on its own).
    /// One call per peer: several may share `inputs` (standard input is read once).
    func send(
        _ inputs: SendInputs, over peerLink: PeerLink, results: inout SendResults, reconnecting: Bool
    ) async -> SendExitCode {
        format == .msgpipe
            ? await sendReliably(over: peerLink, inputs: inputs, results: &results, reconnecting: reconnecting)
            : await sendPlain(over: peerLink, inputs: inputs, results: &results) ?? {
                printError("the link dropped before the transfer began")
                return .linkFailure
            }()
    }

    // MARK: msgpipe: Transport

    private func sendReliably(
        over peerLink: PeerLink, inputs: SendInputs, results: inout SendResults, reconnecting: Bool
    ) async -> SendExitCode {
        let transportBox = Mutex<Transport?>(nil)
        let reconnector = reconnecting
            ? CentralReconnector(
                link: link, peerLink: peerLink, attempts: reconnects, note: { [progress] in progress.note($0) },
                onGiveUp: { await transportBox.withLock { $0 }?.close() })
            : nil
        let observed = ObservedLink(
            peerLink,
            onEvent: { event in
                if case let .disconnected(reason) = event {
                    if let reconnector { reconnector.dropped(reason) } else { logger.debug("the link dropped (\(reason)); waiting for the central") }
                }
            },
            onSent: { [progress] in progress.add($0) })
        var options = TransportOptions()
        options.endpoint.maximumMessageSize = max(options.endpoint.maximumMessageSize, inputs.sizes.max() ?? 0)
        let transport = Transport(link: observed, options: options, logger: logger)
        transportBox.withLock { $0 = transport }
        let outcome = await sendMessages(
            inputs, over: transport, peerInfo: { peerLink.peerInfo }, results: &results,
            linkLost: { reconnector?.hasGivenUp ?? false })
        await reconnector?.stop()
        await transport.close()
        return outcome
    }

    func sendMessages(
        _ inputs: SendInputs, over transport: Transport, peerInfo: () -> MsgPipeServiceInfo?, results: inout SendResults,
        linkLost: () -> Bool
    ) async -> SendExitCode {
        for (index, path) in inputs.paths.enumerated() {
            let body: [UInt8]
            do {
                body = try inputs.body(index)
            } catch {
                printError(error.description)
                return .ioError
            }
            if let info = peerInfo(), body.count > Int(info.maximumMessageSize) {
                printError("\(Self.name(path)) (\(body.count) bytes) exceeds the listener's maximum message size of \(info.maximumMessageSize)")
                return .refused
            }
            let started = ContinuousClock.now
            do {
                try await transport.send(body, timeout: try remainingTime())
            } catch {
                if linkLost() {
                    printError("\(Self.name(path)): the link dropped and \(reconnects) reconnect attempts failed")
                    return .linkFailure
                } else if let error = error as? TransportError {
                    printError("\(Self.name(path)): \(error)")
                    return SendExitCode(error)
                } else {
                    printError("\(Self.name(path)): \(error)")
                    return .linkFailure
                }
            }
            results.acknowledged(index, bytes: body.count, since: started)
        }
        return .success
    }

    // MARK: Plain framing

    /// Sends every packet as a Write Command (as peripheral: a notification) except the very last one, which
    /// goes as a Write Request (as peripheral: an indication, where the central enabled them): its response
    /// (confirmation) means the peer's ATT layer took every packet (the bearer delivers in order).
    /// The peer takes part once its link is connected (as peripheral: once the central subscribed) and
    /// `onSubscribed` says it is wanted; nil means it never took part: the link dropped before, or
    /// `onSubscribed` returned false. Nothing was sent then.
    func sendPlain(
        over peerLink: PeerLink, inputs: SendInputs, results: inout SendResults,
        onSubscribed: () async -> Bool = { true }
    ) async -> SendExitCode? {
        let connectionEvents = AsyncStream<LinkEvent>.makeStream()
        let drain = Task {
            // Peer notifications are not part of a plain transfer; only connection changes matter.
            for await event in peerLink.events {
                if case .packet = event { continue }
                connectionEvents.continuation.yield(event)
            }
            connectionEvents.continuation.finish()
        }
        defer { drain.cancel() }
        var events = connectionEvents.stream.makeAsyncIterator()
        guard case let .connected(packetSize)? = await events.next(), await onSubscribed() else { return nil }
        let timedOut = OnceFlag()
        let watchdog = deadline.map { deadline in
            Task {
                do { try await Task.sleep(until: deadline) } catch { return }
                timedOut.set()
                await peerLink.close()
            }
        }
        defer { watchdog?.cancel() }
        var held: [UInt8]?
        do {
            for index in inputs.paths.indices {
                let started = ContinuousClock.now
                let body = try inputs.body(index)
                var encoder = try format.makeEncoder(payload: body, packetSize: packetSize)
                var packet: [UInt8] = []
                while encoder.writeNextPacket(into: &packet) {
                    if let previous = held {
                        try await peerLink.send(previous)
                        progress.add(previous.count)
                    }
                    held = packet
                }
                if index == inputs.paths.count - 1, let last = held {
                    // As peripheral, a central that enabled notifications only cannot confirm (see --help).
                    try await peerLink.sendConfirmed(last)
                    progress.add(last.count)
                    held = nil
                }
                results.acknowledged(index, bytes: body.count, since: started)
            }
            return .success
        } catch let error as FileIOError {
            printError(error.description)
            return .ioError
        } catch let error as FramingError {
            printError("cannot send in format \(format.rawValue): \(error)")
            return .dataError
        } catch {
            if timedOut.isSet {
                printError("not every packet was taken before the deadline (--timeout)")
                return .notAcknowledged
            }
            printError("the link failed: \(error)")
            return .linkFailure
        }
    }

    // MARK: Support

    /// The time left until the deadline (nil: none); throws when it passed.
    private func remainingTime() throws(TransportError) -> Duration? {
        guard let deadline else { return nil }
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { throw .deadlineExceeded(messageID: nil) }
        return left
    }

    static func name(_ path: String) -> String { path == "-" ? "standard input" : path }
}

/// The per-message report of `send --json`: one line per acknowledged message on standard output.
struct SendResults {
    let inputs: [String]
    let json: Bool
    /// The central a peripheral sent to (`send --name`: one line per central per message).
    var peer: String? = nil

    func acknowledged(_ index: Int, bytes: Int, since started: ContinuousClock.Instant) {
        guard json else { return }
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let line = Line(
            index: index + 1, file: SendSession.name(inputs[index]), bytes: bytes,
            seconds: JSONLine.rounded(seconds, decimals: 2) ?? 0, peer: peer)
        BluetoothDiagnostics.emit(JSONLine.text(line))
    }

    /// One `send --json` line.
    struct Line: Encodable {
        let index: Int
        let file: String
        let bytes: Int
        let seconds: Double
        /// The central's address (peripheral only; absent as central).
        let peer: String?
    }
}

/// A flag set once by one task and read by another.
final class OnceFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// `send`'s inputs, each FILE (or '-': standard input) one message, read when it is sent: a file from disk
/// each time, standard input once and kept, so one set of inputs can be sent to several peers.
final class SendInputs: Sendable {
    let paths: [String]
    /// The sizes known before sending (regular files; 0 for standard input or a pipe).
    let sizes: [Int]
    private let standardInput = Mutex<Result<[UInt8], FileIOError>?>(nil)

    init(paths: [String], sizes: [Int]) {
        self.paths = paths
        self.sizes = sizes
    }

    /// The body of input `index`.
    func body(_ index: Int) throws(FileIOError) -> [UInt8] {
        let path = paths[index]
        guard path == "-" else { return try SendInput.read(path) }
        let result = standardInput.withLock { cached in
            if let cached { return cached }
            let read = Result { () throws(FileIOError) in try SendInput.read(path) }
            cached = read
            return read
        }
        return try result.get()
    }
}
