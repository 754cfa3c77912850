public import Framing
public import GATT
public import Logging
import Secure
public import Transport

/// Where a pipe goes: a UNIX SEQPACKET socket (the same ATT/GATT code without a radio) or Bluetooth.
public enum PipeAddress: Sendable, Equatable, CustomStringConvertible {
    /// The socket file at `path`.
    case unix(path: String)
    /// Over Bluetooth. For a central: the peer's advertised name, `AA:BB:CC:DD:EE:FF`, or
    /// `AA:BB:CC:DD:EE:FF/random`; for a peripheral: the local name it advertises.
    case bluetooth(String)

    /// `unix:PATH` is a socket path; anything else is a Bluetooth name or address.
    public init(_ text: String) {
        self = text.hasPrefix("unix:") && text.count > 5 ? .unix(path: String(text.dropFirst(5))) : .bluetooth(text)
    }

    public var description: String {
        switch self {
        case let .unix(path): "unix:\(path)"
        case let .bluetooth(text): text
        }
    }
}

/// Something worth telling the person running a pipe: advice about the box, a reconnect, a detail for a
/// verbose log. The library never prints; ``MessagePipe/Options/onNote`` decides.
public struct PipeNote: Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Advice about the box's setup (bluetoothd's version or EATT): show it once to the user.
        case advice
        /// Something went wrong but the pipe goes on (a failed connection of one central, bluetoothd restarted).
        case warning
        /// A dropped link and the attempts to bring it back.
        case reconnect
        /// Details for a verbose log (backend chosen, advertising on/off, connections).
        case detail
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

extension MessagePipe {
    /// How a pipe connects and what it speaks. Every field has a default that suits a msgpipe peer.
    ///
    /// ```swift
    /// var options = MessagePipe.Options()
    /// options.adapter = "hci1"
    /// options.format = .legacy
    /// options.profile = .custom(service: "FFF0", write: "FFF2", notify: "FFF1")
    /// let pipe = try await MessagePipe.connect(to: "kiosk", options: options)
    /// ```
    public struct Options: Sendable {
        /// The Bluetooth adapter, `hciN` or its address (nil: the first powered LE adapter).
        public var adapter: String?
        /// The Bluetooth stack (``PipeBackend/auto``: through bluetoothd when it runs), with what only it
        /// honours: the kernel's connection parameters, PHY and bond directory go in ``PipeBackend/kernel(_:)``
        /// or ``PipeBackend/auto(kernel:)``.
        public var backend: PipeBackend = .auto
        /// Where bluetoothd's D-Bus API is (nil: the system bus, which DBUS_SYSTEM_BUS_ADDRESS may name).
        public var bluetoothdBus: String?
        /// The GATT service and characteristics.
        public var profile: GATTServiceProfile = .msgpipe
        /// The wire format: msgpipe (acknowledged, resumed), or a plain framing for other apps.
        public var format: FrameFormat = .msgpipe
        /// What carries the data over Bluetooth: GATT, the peripheral's L2CAP channel, or (auto) the channel
        /// where there is one.
        public var linkMode: LinkMode = .auto
        /// Link security: low (none), medium (encrypted, Just Works), high (authenticated pairing); a channel
        /// asks for the same level.
        public var security: L2CAPSecurityLevel = .low
        /// How long one connect (a scan for a name included) may take; transient failures within it are
        /// retried with ``reconnect``'s backoff.
        public var connectTimeout: Duration = .seconds(20)
        /// The central's backoff after a drop; `attempts` failures in a row end the pipe
        /// (``MessagePipeError/linkLost(attempts:)``). `Int.max`: keep trying.
        public var reconnect = ReconnectBackoff(attempts: 5)
        /// msgpipe format: a received message is acknowledged to its sender only once the application called
        /// ``PipeMessage/accept()``; until then the sender waits (bounded by the receive limits).
        ///
        /// - `false` (the default): a message is acknowledged as soon as it arrived whole, in this process's
        ///   memory. A sender's completed `send` then means "received", not "stored": a crash before the
        ///   application stored the message loses it.
        /// - `true`: acknowledged when the application says so. Call `accept()` once the message is safe where
        ///   it goes (MsgPipe's `MessageInbox` does, after `fsync`); a message never accepted is sent
        ///   again to the next receiver. An application that never calls `accept()` stalls its senders.
        public var holdsAcknowledgements = false
        /// msgpipe format, `MessagePipe.connect(to:options:)` (MsgPipe): the pipe's Transport goes on with this sender
        /// session (the same session, ids from its next id) instead of a new random one, so a receiver's journal
        /// recognises messages sent again after this process restarted. MsgPipe's `MessageOutbox` sets it.
        public var senderSession: SenderSession?
        /// End-to-end keys: a handshake on each new session, every message sealed, only peers with a right key
        /// served (``PipeKeys``). msgpipe format only. Acknowledgements are held until a message opened.
        public var keys: PipeKeys?
        /// A peripheral with keys: after a failed handshake the central's address is refused without a
        /// handshake for `initial`, doubled per failure in a row up to `maximum` (`attempts` is unused).
        public var handshakeBackoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(60), attempts: .max)
        /// How long the end-to-end handshake may take before the connection is dropped. Sealed messages are
        /// limited by ``maximumMessageSize`` as plain ones are.
        public var handshakeTimeout: Duration = .seconds(15)
        /// A peripheral, msgpipe format: how long each new connection may take, from its accept to the central's
        /// first Transport `hello` (its GATT setup included), before the peripheral closes it; with keys the
        /// shorter of this and ``handshakeTimeout``, and such a close counts as a refused handshake. Bounds a
        /// central that connects and says nothing, which would otherwise hold one of ``maximumCentrals``.
        public var helloTimeout: Duration = .seconds(10)
        /// The largest message accepted or sent.
        public var maximumMessageSize: Int = 16 << 20
        /// A peripheral serves this many centrals at once; more wait until one leaves.
        public var maximumCentrals: Int = 8
        /// Where the pipe logs (Transport's events at debug level).
        public var logger = Logger(label: "msgpipe", factory: { _ in SwiftLogNoOpLogHandler() })
        /// A peripheral keeps the msgpipe session of a central that left this long for it to come back and
        /// resume; after that its pending sends fail.
        public var resumeWindow: Duration = .seconds(300)
        /// Told the size of each packet handed to the link (for progress); called on the sending task.
        public var onPacketSent: @Sendable (Int) -> Void = { _ in }
        /// Sees every event of a pipe's link with the link (connections, drops, packets), before the pipe acts
        /// on it: for diagnostics and fault injection. Called on the receiving task; must not block.
        public var onLinkEvent: @Sendable (LinkEvent, any PipeLink) -> Void = { _, _ in }
        /// As a Bluetooth central on the kernel backend with CAP_NET_ADMIN: told the peer and the interval range,
        /// latency and timeout each time it asks for new ones mid-connection and this side's kernel accepts
        /// (``MessagePipe/linkParameters`` reports them from then on). Called on a thread of its own; must not block.
        ///
        /// ```swift
        /// options.onPeerParameterUpdate = { peer, parameters in print("\(peer) moved the link to \(parameters)") }
        /// ```
        public var onPeerParameterUpdate: @Sendable (BluetoothPeer, ConnectionParameters) -> Void = { _, _ in }
        /// A peripheral with keys: told each central refused before it got a pipe, with why (a key it does not
        /// hold, a bad or late handshake, no handshake at all within ``handshakeTimeout``, a central still
        /// waiting out ``handshakeBackoff``); each is also counted in ``PipeServer/refusedHandshakes``.
        public var onRefusedHandshake: @Sendable (_ peer: String, _ reason: any Error) -> Void = { _, _ in }
        /// Told what the user should hear (advice, reconnects, details); never called for each packet.
        public var onNote: @Sendable (PipeNote) -> Void = { _ in }

