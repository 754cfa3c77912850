import Testing
@testable import Framing
import TestSupport

@Suite("ULEB128, cursor and CRC-32")
struct PrimitiveCodecTests {
    static let ulebVectors: [(UInt32, String)] = [
        (0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (16_383, "ff7f"), (16_384, "808001"),
        (65_536, "808004"), (UInt32.max, "ffffffff0f"),
    ]

    @Test("ULEB128 encodes to the pinned bytes and decodes back", arguments: ulebVectors)
    func ulebVector(value: UInt32, encoded: String) throws {
        var out: [UInt8] = []
        out.appendULEB128(value)
        #expect(hex(out) == encoded)
        #expect(ULEB128.encodedCount(value) == out.count)
        var reader = ByteReader(out[...])
        #expect(try reader.readULEB128("value") == value)
        #expect(reader.isAtEnd)
    }

    @Test("every truncation of a ULEB128 is reported as truncated", arguments: ulebVectors)
    func ulebTruncations(value: UInt32, encoded: String) {
        let full = bytes(encoded)
        for cut in 0..<full.count {
            var reader = ByteReader(full[..<cut])
            #expect(throws: FramingError.truncatedPacket(field: "value")) { try reader.readULEB128("value") }
        }
    }

    @Test(
        "overlong, non-minimal and above-32-bit ULEB128 are malformed",
        arguments: ["8000", "ff00", "8080808000", "8080808010", "ffffffff1f", "808080808001"])
    func ulebMalformed(encoded: String) {
        var reader = ByteReader(bytes(encoded)[...])
        #expect(throws: FramingError.malformedULEB128(field: "value")) { try reader.readULEB128("value") }
    }

    @Test("CRC-32 matches zlib's check values, whole and piecewise")
    func crcCheckValues() {
        #expect(CRC32.checksum(ascii("123456789")) == 0xCBF4_3926)
        #expect(CRC32.checksum(ascii("hello")) == 0x3610_A686)
        #expect(CRC32.checksum([UInt8]()) == 0)
        var crc = CRC32()
        crc.update(ascii("1234"))
        crc.update(ascii("56789")[...])
        #expect(crc.value == 0xCBF4_3926)
    }
}

@Suite("msgpipe packet and message headers")
struct HeaderCodecTests {
    static let packetHeaders: [(PacketHeader, String)] = [
        (PacketHeader(isStart: true, isEnd: true, channel: 0, sequence: 0), "c0"),
        (PacketHeader(isStart: true, isEnd: false, channel: 3, sequence: 0), "98"),
        (PacketHeader(isStart: false, isEnd: false, channel: 1, sequence: 5), "0d"),
        (PacketHeader(isStart: false, isEnd: true, channel: 2, sequence: 7), "57"),
        (PacketHeader(isStart: false, isEnd: false, channel: 0, sequence: 3, explicitOffset: 300), "23ac02"),
    ]

    @Test("packet header encodes to the pinned bytes and decodes back", arguments: packetHeaders)
    func packetHeaderVector(header: PacketHeader, encoded: String) throws {
        var out: [UInt8] = []
        header.encode(into: &out)
        #expect(hex(out) == encoded)
        #expect(header.encodedCount == out.count)
        var reader = ByteReader(out[...])
        #expect(try PacketHeader(decoding: &reader) == header)
    }

    @Test("Start packet with an explicit offset is malformed")
    func startWithExplicitOffset() {
        var reader = ByteReader(bytes("a001")[...])
        #expect(throws: FramingError.explicitOffsetOnStartPacket) { try PacketHeader(decoding: &reader) }
    }

    static let messageHeaders: [(MessageHeader, String)] = [
        (MessageHeader(messageID: 1, length: 5), "10000105"),
        (MessageHeader(messageID: 7, length: 1024, flags: [.deflate, .reliable]), "10050780 08"),
        (MessageHeader(messageID: 300, length: 65_536, flags: .request), "1008ac02808004"),
        (MessageHeader(messageID: 9, length: 0, correlationID: 300), "10100900ac02"),
        (
            MessageHeader(messageID: .max, length: .max, flags: [.sealed], correlationID: .max),
            "1012ffffffff0fffffffff0fffffffff0f"
        ),
    ]

