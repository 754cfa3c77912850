/// What sends a management command and returns its reply: ``ManagementSocket``, or a test's recorder that
/// answers with bytes from the specification. The connection parameter calls are written against it so their
/// order and bytes can be checked without a kernel.
public protocol ManagementCommandExecuting {
    /// Sends `command` and returns its return parameters; a failure status throws the matching
    /// ``BluetoothError`` (``ManagementSocket/execute(_:timeout:)``'s contract).
    @discardableResult
    func execute(_ command: ManagementCommand, timeout: Duration) throws(BluetoothError) -> [UInt8]
}

extension ManagementSocket: ManagementCommandExecuting {}
