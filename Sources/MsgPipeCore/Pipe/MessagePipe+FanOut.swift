extension MessagePipe {
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
