import Secure
import Synchronization

/// The `listen` output shared by concurrently served centrals: one message written whole at a time, at
/// most `limit` messages (`--count`).
final class SharedMessageSink: Sendable {
    private struct State {
        var sink: MessageSink
        var failure: FileIOError?
        var written = 0
    }

    private let state: Mutex<State>
    private let limit: Int?
    private let onFailure: @Sendable (FileIOError) -> Void
    private let onLimit: @Sendable () -> Void

    /// `onFailure` sees the first write error (the output is gone: the command ends with its exit code),
    /// `onLimit` runs once `limit` messages were written.
    init(
        _ sink: sending MessageSink, limit: Int? = nil, onFailure: @escaping @Sendable (FileIOError) -> Void = { _ in },
        onLimit: @escaping @Sendable () -> Void = {}
    ) {
        state = Mutex(State(sink: sink))
        self.limit = limit
        self.onFailure = onFailure
        self.onLimit = onLimit
    }

    /// The first error writing the output, if any.
    var failure: FileIOError? { state.withLock { $0.failure } }

    /// True once `limit` messages were written.
    var reachedLimit: Bool { state.withLock { state in limit.map { state.written >= $0 } ?? false } }

    /// Writes one message; throws the output's error, or ``FileIOError`` "limit" once `limit` messages were
    /// written (the message is then not written: the receiving of that central stops).
    func write(
        _ body: [UInt8], messageID: UInt32?, connection: Int, peer: String?, link: String? = nil,
        sender: AuthorizedKeys.Entry? = nil, folder: String? = nil
    ) throws(FileIOError) {
        enum Outcome { case written(reachedLimit: Bool), failed(FileIOError, first: Bool), full }
        let outcome = state.withLock { state -> Outcome in
            if let failure = state.failure { return .failed(failure, first: false) }
            if let limit, state.written >= limit { return .full }
            do throws(FileIOError) {
                try state.sink.write(
                    body, messageID: messageID, connection: connection, peer: peer, link: link, sender: sender, folder: folder)
            } catch {
                state.failure = error
                return .failed(error, first: true)
            }
            state.written += 1
            return .written(reachedLimit: limit == state.written)
        }
        switch outcome {
        case let .written(reachedLimit):
            if reachedLimit { onLimit() }
        case let .failed(error, first):
            if first { onFailure(error) }
            throw error
        case .full:
            throw FileIOError(description: "--count messages were written", exitCode: 0)
        }
    }
}
