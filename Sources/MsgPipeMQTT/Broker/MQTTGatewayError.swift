/// Why a gateway could not start or had to stop; the description is what the CLI prints.
public enum MQTTGatewayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broker URL does not parse.
    case badURL(String, reason: String)
    /// The trusted CA file cannot be used: `reason` says why (not an `mqtts://` URL, unreadable).
    case badTrustedCAFile(String, reason: String)
    /// The gateway id is empty or holds `/`, `+` or `#`.
    case badGatewayID(String)
    /// The broker refused the connection (CONNACK reason code, e.g. 0x86 bad user name or password).
    case connectionRefused(broker: String, reasonCode: Int, reason: String)
    /// The TLS handshake failed: the broker's certificate does not chain to a trusted CA (the system's, or
    /// ``MQTTGateway/Options/trustedCAFile``) or does not name its host. OpenSSL's reason in `detail`.
    case untrustedBroker(broker: String, detail: String)
    /// No connection to the broker within the connect timeout.
    case unreachable(broker: String, detail: String)
    /// The broker answered a publish with a failure reason code (e.g. 0x87 not authorized by its ACL).
    case publishRefused(topic: String, reasonCode: Int, reason: String)
    /// The broker refused a subscription.
    case subscribeRefused(topic: String, reasonCode: Int, reason: String)
    /// The client library failed (out of memory, bad arguments).
    case client(String)
    /// The downlink journal could not be written or read (the operation and errno's text).
    case journal(String)
    /// The gateway was closed.
    case closed

    public var description: String {
        switch self {
        case let .badURL(url, reason): "bad broker URL '\(url)': \(reason)"
        case let .badTrustedCAFile(file, reason): "trusted CA file '\(file)': \(reason)"
        case let .badGatewayID(id): "bad gateway id '\(id)': it must be non-empty and hold no '/', '+' or '#'"
        case let .connectionRefused(broker, code, reason):
            "the broker \(broker) refused the connection: \(reason) (reason code 0x\(String(code, radix: 16)))"
        case let .untrustedBroker(broker, detail): "the TLS handshake with the broker \(broker) failed: \(detail)"
        case let .unreachable(broker, detail): "cannot reach the broker \(broker): \(detail)"
        case let .publishRefused(topic, code, reason):
            "the broker refused a publish to \(topic): \(reason) (reason code 0x\(String(code, radix: 16)))"
        case let .subscribeRefused(topic, code, reason):
            "the broker refused the subscription to \(topic): \(reason) (reason code 0x\(String(code, radix: 16)))"
        case let .client(detail): "MQTT client: \(detail)"
        case let .journal(detail): "downlink journal: \(detail)"
        case .closed: "the gateway is closed"
        }
    }
}

extension MQTTGatewayError {
    /// What a failure asks of its caller (msgpipe maps each to one exit code, docs/CLI.md).
    public enum Category: Sendable, Equatable {
        /// A setting is wrong (URL, gateway id, CA file): fix it; another attempt fails the same way.
        case configuration
        /// The broker or the client is not available (unreachable, closed): another attempt may work.
        case unavailable
        /// The downlink journal could not be written or read.
        case storage
        /// The broker refused: credentials, its TLS certificate, a publish or a subscription.
        case refused
    }

    /// The ``Category`` of this failure.
    public var category: Category {
        switch self {
        case .badURL, .badTrustedCAFile, .badGatewayID: .configuration
        case .unreachable, .client, .closed: .unavailable
        case .journal: .storage
        case .connectionRefused, .untrustedBroker, .publishRefused, .subscribeRefused: .refused
        }
    }
}
