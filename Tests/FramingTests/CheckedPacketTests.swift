import Testing
import Framing
import TestSupport

/// The packet codec Transport sends with (PROTOCOL 3.2, 3.3): the cut with room for checks, the 2-byte check
/// on Start, implicit (checked messages) and explicit-offset packets, pinned to bytes.
@Suite("checked msgpipe packets")
struct CheckedPacketTests {
    static let body = ascii("abcdefghijklmnopqrst")

    @Test("the checked cut leaves room for the check on the Start and every later packet")
    func checkedCut() throws {
        let header = MessageHeader(messageID: 1, length: 20, flags: [.reliable, .checked])
        let cut = try #require(MsgPipeCut(header: header, packetSize: 20))
        #expect(cut.checks == .every)
        #expect(cut.startCapacity == 13)  // 20 - header byte - 4 header bytes - 2 check bytes
        #expect(cut.capacity == 17)  // 20 - header byte - 2 check bytes
        #expect(cut.count == 2)
        #expect(cut.range(of: 0) == 0..<13)
        #expect(cut.range(of: 1) == 13..<24)
        #expect(cut.segment(containing: 12) == 0)
        #expect(cut.segment(containing: 13) == 1)
        // Reliable, unchecked: only the Start (and explicit-offset packets) carry the check.
        let reliable = try #require(
            MsgPipeCut(header: MessageHeader(messageID: 1, length: 20, flags: [.reliable]), packetSize: 20))
        #expect(reliable.checks == .startAndExplicit)
        #expect(reliable.startCapacity == 13)
        #expect(reliable.capacity == 19)
        // Plain framing: no check anywhere (PROTOCOL 1.3).
        let plain = try #require(MsgPipeCut(header: MessageHeader(messageID: 1, length: 20), packetSize: 20))
        #expect(plain.checks == .none)
        #expect(plain.startCapacity == 15)
        #expect(plain.capacity == 19)
        // Too small for the Start's headers and check.
        #expect(MsgPipeCut(streamCount: 24, packetSize: 6, headerCount: 4, checks: .every) == nil)
    }

    @Test("a checked message's Start and implicit packet end with their checks (PROTOCOL 3.4 data vectors)")
    func checkedImplicitPackets() throws {
        let encoder = try MsgPipeEncoder(
            payload: Self.body, messageID: 1, flags: [.reliable, .checked], packetSize: 20)
        #expect(encoder.packetCount == 2)
        var out: [UInt8] = []
        try encoder.writePacket(index: 0, into: &out)
        #expect(hex(out) == "80102401146162636465666768696a6b6c6d1c10")
        try encoder.writePacket(index: 1, into: &out)
        #expect(hex(out) == "416e6f7071727374e56a591aecb1")
        #expect(PacketCheck.verifiesData(out[...], messageID: 1, streamOffset: 13))
        #expect(!PacketCheck.verifiesData(out[...], messageID: 1, streamOffset: 14))
        #expect(!PacketCheck.verifiesData(out[...], messageID: 2, streamOffset: 13))
    }

    @Test("a reliable message's implicit packet has no check; its Start has one")
    func reliableUncheckedPackets() throws {
        let encoder = try MsgPipeEncoder(payload: Self.body, messageID: 1, flags: [.reliable], packetSize: 20)
        var out: [UInt8] = []
        try encoder.writePacket(index: 0, into: &out)
        #expect(hex(out) == "80100401146162636465666768696a6b6c6d616b")
        try encoder.writePacket(index: 1, into: &out)
        #expect(hex(out) == "416e6f7071727374e56a591a")
    }

    @Test("an explicit-offset packet carries its offset and ends with the check over id, offset and bytes")
    func explicitOffsetPacketWithCheck() throws {
        let encoder = try MsgPipeEncoder(payload: Self.body, messageID: 1, flags: [.reliable], packetSize: 20)
        var out: [UInt8] = []
        // Segment 1 again from stream offset 13: E (it ends the stream), X, Q 1, offset 13, bytes, check.
        let range = try encoder.writePacket(index: 1, explicitOffset: true, into: &out)
        #expect(range == 13..<24)
        #expect(hex(out) == "610d6e6f7071727374e56a591ad34f")
        #expect(PacketCheck.verifiesData(out[...], messageID: 1, streamOffset: 13))
        // At a smaller packet size (after an MTU change) the same offset carries fewer bytes.
        #expect(encoder.explicitCapacity(fromStreamOffset: 5, packetSize: 12) == 8)
        let piece = encoder.writePacket(streamRange: 5..<13, sequence: 0, explicitOffset: true, into: &out)
        #expect(piece == 5..<13)
        #expect(hex(out) == "2005666768696a6b6c6dea18")
        // Corrupting any byte fails the check.
        for index in out.indices {
            var corrupted = out
            corrupted[index] ^= 0x01
            #expect(!PacketCheck.verifiesData(corrupted[...], messageID: 1, streamOffset: 5))
        }
    }

    @Test("a control packet's check covers its own preceding bytes (PROTOCOL 3.4: complete 1)")
    func controlCheck() {
        var out = bytes("c01102 01")
        PacketCheck.appendControl(to: &out)
        #expect(hex(out) == "c011020149aa")
        #expect(PacketCheck.verifiesControl(out[...]))
        #expect(!PacketCheck.verifiesControl(out.dropLast()))
    }

    @Test("a segmented stream takes segments and explicit pieces out of order and verifies the CRC")
    func segmentedStream() throws {
        let encoder = try MsgPipeEncoder(
            payload: Self.body, messageID: 1, flags: [.reliable, .checked], packetSize: 12)
        var stream = SegmentedStream(cut: encoder.cut)
        let streamBytes = Self.body + [0xe5, 0x6a, 0x59, 0x1a]
        for segment in (0..<encoder.packetCount).reversed() where segment != 1 {
            let range = encoder.cut.range(of: segment)
            let stored = stream.store(segment: segment, data: streamBytes[range])
            #expect(stored)
        }
        #expect(!stream.isComplete)
        // Segment 1 in two pieces, the second first.
        let one = encoder.cut.range(of: 1)
        let tail = stream.store(fromStreamOffset: one.lowerBound + 2, data: streamBytes[(one.lowerBound + 2)..<one.upperBound])
        #expect(tail)
        #expect(!stream.isComplete)
        let head = stream.store(fromStreamOffset: one.lowerBound, data: streamBytes[one.lowerBound..<(one.lowerBound + 2)])
        #expect(head)
        #expect(stream.isComplete)
        #expect(stream.verifiedBody() == Self.body)
    }
}
