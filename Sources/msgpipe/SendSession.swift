import GATT
import BLELink
import Framing
import Logging
import Synchronization
import Transport

/// One run of `msgpipe send`: connects the GATT link, sends the inputs in order (through Transport, or as
/// plain framing), reconnects a dropped link for Transport, and maps what happened to a ``SendExitCode``.
struct SendSession {
    let link: LinkOptions
    let format: FrameFormat
    let profile: GATTServiceProfile
    let progress: ProgressReporter
    let logger: Logger
    let reconnects: Int
    let deadline: ContinuousClock.Instant?

    func run(inputs: [String], sizes: [Int], json: Bool) async -> SendExitCode {
        let gattLink = GATTLink(profile: profile)
        do {
            let peer = try await link.connect(gattLink) { [progress] in progress.note("\($0)") }
            logger.debug("connected to \(peer)")
        } catch {
            printError("cannot connect to \(link.displayName): \(error)")
            return .linkFailure
        }
        if let info = gattLink.peerInfo, !info.formats.contains(ListenCommand.advertisedFormats(format)) {
            printError("the listener does not speak --format \(format.rawValue) (its info characteristic says so)")
            await gattLink.close()
            return .refused
        }
        var results = SendResults(inputs: inputs, json: json)
        let outcome =
            format == .msgpipe
            ? await sendReliably(over: gattLink, inputs: inputs, sizes: sizes, results: &results)
            : await sendPlain(over: gattLink, inputs: inputs, results: &results)
        await gattLink.close()
        return outcome
    }

    // MARK: msgpipe: Transport

    private func sendReliably(
        over gattLink: GATTLink, inputs: [String], sizes: [Int], results: inout SendResults
    ) async -> SendExitCode {
        let drops = AsyncStream<String>.makeStream()
        let observed = ObservedLink(
            gattLink,
            onEvent: { if case let .disconnected(reason) = $0 { drops.continuation.yield(reason) } },
            onSent: { [progress] in progress.add($0) })
        var options = TransportOptions()
        options.endpoint.maximumMessageSize = max(options.endpoint.maximumMessageSize, sizes.max() ?? 0)
        let transport = Transport(link: observed, options: options, logger: logger)
        let linkLost = OnceFlag()
        let supervisor = Task { [link, progress, reconnects] in
            for await reason in drops.stream {
                progress.note("the link dropped (\(reason)); reconnecting")
                guard await Self.reconnect(gattLink, with: link, attempts: reconnects, progress: progress) else {
                    linkLost.set()
                    await transport.close()
                    return
                }
            }
        }
        defer {
            supervisor.cancel()
            drops.continuation.finish()
        }
        for (index, path) in inputs.enumerated() {
            let body: [UInt8]
            do {
                body = try SendInput.read(path)
            } catch {
                printError(error.description)
                await transport.close()
                return .ioError
            }
            if let info = gattLink.peerInfo, body.count > Int(info.maximumMessageSize) {
                printError("\(Self.name(path)) (\(body.count) bytes) exceeds the listener's maximum message size of \(info.maximumMessageSize)")
                await transport.close()
                return .refused
            }
            let started = ContinuousClock.now
            do {
                try await transport.send(body, timeout: try remainingTime())
            } catch {
                let code: SendExitCode
                if linkLost.isSet {
                    printError("\(Self.name(path)): the link dropped and \(reconnects) reconnect attempts failed")
                    code = .linkFailure
                } else if let error = error as? TransportError {
                    printError("\(Self.name(path)): \(error)")
                    code = SendExitCode(error)
                } else {
                    printError("\(Self.name(path)): \(error)")
                    code = .linkFailure
                }
                await transport.close()
                return code
            }
            results.acknowledged(index, bytes: body.count, since: started)
        }
        await transport.close()
        return .success
    }

    /// Brings a dropped link back: immediately, then with exponential backoff; false after `attempts` failures.
    private static func reconnect(
        _ gattLink: GATTLink, with link: LinkOptions, attempts: Int, progress: ProgressReporter
    ) async -> Bool {
        let backoff = ReconnectBackoff(attempts: attempts)
        for failures in 0..<attempts {
            let delay = backoff.delay(afterFailures: failures)
            if delay > 0 {
                do { try await Task.sleep(for: .milliseconds(Int64(delay * 1000))) } catch { return false }
            }
            do {
                let peer = try await link.connect(gattLink)
                progress.note("reconnected to \(peer)")
                return true
            } catch {
                progress.note("reconnect attempt \(failures + 1) of \(attempts) failed: \(error)")
            }
        }
        return false
    }

    // MARK: Plain framing

    /// Sends every packet as a Write Command except the very last one, which goes as a Write Request: its
    /// response means the peer's ATT layer took every packet (the bearer delivers in order).
    private func sendPlain(over gattLink: GATTLink, inputs: [String], results: inout SendResults) async -> SendExitCode {
        let connectionEvents = AsyncStream<LinkEvent>.makeStream()
        let drain = Task {
            // Peer notifications are not part of a plain transfer; only connection changes matter.
            for await event in gattLink.events {
                if case .packet = event { continue }
                connectionEvents.continuation.yield(event)
            }
            connectionEvents.continuation.finish()
        }
        defer { drain.cancel() }
        var events = connectionEvents.stream.makeAsyncIterator()
        guard case let .connected(packetSize)? = await events.next() else {
            printError("the link dropped before the transfer began")
            return .linkFailure
        }
        let timedOut = OnceFlag()
        let watchdog = deadline.map { deadline in
            Task {
                do { try await Task.sleep(until: deadline) } catch { return }
                timedOut.set()
                await gattLink.close()
            }
        }
        defer { watchdog?.cancel() }
        var held: [UInt8]?
        do {
            for (index, path) in inputs.enumerated() {
                let started = ContinuousClock.now
                let body = try SendInput.read(path)
                var encoder = try format.makeEncoder(payload: body, packetSize: packetSize)
                var packet: [UInt8] = []
                while encoder.writeNextPacket(into: &packet) {
                    if let previous = held {
                        try await gattLink.send(previous)
                        progress.add(previous.count)
                    }
                    held = packet
                }
                if index == inputs.count - 1, let last = held {
                    try await gattLink.sendConfirmed(last)
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

    func acknowledged(_ index: Int, bytes: Int, since started: ContinuousClock.Instant) {
        guard json else { return }
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let line = Line(
            index: index + 1, file: SendSession.name(inputs[index]), bytes: bytes,
            seconds: JSONLine.rounded(seconds, decimals: 2) ?? 0)
        BluetoothDiagnostics.emit(JSONLine.text(line))
    }

    /// One `send --json` line.
    struct Line: Encodable {
        let index: Int
        let file: String
        let bytes: Int
        let seconds: Double
    }
}

/// A flag set once by one task and read by another.
final class OnceFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
