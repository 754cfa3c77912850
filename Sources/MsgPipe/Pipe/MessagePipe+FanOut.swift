extension MessagePipe {
    /// Connects to every peer at once, each as ``connect(to:options:)`` does on its own: a pipe per peer that
    /// reconnects and resumes by itself. Returns one result per peer, in `peers`' order. A peer that cannot be
    /// reached fails alone and never holds the others back: over Bluetooth the connects take turns on the
    /// adapter (`ConnectQueue`, one LE connection creation at a time), each for its own attempt only.
    ///
    /// ```swift
    /// let pipes = await MessagePipe.connect(toEach: ["door", "hall", "lobby"]).compactMap { try? $0.get() }
    /// let results = await MessagePipe.send(Array("open".utf8), to: pipes)   // one Result per pipe
    /// for (pipe, result) in zip(pipes, results) { print(pipe.peer, result) }
    /// ```
    public static func connect(toEach peers: [String], options: Options = Options()) async -> [Result<MessagePipe, any Error>] {
        await withTaskGroup(of: (Int, Result<MessagePipe, any Error>).self) { group in
            for (index, peer) in peers.enumerated() {
                group.addTask {
                    do {
                        return (index, .success(try await connect(to: peer, options: options)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Sends `message` to every pipe at once, each paced by its own link, and returns one result per pipe, in
    /// `pipes`' order: success means that pipe's peer acknowledged the whole message (msgpipe format). A pipe
    /// that fails, or stalls until `timeout`, fails alone: the others' deliveries neither wait for it nor are
    /// repeated because of it.
    public static func send(
        _ message: [UInt8], to pipes: [MessagePipe], timeout: Duration? = nil
    ) async -> [Result<Void, any Error>] {
        await withTaskGroup(of: (Int, Result<Void, any Error>).self) { group in
            for (index, pipe) in pipes.enumerated() {
                group.addTask {
                    do {
                        try await pipe.send(message, timeout: timeout)
                        return (index, .success(()))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }
}
