public import Framing
import GATT

/// Sending one message in a plain format (legacy, eom, lines): its packets as Write Commands (as
/// peripheral: notifications), paced by the link's readiness.
public enum PlainSending {
    /// Sends `body` cut into packets of `format` of at most `packetSize` bytes. With `confirmLast` the last
    /// packet goes as a Write Request (as peripheral: an indication where the central enabled them), so a
    /// return means the peer's ATT layer took every packet; a notify-only central cannot confirm, and then
    /// a return means the last packet was handed to the link. `onSent` counts the bytes of each packet.
    /// Throws `FramingError` when the body cannot be carried (a newline in `lines`), or the link's error.
    public static func send(
        _ body: [UInt8], format: FrameFormat, packetSize: Int, over link: some PipeLink, confirmLast: Bool = true,
        onSent: (Int) -> Void = { _ in }
    ) async throws {
        var encoder = try format.makeEncoder(payload: body, packetSize: packetSize)
        var held: [UInt8]?
        var packet: [UInt8] = []
        while encoder.writeNextPacket(into: &packet) {
            if let previous = held {
                try await link.send(previous)
                onSent(previous.count)
            }
            held = packet
        }
        guard let last = held else { return }
        if confirmLast {
            try await link.sendConfirmed(last)
        } else {
            try await link.send(last)
        }
        onSent(last.count)
    }
}
