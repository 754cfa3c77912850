/// Why an ATT or GATT operation failed: the one error type of the ATT/GATT layer.
public enum ATTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer answered the request with an Error Response.
    case errorResponse(request: UInt8, handle: UInt16, code: ATTErrorCode)
    /// The peer sent bytes that are not a well-formed PDU.
    case malformed(ATTDecodeError)
    /// The peer answered a request with a PDU of another kind.
    case unexpectedResponse(request: UInt8, response: UInt8)
    /// No response (or confirmation) within the ATT transaction timeout; the bearer is unusable after it.
    case transactionTimeout(request: UInt8)
    /// A value does not fit: `length` bytes where at most `limit` are allowed.
    case valueTooLong(length: Int, limit: Int)
    /// The client has not enabled notifications (or indications) on the characteristic at `handle`.
    case notSubscribed(handle: UInt16)
    /// An indication is still waiting for its confirmation: only one may be outstanding.
    case indicationPending
    /// The handle names no attribute this operation applies to.
    case invalidHandle(UInt16)
    /// Discovery found no service or characteristic with this UUID.
    case notFound(BluetoothUUID)
    /// The peer broke the ATT protocol (e.g. a second request before the response to the first).
    case protocolViolation(String)
    /// The bearer disconnected.
    case disconnected(reason: String)
    /// The bearer was closed locally.
    case closed
    /// The waiting task was cancelled; nothing was sent.
    case cancelled
    /// A system call on the bearer failed: `operation` says what was attempted, `errno` is the code and
    /// `message` its text (strerror), filled in by the layer that made the call.
    case io(operation: String, errno: Int32, message: String)

    public var description: String {
        switch self {
        case let .errorResponse(request, handle, code):
            "ATT request 0x\(hex(request)) on handle 0x\(hex(handle, width: 4)) failed: \(code)"
        case let .malformed(error): "malformed ATT PDU: \(error)"
        case let .unexpectedResponse(request, response):
            "ATT request 0x\(hex(request)) was answered with opcode 0x\(hex(response))"
        case let .transactionTimeout(request): "ATT transaction 0x\(hex(request)) timed out after 30 s"
        case let .valueTooLong(length, limit): "value of \(length) bytes exceeds the limit of \(limit)"
        case let .notSubscribed(handle): "the client is not subscribed to handle 0x\(hex(handle, width: 4))"
        case .indicationPending: "an indication is still waiting for its confirmation"
        case let .invalidHandle(handle): "no attribute at handle 0x\(hex(handle, width: 4))"
        case let .notFound(uuid): "the peer has no service or characteristic \(uuid)"
        case let .protocolViolation(message): "ATT protocol violation: \(message)"
        case let .disconnected(reason): "ATT bearer disconnected: \(reason)"
        case .closed: "ATT bearer closed"
        case .cancelled: "ATT operation cancelled"
        case let .io(operation, _, message): "cannot \(operation): \(message)"
        }
    }
}
