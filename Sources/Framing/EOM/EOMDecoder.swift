/// Decodes the eom format (PROTOCOL 4.2): every value is data until a value that is exactly `EOM` ends the
/// message (a lone `EOM` is the empty message).
public struct EOMDecoder: FrameDecoder {
    /// The end-of-message marker value.
    public static let marker = Array("EOM".utf8)
    private var message: SingleMessageBuffer

    /// A decoder with no message open.
    public init(limits: ReassemblyLimits = ReassemblyLimits()) {
        message = SingleMessageBuffer(limits: limits)
    }

    public mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration, emit: (FrameEvent) -> Void) {
        message.expire(now: now, emit: emit)
        if message.state == .closed { message.open(now: now, emit: emit) }
        if packet.elementsEqual(Self.marker) {
            message.close(emit: emit)
        } else {
            message.append(packet, now: now, emit: emit)
        }
    }

    public mutating func expireStaleMessages(now: Duration, emit: (FrameEvent) -> Void) {
        message.expire(now: now, emit: emit)
    }

    public mutating func finish(emit: (FrameEvent) -> Void) {
        message.finish(emit: emit)
    }
}