    @Test("message header encodes to the pinned bytes and decodes back", arguments: messageHeaders)
    func messageHeaderVector(header: MessageHeader, encoded: String) throws {
        var out: [UInt8] = []
        header.encode(into: &out)
        #expect(hex(out) == encoded.filter { $0 != " " })
        #expect(header.encodedCount == out.count)
        var reader = ByteReader(out[...])
        #expect(try MessageHeader(decoding: &reader) == header)
        #expect(reader.isAtEnd)
    }

    @Test("every truncation of a message header is reported as truncated", arguments: messageHeaders)
    func messageHeaderTruncations(header: MessageHeader, encoded: String) {
        let full = bytes(encoded)
        for cut in 0..<full.count {
            var reader = ByteReader(full[..<cut])
            #expect {
                try MessageHeader(decoding: &reader)
            } throws: { error in
                guard case .truncatedPacket = error as? FramingError else { return false }
                return true
            }
        }
    }

    @Test("unknown version, unknown kind and reserved flags are rejected with their values")
    func headerRejections() {
        var reader = ByteReader(bytes("20000105")[...])
        #expect(throws: FramingError.unsupportedVersion(2)) { try MessageHeader(decoding: &reader) }
        reader = ByteReader(bytes("12000105")[...])
        #expect(throws: FramingError.unknownMessageKind(2)) { try MessageHeader(decoding: &reader) }
        reader = ByteReader(bytes("10400705")[...])
        #expect(throws: FramingError.reservedFlags(0x40, messageID: 7)) { try MessageHeader(decoding: &reader) }
    }
}

@Suite("msgpipe encoder")
struct MsgPipeEncoderTests {
    @Test("hello at packet size 20 is one pinned packet with header, body and CRC trailer")
    func helloVector() throws {
        let packets = try msgpipePackets(ascii("hello"), packetSize: 20)
        #expect(packets.map(hex) == ["c010000105" + "68656c6c6f" + "86a61036"])
    }

    @Test("empty payload is one packet carrying only the CRC of nothing")
    func emptyVector() throws {
        #expect(try msgpipePackets([], packetSize: 20).map(hex) == ["c01000010000000000"])
    }

    @Test("29 bytes at packet size 20 on channel 2 cut greedily into pinned packets")
    func multiPacketVector() throws {
        let payload = Array(UInt8(0)..<29)
        let packets = try msgpipePackets(payload, packetSize: 20, messageID: 200, channel: 2)
        // Start: 0x90, 10 00 c801 1d, then 14 stream bytes; the other 19 (15 body + 4 CRC) fill packet 1.
        let crc = CRC32.checksum(payload)
        var trailer: [UInt8] = []
        trailer.appendUInt32LittleEndian(crc)
        let stream = payload + trailer
        #expect(packets.count == 2)
        #expect(hex(packets[0]) == "90" + "1000c8011d" + hex(stream[0..<14]))
        #expect(hex(packets[1]) == "51" + hex(stream[14...]))
    }

    @Test("overhead budget: 1 KiB at packet size 20 takes 55 packets, 64 KiB at 244 takes 270")
    func overheadBudget() throws {
        let small = try MsgPipeEncoder(payload: [UInt8](repeating: 1, count: 1024), messageID: 1, packetSize: 20)
        #expect(small.packetCount == 55)
        let large = try MsgPipeEncoder(payload: [UInt8](repeating: 1, count: 65_536), messageID: 1, packetSize: 244)
        #expect(large.packetCount == 270)
        // Every packet but the last is full.
        var out: [UInt8] = []
        for index in 0..<large.packetCount - 1 {
            try large.writePacket(index: index, into: &out)
            #expect(out.count == 244)
        }
    }

