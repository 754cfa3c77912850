/// A connected ATT bearer: whole PDUs in both directions, sends paced by the isReady contract.
///
/// The GATT server and client run over any conforming type: BLESocket's `ATTBearer` binds one to a kernel
/// L2CAP or UNIX SEQPACKET socket; GATTTests use an in-memory pair. Both pace sends with Backpressure's
/// `ReadinessGate` (refused, then ready) and buffer received PDUs in its `BoundedAsyncQueue`.
public protocol ATTConnection: AnyObject, Sendable {
    /// Sends one PDU if the bearer takes it now; false when it is full ("not ready": wait with
    /// ``waitUntilReady()``). Throws when the connection is gone.
    func trySend(_ pdu: ArraySlice<UInt8>) throws(ATTError) -> Bool

    /// Sends one PDU, suspending while the bearer is full. Throws ``ATTError/cancelled`` if cancelled while
    /// waiting (the PDU was then not sent).
    func send(_ pdu: ArraySlice<UInt8>) async throws(ATTError)

    /// True unless the last send found the bearer full and it has not drained since.
    var isReady: Bool { get }

    /// Returns once the bearer can take more PDUs (at once if it can).
    func waitUntilReady() async throws(ATTError)

    /// The next PDU or the disconnect, in arrival order; nil once the disconnect was delivered, after
    /// ``close()``, or when the task is cancelled. Single consumer.
    func receive() async -> ATTBearerEvent?

    /// Closes the connection (the peer sees the disconnect) and fails pending operations.
    func close()

    /// How the link is secured now; nil when the bearer cannot tell (a UNIX socket, an in-memory link).
    var linkSecurity: ATTLinkSecurity? { get }
}

extension ATTConnection {
    public var linkSecurity: ATTLinkSecurity? { nil }
}
