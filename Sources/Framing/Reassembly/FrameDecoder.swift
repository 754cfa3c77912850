/// A packet-to-message decoder for one wire format: bounded by ``ReassemblyLimits``, clock injected.
///
/// Events go to `emit` as they happen (a packet may yield none, one message, or, for `lines`, several);
/// violations arrive as ``FrameEvent/failure(_:)`` and the decoder keeps working with the next packet.
public protocol FrameDecoder: Sendable {
    /// Feeds one received packet; `now` is a monotonic time used for the stale timeout.
    mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration, emit: (FrameEvent) -> Void)
    /// Drops partial messages idle for longer than the stale timeout, reporting each.
    mutating func expireStaleMessages(now: Duration, emit: (FrameEvent) -> Void)
    /// Ends the input: reports every partial message as incomplete and resets.
    mutating func finish(emit: (FrameEvent) -> Void)
}
