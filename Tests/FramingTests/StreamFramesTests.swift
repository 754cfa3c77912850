import Framing
import PropertyBased
import Testing
import TestSupport

/// Packet boundaries on a byte stream (PROTOCOL.md 7.1): the vectors, any split of the stream, and bad lengths.
@Suite("stream frames")
struct StreamFramesTests {
    /// PROTOCOL.md 7.1's vectors: packet -> frame.
    static let vectors: [(packet: String, frame: String)] = [
        ("01", "010001"),
        ("010203", "0300010203"),
        (String(repeating: "ab", count: 256), "0001" + String(repeating: "ab", count: 256)),
    ]

    @Test func framesMatchTheVectors() throws {
        for vector in Self.vectors {
            var out: [UInt8] = []
            try StreamFrames.append(bytes(vector.packet), to: &out)
            #expect(hex(out) == vector.frame)
            var deframer = StreamDeframer()
            var packets: [[UInt8]] = []
            try deframer.receive(bytes(vector.frame)[...]) { packets.append($0) }
            #expect(packets == [bytes(vector.packet)])
            #expect(deframer.pendingBytes == 0)
        }
    }

    @Test func theLargestFrameAndNoMore() throws {
        var out: [UInt8] = []
        try StreamFrames.append([UInt8](repeating: 7, count: 0xFFFF), to: &out)
        #expect(Array(out.prefix(2)) == [0xFF, 0xFF])
        #expect(throws: FramingError.packetTooLarge(size: 0x10000, limit: 0xFFFF)) {
            try StreamFrames.append([UInt8](repeating: 7, count: 0x10000), to: &out)
        }
        #expect(throws: FramingError.emptyPacket) { try StreamFrames.append([UInt8](), to: &out) }
    }

    @Test func aZeroLengthIsRefusedAndStaysRefusedUntilReset() throws {
        var deframer = StreamDeframer()
        var packets: [[UInt8]] = []
        #expect(throws: FramingError.invalidFrameLength(length: 0, limit: 0xFFFF)) {
            try deframer.receive(bytes("01004100000102")[...]) { packets.append($0) }
        }
        #expect(packets == [[0x41]], "the frame before the bad length was handed out")
        #expect(throws: FramingError.invalidFrameLength(length: 0, limit: 0xFFFF)) {
            try deframer.receive(bytes("010042")[...]) { packets.append($0) }
        }
        deframer.reset()
        try deframer.receive(bytes("010042")[...]) { packets.append($0) }
        #expect(packets == [[0x41], [0x42]])
    }

    @Test func aLengthOverTheLimitIsRefusedBeforeAnyByteOfItIsHeld() throws {
        var deframer = StreamDeframer(maximumFrameSize: 512)
        #expect(throws: FramingError.invalidFrameLength(length: 513, limit: 512)) {
            try deframer.receive(bytes("0102")[...]) { _ in }
        }
        #expect(deframer.pendingBytes == 0)
    }

    @Test func anySplitOfTheStreamGivesTheSamePackets() async {
        await propertyCheck(count: 200, input: Gen.uint64(), Gen.int(in: 1...40), Gen.int(in: 1...600)) {
            seed, count, largest in
            var random = seed | 1
            func next() -> Int {
                random ^= random << 13
                random ^= random >> 7
                random ^= random << 17
                return Int(truncatingIfNeeded: random & 0x7FFF_FFFF)
            }
            let packets = (0 ..< count).map { _ in (0 ..< 1 + next() % largest).map { _ in UInt8(truncatingIfNeeded: next()) } }
            var stream: [UInt8] = []
            for packet in packets { try StreamFrames.append(packet, to: &stream) }
            var deframer = StreamDeframer(maximumFrameSize: largest)
            var received: [[UInt8]] = []
            var offset = 0
            while offset < stream.count {
                let chunk = min(stream.count - offset, 1 + next() % 97)
                try deframer.receive(stream[offset ..< offset + chunk]) { received.append($0) }
                offset += chunk
            }
            #expect(received == packets)
            #expect(deframer.pendingBytes == 0)
        }
    }
}
