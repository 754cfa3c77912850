import Testing
@testable import Transport
import TestSupport

/// PROTOCOL.md 3.4: every control packet pinned to bytes, both directions, and every truncation rejected.
@Suite struct ProtocolControlVectorTests {
    static let vectors: [(TransportControl, String)] = [
        (
            .acknowledgement(Acknowledgement(messageID: 7, cumulative: 5, bitmapStart: 6, bitmap: [0b0000_0101])),
            "c0 11 01 07 05 01 05 e7 87"
        ),
        (
            .acknowledgement(
                Acknowledgement(messageID: 7, checked: true, cumulative: 300, bitmapStart: 400, bitmap: [0xFF, 0x01])),
            "c0 11 0c 07 ac 02 64 ff 01 9b 68"
        ),
        (.complete(messageID: 1), "c0 11 02 01 49 aa"),
        (.checkFailed(messageID: 2), "c0 11 03 02 b2 ca"),
        (.startMissing(channel: 3), "c0 11 04 03 e3 6c"),
        (.query(messageID: 200), "c0 11 05 c8 01 07 80"),
        (.unknown(messageID: 9), "c0 11 06 09 7f e7"),
        (.busy(messageID: 4), "c0 11 07 04 83 aa"),
        (.ready, "c0 11 08 70 e4"),
        (.cancel(messageID: 5), "c0 11 09 05 9b b7"),
        (.cancelled(messageID: 5), "c0 11 0a 05 58 e4"),
        (.rejected(messageID: 6, reason: .inflateFailed), "c0 11 0b 06 02 77 06"),
        (.rejected(messageID: 6, reason: .notAuthenticated), "c0 11 0b 06 03 e1 36"),
        (.hello(session: 0x0123_4567_89ab_cdef, firstMessageID: 1), "c0 11 0d ef cd ab 89 67 45 23 01 01 a0 aa"),
        (.welcome(session: 0x0123_4567_89ab_cdef), "c0 11 0e ef cd ab 89 67 45 23 01 f6 91"),
    ]

    @Test(arguments: vectors.indices)
    func controlPacketEncodesToItsVectorAndBack(index: Int) {
        let (control, hex) = Self.vectors[index]
        var out: [UInt8] = []
        control.encode(into: &out)
        #expect(out == bytes(hex))
        #expect(TransportControl(decoding: bytes(hex)[...]) == control)
    }

    @Test(arguments: vectors.indices)
    func truncatedOrFlippedControlPacketIsRejected(index: Int) {
        let packet = bytes(Self.vectors[index].1)
        for length in 0 ..< packet.count {
            #expect(TransportControl(decoding: packet.prefix(length)) == nil)
        }
        for position in packet.indices.dropFirst(2) {
            var flipped = packet
            flipped[position] ^= 0x10
            #expect(TransportControl(decoding: flipped[...]) == nil, "bit flip at \(position) accepted")
        }
    }

    @Test func acknowledgementReportsHeldAndMissingSegments() {
        let ack = Acknowledgement(messageID: 7, cumulative: 5, bitmapStart: 6, bitmap: [0b0000_0101])
        #expect(ack.reportsMissing(5))
        #expect(!ack.reportsMissing(6) && ack.isHeldInBitmap(6))
        #expect(ack.reportsMissing(7))
        #expect(ack.isHeldInBitmap(8))
        #expect(ack.coverageEnd == 14)
    }
}
