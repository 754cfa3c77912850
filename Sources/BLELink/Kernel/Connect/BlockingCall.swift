import Glibc

/// Runs a blocking kernel call (accept, connect, scan) on a thread of its own and resumes the caller when it
/// returns, so async code never blocks a cooperative thread on Bluetooth I/O.
public enum BlockingCall {
    /// Runs `body` on a new detached thread; returns or throws what `body` did.
    public static func run<T: Sendable>(
        _ body: @escaping @Sendable () throws(BluetoothError) -> T
    ) async throws(BluetoothError) -> T {
        let result: Result<T, BluetoothError> = await withCheckedContinuation { continuation in
            let status = DetachedThread.spawn {
                do throws(BluetoothError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            if status != 0 {
                continuation.resume(returning: .failure(
                    .system(call: "pthread_create", errno: status, message: String(cString: strerror(status)))))
            }
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
