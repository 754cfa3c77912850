/// What a decoder reports for the packets it receives, in order.
public enum FrameEvent: Equatable, Sendable {
    /// A whole message, checked.
    case message(FramedMessage)
    /// A msgpipe control packet, for Transport.
    case control(ControlPacket)
    /// A violation: the offending packet or partial message was dropped; the decoder stays usable.
    case failure(FramingError)
}

/// One reassembled message.
public struct FramedMessage: Equatable, Sendable {
    /// The message body (for msgpipe: after the CRC check, with the trailer removed).
    public var body: [UInt8]
    /// The msgpipe message header; nil for the text-marker formats.
    public var header: MessageHeader?
    /// The msgpipe channel it arrived on (0 for the other formats).
    public var channel: UInt8

    /// A message.
    public init(body: [UInt8], header: MessageHeader? = nil, channel: UInt8 = 0) {
        self.body = body
        self.header = header
        self.channel = channel
    }
}