    @Test("a retransmitted packet carries its explicit stream offset and as many bytes as fit")
    func explicitOffsetPacket() throws {
        let payload = Array(UInt8(0)..<100)
        let encoder = try MsgPipeEncoder(payload: payload, messageID: 1, packetSize: 20)
        var out: [UInt8] = []
        let range = try encoder.writePacket(index: 2, explicitOffset: true, into: &out)
        // Packet 2 starts at 15 + 19 = 34; X header 0x22 + ULEB 34 leaves 18 bytes.
        #expect(range == 34..<52)
        #expect(hex(out) == "2222" + hex(payload[34..<52]))
        let rest = try encoder.writePacket(fromStreamOffset: 52, sequence: 3, explicitOffset: false, into: &out)
        #expect(rest == 52..<71)
        #expect(out.first == 0x03)
    }

    @Test("packet sizes too small for the Start packet are rejected")
    func packetSizeTooSmall() {
        #expect(throws: FramingError.packetSizeTooSmall(format: "msgpipe", packetSize: 6, minimum: 7)) {
            try MsgPipeEncoder(payload: [UInt8](), messageID: 1, packetSize: 6)
        }
        #expect(throws: FramingError.invalidChannel(4)) {
            try MsgPipeEncoder(payload: [UInt8](), messageID: 1, channel: 4, packetSize: 20)
        }
    }

    @Test("an out-of-range packet index or stream offset throws instead of trapping")
    func outOfRange() throws {
        let encoder = try MsgPipeEncoder(payload: ascii("hello"), messageID: 1, packetSize: 20)
        var out: [UInt8] = []
        #expect(throws: FramingError.packetIndexOutOfRange(index: 1, count: 1)) {
            try encoder.writePacket(index: 1, into: &out)
        }
        #expect(throws: FramingError.streamOffsetOutOfRange(offset: 9, streamCount: 9)) {
            try encoder.writePacket(fromStreamOffset: 9, sequence: 1, explicitOffset: true, into: &out)
        }
    }
}

@Suite("msgpipe packets and control packets")
struct PacketDecodeTests {
    @Test("control packet encodes to c0 11 + payload and decodes back")
    func controlVector() throws {
        var out: [UInt8] = []
        try ControlPacket(payload: bytes("0102ff")[...]).encode(into: &out, packetSize: 20)
        #expect(hex(out) == "c0110102ff")
        #expect(try MsgPipePacket(decoding: out[...]) == .control(ControlPacket(payload: bytes("0102ff")[...])))
        #expect(throws: FramingError.controlPayloadTooLarge(size: 19, limit: 18)) {
            try ControlPacket(payload: [UInt8](repeating: 0, count: 19)[...]).encode(into: &out, packetSize: 20)
        }
    }

    @Test("control packet with any other header byte is malformed")
    func controlMalformed() {
        #expect(throws: FramingError.malformedControlPacket(reason: "header byte must be 0xc0")) {
            try MsgPipePacket(decoding: bytes("c91101")[...])
        }
    }

    @Test("Start packet decodes into its headers and a view of its data")
    func startDecodes() throws {
        let packet = bytes("c010000105" + "68656c6c6f" + "86a61036")
        let decoded = try MsgPipePacket(decoding: packet[...])
        #expect(
            decoded == .start(
                PacketHeader(isStart: true, isEnd: true, channel: 0, sequence: 0),
                MessageHeader(messageID: 1, length: 5), data: packet[5...]))
    }

    @Test("every truncation of a Start packet's headers is rejected, the empty packet too")
    func startTruncations() {
        let packet = bytes("c01012ffffffff0fffffffff0fffffffff0f")
        #expect(throws: FramingError.emptyPacket) { try MsgPipePacket(decoding: packet[..<0]) }
        for cut in 1..<packet.count {
            #expect {
                try MsgPipePacket(decoding: packet[..<cut])
            } throws: { error in
                guard case .truncatedPacket = error as? FramingError else { return false }
                return true
            }
        }
    }
}
