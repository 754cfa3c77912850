public import BluetoothCore
public import GATT
import Glibc

/// ATT over a connected SOCK_SEQPACKET socket: one PDU per packet, non-blocking, driven by `poll()` on a
/// thread of its own. An L2CAP ATT-channel socket and a UNIX-domain SEQPACKET socket run the same code.
///
/// Sends never block: ``trySend(_:)`` answers false when the socket is full (the isReady contract) and
/// ``send(_:)`` waits for POLLOUT, in call order, through Backpressure's `ReadinessGate`. Receiving is backpressured: at most `receiveCapacity` PDUs wait for the
/// consumer; beyond that the bearer stops reading and the peer's sends stall in the kernel.
public final class ATTBearer: ATTConnection {
    private let core: BearerCore

    /// Takes ownership of `fd`, a connected SOCK_SEQPACKET socket, and starts its poll thread.
    public init(adopting fd: Int32, receiveCapacity: Int = 16) throws(ATTError) {
        core = try BearerCore(fd: fd, receiveCapacity: max(1, receiveCapacity))
        try core.start()
    }

    deinit { core.close() }

    /// Sends one PDU if the socket takes it now; false when it is full ("not ready", wait with
    /// ``waitUntilReady()``). Throws when the connection is gone.
    public func trySend(_ pdu: ArraySlice<UInt8>) throws(ATTError) -> Bool { try core.trySend(pdu) }

    /// Sends one PDU, suspending while the socket is full. Throws ``ATTError/cancelled`` if cancelled while
    /// waiting (the PDU was then not sent).
    public func send(_ pdu: ArraySlice<UInt8>) async throws(ATTError) {
        try await core.send(pdu)
    }

    /// True unless the last send found the socket full and it has not drained since.
    public var isReady: Bool { core.gate.isReady }

    /// The LE PHYs of the connection, while it is open and the kernel tells them (an L2CAP ATT socket; nil
    /// for a UNIX socket).
    public var phy: LinkPHY? { core.phy }

    /// How the link is secured now, as the kernel tells it for an L2CAP socket (nil for a UNIX socket, or
    /// once closed). Encryption raises it while the connection lasts.
    public var linkSecurity: ATTLinkSecurity? { core.withOpenDescriptor { BluetoothSocketOption.linkSecurity($0) } ?? nil }

    /// Times reading resumed after a full inbox (the watermarks' hysteresis; for tests).
    var receiveResumes: Int { core.resumes }

    /// Returns once the socket can take more PDUs (at once if it can).
    public func waitUntilReady() async throws(ATTError) { try await core.waitUntilReady() }

    /// The next PDU or the disconnect, in arrival order; nil once the disconnect was delivered, after
    /// ``close()``, or when the task is cancelled. Single consumer.
    public func receive() async -> ATTBearerEvent? { await core.receive() }

    /// Closes the socket (the peer sees the disconnect), stops the thread and fails pending operations.
    public func close() { core.close() }
}
