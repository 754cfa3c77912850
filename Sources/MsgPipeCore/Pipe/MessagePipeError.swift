public import Secure
import Transport
public import Framing
public import GATT

/// Why a pipe could not be made or a message not delivered. Transport's, GATT's and BLELink's own errors
/// (`TransportError`, `BluetoothError`, `BlueZError`) pass through unchanged.
public enum MessagePipeError: Error, Equatable, CustomStringConvertible {
    /// The peer's info characteristic says it does not speak this format.
    case formatMismatch(FrameFormat)
    /// The message is larger than the peer accepts (its info characteristic).
    case messageTooLarge(size: Int, limit: Int)
    /// The link dropped and `attempts` reconnect attempts in a row failed.
    case linkLost(attempts: Int)
    /// The link dropped during a plain-format transfer (plain formats do not resume).
    case disconnected(String)
    /// A plain-format send did not finish within its timeout (the pipe was closed).
    case timedOut
    /// The pipe was closed.
    case closed
    /// ``MessagePipe/within(_:connect:run:)``: no answer came within its `seconds`; the pipe was closed.
    case noResponse(seconds: Double)
    /// ``LinkMode/l2cap`` was asked for and the peer publishes no channel, refused it, or cannot have one.
    case channelUnavailable(String)
    /// End-to-end keys (``MessagePipe/Options/keys``): the peer refused our key, or holds another one than the
    /// one we pinned. Nothing was sent.
    case notAuthenticated(String)
    /// End-to-end keys cannot be used as given (a plain format, or authorized keys on a central).
    case keysUnusable(String)
    /// End-to-end keys, as central: the peer refused the message because it forgot the secure session it was
    /// sealed in (it restarted, or our session expired there, while our Transport session resumed). The pipe runs
    /// a new handshake by itself; the message is not sent again. `maybeDelivered`: it was sent before the pipe
    /// learned it, so the peer may have kept it before it forgot; a resend with the same origin (`MessageOutbox`)
    /// lets the peer's journal know it.
    case peerSessionReset(maybeDelivered: Bool)
    /// ``PipeBackend/auto(kernel:)`` asked for connection parameters or a PHY and auto picked bluetoothd, whose
    /// D-Bus API sets neither: the pipe is not made (bluetoothd's main.conf sets them, for every program).
    case connectionParametersThroughBluetoothd(ConnectionParameterRequest)

    public var description: String {
        switch self {
        case let .formatMismatch(format): "the peer does not speak the format \(format.rawValue) (its info characteristic says so)"
        case let .messageTooLarge(size, limit): "\(size) bytes exceed the peer's maximum message size of \(limit)"
        case let .linkLost(attempts): "the link dropped and \(attempts) reconnect attempts failed"
        case let .disconnected(reason): "the link dropped during a plain-format transfer: \(reason)"
        case .timedOut: "not every packet was taken before the timeout"
        case .closed: "the pipe is closed"
        case let .noResponse(seconds): "no response within \(seconds) s"
        case let .channelUnavailable(reason): "no L2CAP channel (link mode l2cap): \(reason)"
        case let .notAuthenticated(reason): "not authenticated: \(reason)"
        case let .keysUnusable(reason): "end-to-end keys cannot be used here: \(reason)"
        case let .peerSessionReset(maybeDelivered):
            "the peer forgot the end-to-end session (it restarted) and refused the message: "
                + (maybeDelivered ? "it may have kept it before, or not" : "it never had it")
        case let .connectionParametersThroughBluetoothd(request): Self.bluetoothdRemedy(request)
        }
    }
}

extension MessagePipeError {
    /// What to do when `request` cannot be applied through bluetoothd: its main.conf for the interval, latency
    /// and timeout (in bluetoothd's units, which it hands to the kernel as they are), or the kernel backend.
    static func bluetoothdRemedy(_ request: ConnectionParameterRequest) -> String {
        var text = "bluetoothd's D-Bus API cannot set connection parameters or the PHY (\(request)); "
        if request.hasConnectionParameters {
            var lines: [String] = []
            if let interval = request.interval {
                lines.append("MinConnectionInterval=\(interval.minimum)")
                lines.append("MaxConnectionInterval=\(interval.maximum)")
            }
            if let latency = request.latency { lines.append("ConnectionLatency=\(latency)") }
            if let timeout = request.supervisionTimeout { lines.append("ConnectionSupervisionTimeout=\(timeout)") }
            text += "set them for every program in /etc/bluetooth/main.conf's [LE] section (intervals in 1.25 ms "
                + "units, the timeout in 10 ms units): \(lines.joined(separator: " ")), then restart bluetoothd; "
        }
        if request.phy != nil { text += "a PHY preference needs the kernel backend; " }
        return text + "or use the kernel backend (with bluetoothd stopped), where msgpipe sets them itself"
    }
}

