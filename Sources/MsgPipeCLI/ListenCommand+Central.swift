import ArgumentParser
import MsgPipe
import MsgPipeStore
import UnixSignals

extension ListenCommand {
    /// The options of every pipe `listen` connects as the central, to one `--to` or to several: the link,
    /// the connection parameters (`--conn-interval`, `--conn-latency`, `--supervision-timeout`, `--phy`), the
    /// format and limits, reconnects without limit, and acknowledgements held until a message is kept. Both
    /// central paths start from this one value, so no option reaches one peer and not the others.
    func centralOptions() throws -> MessagePipe.Options {
        var options = try link.pipeOptions(format: format, verbose: verbose, printReconnects: false, connection: connection)
        options.logger = CLILogging.logger("listen", verbose: verbose)
        options.maximumMessageSize = maximumMessageSize
        options.reconnect.attempts = .max
        options.onLinkEvent = { event, link in CommandTaps.current.received?(event, link) }
        options.holdsAcknowledgements = true
        return options
    }

    /// `listen --to` / `--role central`: connects a pipe to the peripheral (it reconnects after each drop,
    /// without limit, so Transport resumes) and writes every message it sends, until a signal or `--count`
    /// messages.
    func receiveAsCentral(signals: UnixSignalsSequence) async throws {
        if link.hasSeveralPeers { return try await receiveFromPeers(try link.peerAddresses(), signals: signals) }
        // Key files are checked before anything connects.
        let keys = try secure.centralKeys()
        var options = try centralOptions()
        options.keys = keys
        let outcomes = AsyncStream<CentralOutcome>.makeStream()
        let sink = try openInbox(
            onCounted: { outcomes.continuation.yield(.counted) }, onFailure: { outcomes.continuation.yield(.failedOutput($0)) })
        let pipe: MessagePipe
        do {
            pipe = try await MessagePipe.connect(to: try link.peerAddress(), options: options)
        } catch let error as MessagePipeError {
            guard case .notAuthenticated = error else {
                printError(link.connectFailure(error))
                throw ExitCode(1)
            }
            printError("\(cli: error)")
            throw ExitCode(77)
        } catch {
            printError(link.connectFailure(error))
            throw ExitCode(1)
        }
        let carrier = (try? link.endpoint()) == .bluetooth ? pipe.carrier?.rawValue : nil
        printError("connected to \(pipe.peer)" + (carrier.map { " over \($0)" } ?? ""))
        if verbose, carrier != nil { printError("\(pipe.peer): \(pipe.linkParameters)") }
        let receiving = Task {
            for await message in pipe.messages {
                // Kept with what else arrived, then accepted; past a failure or --count, never accepted.
                sink.submit(message, as: MessageSink.Item(
                    body: message.bytes, messageID: message.id, connection: pipe.connections, peer: nil, link: carrier,
                    sender: message.sender, parameters: LinkParameterFields(carrier == nil ? nil : pipe.linkParameters)))
            }
            outcomes.continuation.yield(.ended)
        }
        Task {
            if await signals.firstSignal() != nil { outcomes.continuation.yield(.signal) }
        }
        var iterator = outcomes.stream.makeAsyncIterator()
        switch await iterator.next() {
        case let .failedOutput(error)?:
            try fail(error)
        case .ended?:
            await sink.close()
            if let error = sink.failure { try fail(error) }
            if pipe.rejection != nil {  // logged by the pipe as it closed
                await pipe.close()
                throw ExitCode(1)
            }
        case .counted?:
            // --count: let the peripheral take its last acknowledgement (plain formats: the confirmation of
            // its last indication) and end the connection (at most 2 s).
            await sink.close()
            await pipe.close(awaitingDropWithin: .seconds(2))
        case .signal?, nil:
            // What arrived whole is kept (and accepted); a partial message is dropped with the process.
            receiving.cancel()
            await sink.close()
            if let error = sink.failure { try fail(error) }
        }
    }

    /// Several `--to`: one pipe per peer, connected at once, each reconnecting and resuming on its own. Every
    /// message is written whole as it arrives, with its `--to` as `peer` and its link's parameters (`--json`),
    /// or in that peer's folder (`--out-dir`). A peer that cannot be connected at first is named and the others are received from; the
    /// exit code is then 1 when the others end (signal or `--count`).
    private func receiveFromPeers(_ peers: [String], signals: UnixSignalsSequence) async throws {
        let options = try centralOptions()
        let outcomes = AsyncStream<CentralOutcome>.makeStream()
        let sink = try openInbox(
            onCounted: { outcomes.continuation.yield(.counted) }, onFailure: { outcomes.continuation.yield(.failedOutput($0)) })
        var pipes: [(peer: String, pipe: MessagePipe)] = []
        var unreachable: [String] = []
        for (peer, result) in zip(peers, await MessagePipe.connect(toEach: peers, options: options)) {
            switch result {
            case let .success(pipe):
                let carrier = (try? link.endpoint()) == .bluetooth ? pipe.carrier?.rawValue : nil
                printError("connected to \(peer)" + (peer == pipe.peer ? "" : " (\(pipe.peer))") + (carrier.map { " over \($0)" } ?? ""))
                pipes.append((peer, pipe))
            case let .failure(error):
                printError("cannot connect to \(peer): \(cli: error)")
                unreachable.append(peer)
            }
        }
        guard !pipes.isEmpty else { throw ExitCode(1) }
        let byFolder = outDirectory != nil
        let bluetooth = (try? link.endpoint()) == .bluetooth
        let receiving = Task { [pipes] in
            await withDiscardingTaskGroup { group in
                for (peer, pipe) in pipes {
                    group.addTask {
                        let carrier = bluetooth ? pipe.carrier?.rawValue : nil
                        for await message in pipe.messages {
                            sink.submit(message, as: MessageSink.Item(
                                body: message.bytes, messageID: message.id, connection: pipe.connections, peer: peer,
                                link: carrier, parameters: LinkParameterFields(carrier == nil ? nil : pipe.linkParameters),
                                folder: byFolder ? MessageDirectory.folderName(peer) : nil))
                        }
                    }
                }
            }
            outcomes.continuation.yield(.ended)
        }
        Task {
            if await signals.firstSignal() != nil { outcomes.continuation.yield(.signal) }
        }
        loop: for await outcome in outcomes.stream {
            switch outcome {
            case let .failedOutput(error):
                receiving.cancel()
                try fail(error)
            case .counted:
                // Each peer takes its last acknowledgement and ends its connection (at most 2 s).
                await sink.close()
                await withDiscardingTaskGroup { group in
                    for (_, pipe) in pipes { group.addTask { await pipe.close(awaitingDropWithin: .seconds(2)) } }
                }
                break loop
            case .ended, .signal:
                // What arrived whole is kept (and accepted); a partial message is dropped with the process.
                receiving.cancel()
                break loop
            }
        }
        await sink.close()
        if let error = sink.failure { try fail(error) }
        if !unreachable.isEmpty {
            printError("not every peer was connected: \(unreachable.joined(separator: ", "))")
            throw ExitCode(1)
        }
    }
}

/// What ends `listen` as the central.
private enum CentralOutcome: Sendable {
    case failedOutput(InboxError)
    case counted
    case ended
    case signal
}