        public init() {}

        /// Transport's options for this pipe: receives messages up to ``maximumMessageSize`` (buffering two),
        /// sends messages up to `largestToSend` too.
        public func transportOptions(largestToSend: Int = 0) -> TransportOptions {
            var options = TransportOptions()
            // A sealed message carries its record's header and tag too.
            let sealing = keys == nil ? 0 : SecureLimits.recordOverhead
            options.endpoint.maximumMessageSize = max(maximumMessageSize, largestToSend) + sealing
            options.endpoint.maximumBufferedBytes = max(options.endpoint.maximumBufferedBytes, 2 * maximumMessageSize + 8)
            // With keys, a message is acknowledged only once it opened: nothing from a peer without a key is.
            options.endpoint.holdsAcknowledgements = holdsAcknowledgements || keys != nil
            options.senderSession = senderSession
            return options
        }

        /// The info characteristic a peripheral with these options serves.
        public func serviceInfo(maximumMessageSize: Int? = nil) -> MsgPipeServiceInfo {
            MsgPipeServiceInfo(
                formats: format.advertised, maximumMessageSize: UInt32(clamping: maximumMessageSize ?? self.maximumMessageSize),
                serverMTU: UInt16(ATTOpcode.maximumMTU))
        }

        /// Passes a note to ``onNote``.
        public func note(_ kind: PipeNote.Kind, _ text: String) { onNote(PipeNote(kind, text)) }
    }
}

extension FrameFormat {
    /// The info characteristic's flag for this format, so a peer can refuse a mismatch before sending.
    public var advertised: MsgPipeServiceInfo.Formats {
        switch self {
        case .msgpipe: .msgpipe
        case .legacy: .legacy
        case .eom: .eom
        case .lines: .lines
        }
    }
}