/// One message a pipe received, whole and in its sender's order.
public struct PipeMessage: Sendable, Equatable {
    /// The message's bytes.
    public var bytes: [UInt8]
    /// Transport's message id (msgpipe format; nil for the plain formats); for a sealed message from a peer's
    /// outbox, its id there (the origin sealed with it).
    public var id: UInt32?
    /// The Transport session of the peer's sender (msgpipe format; nil for the plain formats), or the outbox
    /// session of a sealed message from a peer's outbox: with ``id`` it names this message across the peer's
    /// reconnects, restarts and resends.
    public var senderSession: UInt64?
    /// With end-to-end keys (``MessagePipe/Options/keys``): the key that sealed the message, named as in the
    /// authorized keys (or the pinned key, unnamed); nil without keys or with a pre-shared key.
    public var sender: AuthorizedKeys.Entry?
    /// With ``MessagePipe/Options/holdsAcknowledgements``: the Transport message to accept.
    let held: Held?
    /// A request's way back to its sender (msgpipe format).
    let reply: Reply?

    struct Held: Sendable {
        let transport: Transport
        let message: ReceivedMessage
    }

    /// Where a request's response goes: sealed on the channel it arrived on, or on its Transport.
    enum Reply: Sendable {
        case sealed(SecureChannel, SecureMessage)
        case plain(Transport, ReceivedMessage)
    }

    /// True when the peer sent it as a request (``MessagePipe/request(_:id:timeout:)``) and waits for a response.
    public var isRequest: Bool {
        switch reply {
        case let .sealed(_, message)?: message.isRequest
        case let .plain(_, message)?: message.isRequest
        case nil: false
        }
    }

    /// Answers this request with `response` (sealed when the pipe is), returning once the peer acknowledged
    /// it. Throws ``MessagePipeError/closed`` when it is no request of a pipe's peer, or what the pipe's
    /// Transport throws when the peer is gone.
    func respond(_ response: [UInt8]) async throws {
        switch reply {
        case let .sealed(channel, message)? where message.isRequest: try await channel.respond(to: message, with: response)
        case let .plain(transport, message)? where message.isRequest: try await transport.respond(to: message, with: response)
        default: throw MessagePipeError.closed
        }
    }

    /// A message not received from a pipe (a test's, or one read back from storage): ``accept()`` does nothing.
    public init(bytes: [UInt8], id: UInt32? = nil, senderSession: UInt64? = nil) {
        self.bytes = bytes
        self.id = id
        self.senderSession = senderSession
        held = nil
        reply = nil
    }

    init(opened message: SecureMessage, sender: AuthorizedKeys.Entry?, heldBy transport: Transport?, from channel: SecureChannel) {
        bytes = message.plaintext
        id = message.origin?.id ?? message.received.messageID
        senderSession = message.origin?.session ?? message.received.senderSession
        self.sender = sender
        held = transport.map { Held(transport: $0, message: message.received) }
        reply = .sealed(channel, message)
    }

    init(_ message: ReceivedMessage, heldBy holder: Transport?, from transport: Transport) {
        bytes = message.body
        id = message.messageID
        senderSession = message.senderSession
        held = holder.map { Held(transport: $0, message: message) }
        reply = .plain(transport, message)
    }

    /// With ``MessagePipe/Options/holdsAcknowledgements``: the peer's `send` of this message completes only
    /// now. Call it once the message is safe (e.g. the broker acknowledged it); a message never accepted is
    /// never acknowledged, so the peer sends it again to the next receiver. Without the option, and for the
    /// plain formats, it does nothing.
    public func accept() async {
        guard let held else { return }
        await held.transport.accept(held.message)
    }

    public static func == (a: PipeMessage, b: PipeMessage) -> Bool {
        a.bytes == b.bytes && a.id == b.id && a.senderSession == b.senderSession && a.sender == b.sender
    }
}
