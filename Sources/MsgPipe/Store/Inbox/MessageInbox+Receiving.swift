public import MsgPipeCore

/// How ``MessageInbox/receive(from:onPipe:forwarding:as:)`` (a server's centrals) or
/// ``MessageInbox/receive(fromEach:forwarding:as:)`` (a central's pipes) ended. What was kept stays kept and
/// acknowledged; a message that arrived whole but was not kept is never acknowledged, so its sender sends it
/// again.
public enum ReceiveEnd: Sendable {
    /// Every pipe's messages ended: a server stopped serving (closed, every connection it was to serve served,
    /// or failed: its `PipeServer.failure` says which), a central's pipes ended.
    case ended
    /// The inbox kept its ``MessageInbox/Options/limit``; the peers had up to 2 s to take their last
    /// acknowledgements and leave before the server or the pipes were closed, and closing handed the links
    /// what was still owed (up to 2 s more).
    case limitReached
    /// The inbox failed (the output or the journal): nothing handed to it since was kept or acknowledged.
    case failed(InboxError)
    /// `forwarding` threw this for a message: it was not kept, and that peer's messages are read no further.
    case forwardFailed(any Error)
    /// The task was cancelled; a message only partly received is dropped.
    case cancelled
}

extension MessageInbox {
    /// Keeps every message of every central `server` serves, as it arrives (the centrals interleave message by
    /// message; each message is acknowledged once kept, as ``submit(_:as:)`` does), until the server ends, the
    /// inbox reaches its limit or fails, `forwarding` throws, or the task is cancelled. Needs
    /// `MessagePipe.Options.holdsAcknowledgements`. `onPipe` hears each central as it subscribes; `forwarding`
    /// (nil: none) runs for each message before it is kept, so a message is acknowledged only once both took it.
    /// At the limit the server is closed once its centrals left, or after 2 s; closing first hands each
    /// central's link the acknowledgements still owed (at most 2 s more), so every message kept is acknowledged.
    ///
    /// ```swift
    /// var options = MessagePipe.Options()
    /// options.holdsAcknowledgements = true
    /// let server = try await MessagePipe.advertise(name: "kitchen", options: options)
    /// let inbox = try MessageInbox(directory: "inbox")
    /// let end = await inbox.receive(from: server) { message, _ in MessageDirectory.Item(bytes: message.bytes) }
    /// await inbox.close()
    /// ```
    public func receive(
        from server: PipeServer, onPipe: @escaping @Sendable (MessagePipe) -> Void = { _ in },
        forwarding: (@Sendable (PipeMessage, MessagePipe) async throws -> Void)? = nil,
        as item: @escaping @Sendable (PipeMessage, MessagePipe) -> Output.Item
    ) async -> ReceiveEnd {
        let end = await receive(from: server.centrals, onPipe: onPipe, forwarding: forwarding, as: item)
        if case .limitReached = end {
            await server.waitUntilNoCentrals(timeout: .seconds(2))
            await server.close()
        }
        return end
    }

    /// Keeps every message of every pipe, as ``receive(from:onPipe:forwarding:as:)`` does for a server's
    /// centrals: a central connected to several peripherals (`MessagePipe.connect(toEach:options:)`). At the
    /// limit each pipe hands its link the acknowledgements still owed (at most 2 s), then is closed once its
    /// peer ended the connection, or after 2 s more. Other ends leave the pipes open.
    ///
    /// ```swift
    /// let pipes = await MessagePipe.connect(toEach: ["door", "hall"], options: options).compactMap { try? $0.get() }
    /// let end = await inbox.receive(fromEach: pipes) { message, pipe in
    ///     MessageDirectory.Item(bytes: message.bytes, folder: MessageDirectory.folderName(pipe.peer))
    /// }
    /// ```
    public func receive(
        fromEach pipes: [MessagePipe], forwarding: (@Sendable (PipeMessage, MessagePipe) async throws -> Void)? = nil,
        as item: @escaping @Sendable (PipeMessage, MessagePipe) -> Output.Item
    ) async -> ReceiveEnd {
        let (stream, continuation) = AsyncStream<MessagePipe>.makeStream()
        for pipe in pipes { continuation.yield(pipe) }
        continuation.finish()
        let end = await receive(from: stream, onPipe: { _ in }, forwarding: forwarding, as: item)
        if case .limitReached = end {
            await withDiscardingTaskGroup { group in
                for pipe in pipes { group.addTask { await pipe.close(awaitingDropWithin: .seconds(2)) } }
            }
        }
        return end
    }

    /// The loop both share: a task per pipe, each submitting its messages in order; the first end wins. At the
    /// limit the pipes are left to take their acknowledgements; any other end stops reading them.
    private func receive<Pipes: AsyncSequence & Sendable>(
        from pipes: Pipes, onPipe: @escaping @Sendable (MessagePipe) -> Void,
        forwarding: (@Sendable (PipeMessage, MessagePipe) async throws -> Void)?,
        as item: @escaping @Sendable (PipeMessage, MessagePipe) -> Output.Item
    ) async -> ReceiveEnd where Pipes.Element == MessagePipe, Pipes.Failure == Never {
        let (ends, end) = AsyncStream<ReceiveEnd>.makeStream()
        observe { end.yield($0) }
        let receiving = Task {
            await withDiscardingTaskGroup { group in
                for await pipe in pipes {
                    onPipe(pipe)
                    group.addTask {
                        for await message in pipe.messages {
                            do {
                                try await forwarding?(message, pipe)
                            } catch {
                                end.yield(.forwardFailed(error))
                                return
                            }
                            // Kept with what else arrived, then accepted; past a failure or the limit, never accepted.
                            self.submit(message, as: item(message, pipe))
                        }
                    }
                }
            }
            end.yield(.ended)
        }
        let first = await withTaskCancellationHandler {
            var iterator = ends.makeAsyncIterator()
            return await iterator.next() ?? .cancelled
        } onCancel: {
            end.yield(.cancelled)
        }
        if case .limitReached = first {} else { receiving.cancel() }
        return first
    }
}
