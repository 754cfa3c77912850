/// What an ``ATTConnection`` received: one PDU, or the end of the connection.
public enum ATTBearerEvent: Sendable, Equatable {
    /// One PDU, whole (a SEQPACKET packet).
    case pdu([UInt8])
    /// The peer went away (end of stream, ECONNRESET, EPIPE); delivered once, after every queued PDU.
    case disconnected(reason: String)
}
