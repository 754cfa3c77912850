import Synchronization

/// A one-shot slot for the answer to one ATT request: the first completion wins (response, timeout or
/// disconnect), later ones are ignored; the requester may wait before or after it arrives.
final class ResponseWaiter: Sendable {
    private struct State {
        var result: Result<[UInt8], ATTError>?
        var continuation: CheckedContinuation<Result<[UInt8], ATTError>, Never>?
    }

    let requestOpcode: UInt8
    private let state = Mutex(State())

    init(requestOpcode: UInt8) { self.requestOpcode = requestOpcode }

    func complete(_ result: Result<[UInt8], ATTError>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<[UInt8], ATTError>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            return state.continuation.take()
        }
        continuation?.resume(returning: result)
    }

    func value() async -> Result<[UInt8], ATTError> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<[UInt8], ATTError>? in
                if let result = state.result { return result }
                state.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
