/// Decodes the legacy format (PROTOCOL 4.1): a value beginning with `Start` opens a message, one beginning
/// with `End` closes it, the bytes after a marker and every other value are data.
///
/// A value outside a message is reported and dropped; a `Start` inside an open message reports the partial
/// one as interrupted and starts anew.
public struct LegacyDecoder: FrameDecoder {
    private var message: SingleMessageBuffer

    /// A decoder with no message open.
    public init(limits: ReassemblyLimits = ReassemblyLimits()) {
        message = SingleMessageBuffer(limits: limits)
    }

    public mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration, emit: (FrameEvent) -> Void) {
        message.expire(now: now, emit: emit)
        if packet.begins(with: LegacyMarkers.start) {
            message.open(now: now, emit: emit)
            message.append(packet.dropFirst(LegacyMarkers.start.count), now: now, emit: emit)
        } else if message.state == .closed {
            emit(.failure(.valueOutsideMessage(format: "legacy", size: packet.count)))
        } else if packet.begins(with: LegacyMarkers.end) {
            message.append(packet.dropFirst(LegacyMarkers.end.count), now: now, emit: emit)
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
