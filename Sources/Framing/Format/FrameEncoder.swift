/// Writes one message's packets, one at a time, into a caller's reusable buffer.
public protocol FrameEncoder: Sendable {
    /// Writes the next packet into `out` (replacing its contents, keeping its storage) and returns true, or
    /// returns false when every packet was written.
    mutating func writeNextPacket(into out: inout [UInt8]) -> Bool
}
