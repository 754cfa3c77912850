import Glibc

extension BlockingCall {
    /// ``run(threadStartFailure:_:)`` for a Bluetooth call: a thread that cannot start throws
    /// ``BluetoothError/system(call:errno:message:)`` of `pthread_create`.
    public static func run<T: Sendable>(
        _ body: @escaping @Sendable () throws(BluetoothError) -> T
    ) async throws(BluetoothError) -> T {
        try await run(threadStartFailure: threadNotStarted, body)
    }

    static func threadNotStarted(_ status: Int32) -> BluetoothError {
        .system(call: "pthread_create", errno: status, message: String(cString: strerror(status)))
    }
}
