/// A sans-I/O protocol endpoint: a deterministic state machine that exchanges packets with its peer.
///
/// It does no I/O and reads no clock: every input carries `now`, a `Duration` since an arbitrary origin
/// that only moves forward. The same endpoint therefore runs over a real ``Link`` (driven by an async
/// adapter on the real clock) and inside the BLE air-time simulator (driven on simulated time, where a
/// 1 MiB transfer takes simulated seconds and real milliseconds).
public protocol PacketEndpoint {
    /// The bearer connected (or reconnected); packets may be at most `maximumPacketSize` bytes.
    mutating func linkConnected(maximumPacketSize: Int, now: Duration)
    /// The packet size changed on the live connection (ATT MTU exchange).
    mutating func maximumPacketSizeChanged(_ maximumPacketSize: Int, now: Duration)
    /// The bearer dropped. Packets handed out but not yet confirmed by the peer count as lost.
    mutating func linkDisconnected(now: Duration)
    /// One packet arrived from the peer.
    mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration)
    /// Writes the next packet to send into `buffer` (replacing its contents, reusing its storage) and returns
    /// true, or returns false when there is nothing to send now (idle, or waiting for window or timers).
    mutating func writeNextPacket(into buffer: inout [UInt8], now: Duration) -> Bool
    /// The earliest time at which ``handleTimeout(now:)`` must be called, if any timer is armed.
    var nextTimeout: Duration? { get }
    /// Fires the timers that are due at `now` (retransmission, deadlines, delayed acknowledgements).
    mutating func handleTimeout(now: Duration)
}
