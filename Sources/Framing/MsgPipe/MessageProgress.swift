/// How far a partial msgpipe message has arrived: what a receiver reports so the sender can resume.
public struct MessageProgress: Equatable, Sendable {
    /// The header from the message's Start packet.
    public var header: MessageHeader
    /// The channel it arrives on.
    public var channel: UInt8
    /// Stream bytes (body, then CRC trailer) received so far, contiguous from offset 0.
    public var receivedStreamBytes: Int

    /// Progress of the message with `header` on `channel`.
    public init(header: MessageHeader, channel: UInt8, receivedStreamBytes: Int) {
        self.header = header
        self.channel = channel
        self.receivedStreamBytes = receivedStreamBytes
    }
}
