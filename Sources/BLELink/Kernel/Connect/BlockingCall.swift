import Glibc

/// Runs a blocking call (accept, connect, scan; a test's process start) on a thread of its own and resumes
/// the caller when it returns, so async code never blocks a cooperative thread: there is one per core, shared by
/// every task of the process.
///
/// ```swift
/// let socket = try await BlockingCall.run { () throws(BluetoothError) in try listener.accept() }
/// ```
public enum BlockingCall {
    /// Runs `body` on a new detached thread; returns or throws what `body` did. When no thread can be started
    /// (the process is out of threads), `body` runs on the caller's thread instead: slower for the others, not lost.
    public static func run<T: Sendable, E: Error>(
        _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            let call: @Sendable () -> Void = { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
            if DetachedThread.spawn(call) != 0 { call() }
        }
        return try result.get()
    }
}

/// A connected ATT socket handed over by value: the receiver owns `fileDescriptor` and must close it
/// (C's `ATTBearer(adopting:)` does).
public struct ConnectedATTSocket: Sendable, Equatable {
    public var fileDescriptor: Int32
    public var peer: BluetoothPeer

    public init(fileDescriptor: Int32, peer: BluetoothPeer) {
        self.fileDescriptor = fileDescriptor
        self.peer = peer
    }
}

extension L2CAPConnection {
    /// Gives up ownership of the socket: the returned value's descriptor must be closed by the receiver.
    public consuming func handOver() -> ConnectedATTSocket {
        let peer = self.peer
        return ConnectedATTSocket(fileDescriptor: socket.release(), peer: peer)
    }
}
