import ArgumentParser
import Logging
import MsgPipe

/// `msgpipe send --spool DIR`: queues the inputs in a MessageOutbox, then delivers everything it holds to the
/// one peer, in order; exit 0 once DIR is empty. Whatever is not acknowledged stays in DIR for the next run.
extension SendCommand {
    func runSpool(_ directory: String, inputs: InputFiles, logger: Logger) async throws {
        // Key files are checked before anything is queued (a bad one is exit 78, nothing changed).
        let keys = queueOnly ? nil : try secure.centralKeys()
        var outboxOptions = MessageOutbox.Options()
        outboxOptions.maximumBytes = spoolLimit
        outboxOptions.logger = logger
        let outbox: MessageOutbox
        do {
            outbox = try MessageOutbox(directory: directory, options: outboxOptions)
        } catch {
            try fail("spool: \(cli: error)", .spoolUnusable)
        }
        defer { outbox.close() }
        // Every input is read before any is queued: a typo queues nothing.
        let bodies: [[UInt8]]
        do {
            bodies = try inputs.bodies()
        } catch {
            try fail(error.description, error.exitCode == 66 ? .noInput : .ioError)
        }
        do {
            try outbox.enqueue(contentsOf: bodies)
        } catch {
            switch error {
            case .full, .batchFull, .tooLarge: try fail("spool: \(cli: error)", .spoolFull)
            default: try fail("spool: \(cli: error)", .spoolUnusable)
            }
        }
        let queued = outbox.entries
        if queueOnly {
            printError("\(queued.count) messages queued in \(directory)")
            return
        }
        let progress = ProgressReporter(total: queued.reduce(0) { $0 + $1.size }, enabled: !json)
        var options = try pipeOptions(logger: logger, progress: progress)
        options.keys = keys
        let json = json
        let peer = try link.peerAddress()
        let report: MessageOutbox.Report
        do throws(OutboxError) {
            report = try await outbox.deliver(to: peer, options: options) { entry, elapsed in
                guard json else { return }
                BluetoothDiagnostics.emit(JSONLine.text(SpoolLine(spoolID: Int(entry.id), bytes: entry.size, seconds: JSONLine.seconds(elapsed))))
            }
        } catch {
            progress.finish(complete: false)
            switch error {
            case .io, .inUse, .foreignState, .corruptState: try fail("spool: \(cli: error)", .spoolUnusable)
            case .notAuthenticated: try fail("\(cli: error) (in \(directory))", .notAuthenticated)
            default: try fail("\(cli: error); they stay in \(directory)", .linkFailure)
            }
        }
        progress.finish(complete: report.refused.isEmpty)
        for refusal in report.refused {
            printError("message \(refusal.id) refused by the peer (\(refusal.reason)); set aside as \(refusal.path)")
        }
        if !report.refused.isEmpty { throw ExitCode(SendExitCode.refused.rawValue) }
    }

    /// One `send --spool --json` line: a queued message the peer acknowledged.
    struct SpoolLine: Encodable {
        let spoolID: Int
        let bytes: Int
        let seconds: Double

        enum CodingKeys: String, CodingKey {
            case bytes, seconds
            case spoolID = "spool_id"
        }
    }
}
