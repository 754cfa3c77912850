/// Decodes the lines format (PROTOCOL 4.3): bytes up to each `\n` form one message (without the `\n`);
/// a value may hold several lines or part of one. A line over the size limit is reported and skipped.
public struct LinesDecoder: FrameDecoder {
    /// The line terminator.
    public static let newline = UInt8(ascii: "\n")
    private var message: SingleMessageBuffer

    /// A decoder with no line open.
    public init(limits: ReassemblyLimits = ReassemblyLimits()) {
        message = SingleMessageBuffer(limits: limits)
    }

    public mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration, emit: (FrameEvent) -> Void) {
        message.expire(now: now, emit: emit)
        var rest = packet
        while !rest.isEmpty {
            if message.state == .closed { message.open(now: now, emit: emit) }
            guard let newline = rest.firstIndex(of: Self.newline) else {
                message.append(rest, now: now, emit: emit)
                return
            }
            message.append(rest[..<newline], now: now, emit: emit)
            message.close(emit: emit)
            rest = rest[(newline + 1)...]
        }
    }

    public mutating func expireStaleMessages(now: Duration, emit: (FrameEvent) -> Void) {
        message.expire(now: now, emit: emit)
    }

    public mutating func finish(emit: (FrameEvent) -> Void) {
        message.finish(emit: emit)
    }
}
