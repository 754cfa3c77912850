/// Which side of a connection: the initiator (central, `request`) sends ClientHello, the responder
/// (peripheral, `serve`) answers it. Each direction has its own key and nonce prefix.
public enum SecureRole: Sendable, Equatable {
    case initiator
    case responder
}
