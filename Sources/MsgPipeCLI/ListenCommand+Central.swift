import ArgumentParser
import MsgPipe
import Secure

extension ListenCommand {
    /// `listen --to` / `--role central`: connects a pipe to the peripheral (it reconnects after each drop,
    /// without limit, so Transport resumes) and writes every message it sends, until a signal or `--count`
    /// messages.
    func receiveAsCentral(sink: sending MessageSink, shutdown: ShutdownSignal) async throws {
        // Key files are checked before anything connects.
        let credentials = secure.isEnabled ? try secure.credentials() : nil
        var options = try link.pipeOptions(format: format, verbose: verbose, printReconnects: false, connection: connection)
        options.logger = CLILogging.logger("listen", verbose: verbose)
        options.maximumMessageSize = maximumMessageSize
        options.reconnect.attempts = .max
        options.onLinkEvent = { event, link in CommandTaps.current.received?(event, link) }
        let pipe: MessagePipe
        do {
            pipe = try await MessagePipe.connect(to: try link.peerAddress(), options: options)
        } catch {
            printError(link.connectFailure(error))
            throw ExitCode(1)
        }
        let carrier = (try? link.endpoint()) == .bluetooth ? pipe.linkKind : nil
        printError("connected to \(pipe.peer)" + (carrier.map { " over \($0)" } ?? ""))
        if verbose, carrier != nil { printError("\(pipe.peer): \(pipe.linkParameters)") }
        if let credentials {
            return try await receiveSealed(from: pipe, credentials: credentials, sink: sink, carrier: carrier)
        }
        let receiving = Task { [count] () -> FileIOError? in
            for await message in pipe.messages {
                do throws(FileIOError) {
                    try sink.write(
                        message.bytes, messageID: message.id, connection: pipe.connections, peer: nil, link: carrier,
                        parameters: LinkParameterFields(carrier == nil ? nil : pipe.linkParameters))
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
            // --count: let the peripheral take its last acknowledgement (plain formats: the confirmation of
            // its last indication) and end the connection (at most 2 s).
            await pipe.close(awaitingDropWithin: .seconds(2))
        case .none?, nil:
            // Whole messages were written as they arrived; a partial one is dropped with the process.
            receiving.cancel()
        }
    }

    /// End to end as the central: the handshake, then each opened message written until the peripheral ends
    /// the connection, `--count` messages, or a record that does not open (exit 1).
    private func receiveSealed(
        from pipe: MessagePipe, credentials: SecureCredentials, sink: MessageSink, carrier: String?
    ) async throws {
        let channel: SecureChannel
        do {
            guard let transport = pipe.transport else { throw SecureError.handshakeFailed("no Transport") }
            channel = try await SecureChannel.initiate(over: transport, credentials: credentials, timeout: .seconds(15))
        } catch {
            printError("\(error)")
            await pipe.close()
            throw ExitCode(SendSession.exitCode(error) == .notAuthenticated ? 77 : 1)
        }
        var sender: AuthorizedKeys.Entry?
        if case let .identity(_, peer) = credentials { sender = AuthorizedKeys.Entry(name: nil, key: peer) }
        var written = 0
        while true {
            let message: SecureMessage?
            do {
                message = try await channel.receive()
            } catch {
                printError("\(error)")
                await pipe.close()
                throw ExitCode(1)
            }
            guard let message else { return }
            do throws(FileIOError) {
                try sink.write(message.plaintext, messageID: message.received.messageID, connection: pipe.connections,
                    peer: nil, link: carrier, sender: sender)
            } catch {
                try fail(error)
            }
            written += 1
            if let count, written >= count {
                await pipe.close(awaitingDropWithin: .seconds(2))
                return
            }
        }
    }
}
