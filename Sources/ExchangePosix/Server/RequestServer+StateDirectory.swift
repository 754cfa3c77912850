public import Exchange
public import Logging

extension RequestServer {
    /// A server running `runner` for each request, keeping its journal (an ``IdempotencyJournal``) in
    /// `stateDirectory` (created if missing; one server per directory). Throws ``ExchangeError/journalInUse(path:)``
    /// while another server holds the directory, ``ExchangeError/journal(_:)`` when the journal cannot be read.
    ///
    /// ```swift
    /// let server = try RequestServer(stateDirectory: "/var/lib/till", runner: CommandRunner(command: "charge"))
    /// ```
    public init(
        stateDirectory: String, runner: CommandRunner, limits: ExchangeLimits = ExchangeLimits(),
        logger: Logger? = nil
    ) throws(ExchangeError) {
        let journal = try IdempotencyJournal(directory: stateDirectory, limits: limits, logger: logger)
        self.init(journal: journal, runner: runner, limits: limits, logger: logger)
    }

    /// A server answering each request with `handler` (see ``RequestServer/init(journal:limits:logger:handler:)``),
    /// with its journal in `stateDirectory` (created if missing; one server per directory) or none when nil.
    ///
    /// ```swift
    /// let server = try RequestServer(stateDirectory: "/var/lib/till") { body in receipt(for: body) }
    /// ```
    public init(
        stateDirectory: String?, limits: ExchangeLimits = ExchangeLimits(), logger: Logger? = nil,
        handler: @escaping @Sendable (_ body: [UInt8]) async throws -> [UInt8]
    ) throws(ExchangeError) {
        let journal = try stateDirectory.map { (directory) throws(ExchangeError) in
            try IdempotencyJournal(directory: directory, limits: limits, logger: logger)
        }
        self.init(journal: journal, limits: limits, logger: logger, handler: handler)
    }
}
