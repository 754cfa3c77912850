import ArgumentParser
import MsgPipe
import Secure

extension ListenCommand {
    /// `listen --to` / `--role central`: connects a pipe to the peripheral (it reconnects after each drop,
    /// without limit, so Transport resumes) and writes every message it sends, until a signal or `--count`
    /// messages.
    func receiveAsCentral(sink: sending MessageSink, shutdown: ShutdownSignal) async throws {
        // Key files are checked before anything connects.
        let keys = try secure.centralKeys()
        var options = try link.pipeOptions(format: format, verbose: verbose, printReconnects: false, connection: connection)
        options.logger = CLILogging.logger("listen", verbose: verbose)
        options.maximumMessageSize = maximumMessageSize
        options.reconnect.attempts = .max
        options.onLinkEvent = { event, link in CommandTaps.current.received?(event, link) }
        options.keys = keys
        let pipe: MessagePipe
        do {
            pipe = try await MessagePipe.connect(to: try link.peerAddress(), options: options)
        } catch let error as MessagePipeError {
            guard case .notAuthenticated = error else {
                printError(link.connectFailure(error))
                throw ExitCode(1)
            }
            printError("\(error)")
            throw ExitCode(77)
        } catch {
            printError(link.connectFailure(error))
            throw ExitCode(1)
        }
        let carrier = (try? link.endpoint()) == .bluetooth ? pipe.linkKind : nil
        printError("connected to \(pipe.peer)" + (carrier.map { " over \($0)" } ?? ""))
        if verbose, carrier != nil { printError("\(pipe.peer): \(pipe.linkParameters)") }
        let receiving = Task { [count] () -> FileIOError? in
            for await message in pipe.messages {
                do throws(FileIOError) {
                    try sink.write(
                        message.bytes, messageID: message.id, connection: pipe.connections, peer: nil, link: carrier,
                        sender: message.sender, parameters: LinkParameterFields(carrier == nil ? nil : pipe.linkParameters))
                } catch {
                    return error
                }
                if let count, sink.count >= count { return nil }
            }
            return nil
        }
        let outcomes = AsyncStream<FileIOError??>.makeStream()
        Task {
            outcomes.continuation.yield(.some(await receiving.value))
        }
        Task {
            _ = await shutdown.wait()
            outcomes.continuation.yield(.none)
        }
        var iterator = outcomes.stream.makeAsyncIterator()
        switch await iterator.next() {
        case let .some(error)?:
            if let error { try fail(error) }
            if pipe.rejection != nil {  // logged by the pipe as it closed
                await pipe.close()
                throw ExitCode(1)
            }
            // --count: let the peripheral take its last acknowledgement (plain formats: the confirmation of
            // its last indication) and end the connection (at most 2 s).
            await pipe.close(awaitingDropWithin: .seconds(2))
        case .none?, nil:
            // Whole messages were written as they arrived; a partial one is dropped with the process.
            receiving.cancel()
        }
    }
}
