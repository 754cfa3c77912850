public import Exchange
import ExchangePosix
public import MsgPipeCore

extension PipeServer {
    /// `serveRequests(with:idleTimeout:onEvent:)` with `handler`: its result is the response, its error a
    /// failed one. With `journal` (a directory, one server each, holding an `IdempotencyJournal`) a retried id
    /// gets the recorded response and `handler` runs once. Throws `ExchangeError` when the journal cannot be
    /// opened.
    ///
    /// ```swift
    /// try await server.serveRequests(journal: "/var/lib/till") { body in receipt(for: body) }
    /// ```
    public func serveRequests(
        journal: String? = nil, limits: ExchangeLimits = ExchangeLimits(), idleTimeout: Duration? = nil,
        handler: @escaping @Sendable (_ body: [UInt8]) async throws -> [UInt8]
    ) async throws(ExchangeError) {
        let server = try RequestServer(stateDirectory: journal, limits: limits, handler: handler)
        await serveRequests(with: server, idleTimeout: idleTimeout)
    }
}
