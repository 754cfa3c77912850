import Testing
@testable import Framing
import TestSupport

@Suite("msgpipe reassembler")
struct ReassemblerTests {
    let payload = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    /// The events after feeding `packets`, then a fresh valid message proving the reassembler still works.
    func eventsThenRecovery(
        _ packets: [[UInt8]], limits: ReassemblyLimits = ReassemblyLimits(), now: Duration = .zero
    ) throws -> [FrameEvent] {
        var reassembler = MsgPipeReassembler(limits: limits)
        var events = feed(packets, into: &reassembler, now: now)
        let fresh = try msgpipePackets(ascii("fresh"), packetSize: 20, messageID: 999)
        let after = feed(fresh, into: &reassembler, now: now)
        #expect(after.last?.body == ascii("fresh"), "the reassembler keeps working after \(events)")
        events += after.dropLast()
        return events
    }

    @Test("a multi-packet message reassembles to its payload, header and channel")
    func reassembles() throws {
        var reassembler = MsgPipeReassembler()
        let events = feed(try msgpipePackets(payload, packetSize: 20, messageID: 7, channel: 3), into: &reassembler)
        let header = MessageHeader(messageID: 7, length: 100)
        #expect(events == [.message(FramedMessage(body: payload, header: header, channel: 3))])
        #expect(reassembler.messagesInProgress == 0)
    }

    @Test("four messages interleaved packet by packet on four channels all arrive")
    func interleaved() throws {
        let streams = try (0..<4).map { channel in
            try msgpipePackets(
                payload + [UInt8(channel)], packetSize: 20, messageID: UInt32(channel + 1), channel: UInt8(channel))
        }
        var packets: [[UInt8]] = []
        for index in 0..<streams[0].count { for stream in streams { packets.append(stream[index]) } }
        var reassembler = MsgPipeReassembler()
        let bodies = feed(packets, into: &reassembler).compactMap(\.body)
        #expect(bodies == (0..<4).map { payload + [UInt8($0)] })
    }

    @Test("every packet sent twice still gives the message once and no failure")
    func duplicatesIgnored() throws {
        let packets = try msgpipePackets(payload, packetSize: 20).flatMap { [$0, $0] }
        var reassembler = MsgPipeReassembler()
        #expect(feed(packets, into: &reassembler).compactMap(\.body) == [payload])
    }

    @Test("a late duplicate of a completed message's last packet or single packet is ignored")
    func lateDuplicatesIgnored() throws {
        let long = try msgpipePackets(payload, packetSize: 20, messageID: 1)
        let short = try msgpipePackets(ascii("hi"), packetSize: 20, messageID: 2)
        var reassembler = MsgPipeReassembler()
        let events = feed(long + [long.last!] + short + short, into: &reassembler)
        #expect(events.compactMap(\.body) == [payload, ascii("hi")])
        #expect(events.allSatisfy { $0.failure == nil })
    }

    @Test("two different messages reusing one id back to back are both delivered")
    func reusedIDIsNotDuplicate() throws {
        let first = try msgpipePackets(ascii("one"), packetSize: 20, messageID: 1)
        let second = try msgpipePackets(ascii("two"), packetSize: 20, messageID: 1)
        var reassembler = MsgPipeReassembler()
        let events = feed(first + second + second, into: &reassembler)
        #expect(events.compactMap(\.body) == [ascii("one"), ascii("two")], "\(events)")
    }

    @Test("every truncation of every packet is reported and the reassembler recovers")
    func truncations() throws {
        let packets = try msgpipePackets(payload, packetSize: 40, messageID: 7)
        for index in packets.indices {
            for cut in 0..<packets[index].count {
                var damaged = packets
                damaged[index] = Array(packets[index][..<cut])
                var events = try eventsThenRecovery(damaged)
                var reassembler = MsgPipeReassembler()
                _ = feed(damaged, into: &reassembler)
                reassembler.finish { events.append($0) }
                #expect(events.contains { $0.failure != nil }, "packet \(index) cut at \(cut)")
                #expect(!events.contains { $0.body != nil }, "packet \(index) cut at \(cut)")
            }
        }
    }

    @Test("a corrupted body or trailer byte gives a CRC mismatch naming the message")
    func crcMismatch() throws {
        for position in [5, 30, 60] {
            var packets = try msgpipePackets(payload, packetSize: 40, messageID: 7)
            packets[position / 40][position % 40] ^= 0x01
            let failures = try eventsThenRecovery(packets).compactMap(\.failure)
            #expect(failures.count == 1)
            guard case .crcMismatch(7, _, _) = failures.first else {
                Issue.record("expected a CRC mismatch, got \(failures)")
                continue
            }
            #expect(failures[0].description.hasPrefix("CRC mismatch in message 7"))
        }
    }

    @Test("a huge length field is refused before buffering, its other packets are dropped silently")
    func hugeLength() throws {
        var packets = try msgpipePackets(payload, packetSize: 20, messageID: 7)
        packets[0] = bytes("8010" + "0007" + "ffffffff0f") + packets[0][5...]
        let limits = ReassemblyLimits(maximumMessageSize: 1 << 20)
        #expect(try eventsThenRecovery(packets, limits: limits) == [
            .failure(.messageTooLarge(messageID: 7, size: Int(UInt32.max), limit: 1 << 20))
        ])
    }

    @Test("unknown version, unknown kind, reserved flags and Transport-checked messages are reported and dropped")
    func headerViolations() throws {
        let packets = try msgpipePackets(payload, packetSize: 20, messageID: 7)
        for (byteIndex, value, expected) in [
            (1, UInt8(0x20), FramingError.unsupportedVersion(2)), (1, 0x13, .unknownMessageKind(3)),
            (2, 0x80, .reservedFlags(0x80, messageID: 7)), (2, 0x20, .checkedMessage(messageID: 7)),
            (2, 0x04, .checkedMessage(messageID: 7)),
        ] {
            var damaged = packets
            damaged[0][byteIndex] = value
            let events = try eventsThenRecovery(damaged)
            #expect(events.first == .failure(expected))
            #expect(events.dropFirst().allSatisfy { $0 == .failure(.packetOutsideMessage(channel: 0)) })
        }
    }

    @Test("a fifth message beyond the in-progress limit is refused while the others complete")
    func tooManyInProgress() throws {
        let streams = try (0..<3).map {
            try msgpipePackets(payload, packetSize: 20, messageID: UInt32(10 + $0), channel: UInt8($0))
        }
        var packets: [[UInt8]] = []
        for index in 0..<streams[0].count { for stream in streams { packets.append(stream[index]) } }
        let limits = ReassemblyLimits(maximumMessagesInProgress: 2)
        let events = try eventsThenRecovery(packets, limits: limits)
        #expect(events.compactMap(\.failure) == [.tooManyMessagesInProgress(messageID: 12, limit: 2)])
        #expect(events.compactMap(\.body) == [payload, payload])
    }

    @Test("a message that would exceed the buffered-bytes limit is refused")
    func bufferedBytesLimit() throws {
        let first = try msgpipePackets(payload, packetSize: 20, messageID: 1, channel: 0)
        let second = try msgpipePackets(payload, packetSize: 20, messageID: 2, channel: 1)
        let limits = ReassemblyLimits(maximumBufferedBytes: 150)
        let packets = [first[0], second[0]] + second.dropFirst() + first.dropFirst()
        let events = try eventsThenRecovery(packets, limits: limits)
        #expect(events.compactMap(\.failure) == [.bufferedBytesExceeded(messageID: 2, needed: 208, limit: 150)])
        #expect(events.compactMap(\.body) == [payload])
    }

    @Test("a partial message idle past the stale timeout is dropped on the injected clock")
    func staleTimeout() throws {
        let packets = try msgpipePackets(payload, packetSize: 20, messageID: 7)
        var reassembler = MsgPipeReassembler(limits: ReassemblyLimits(staleTimeout: .seconds(30)))
        var events = feed([packets[0]], into: &reassembler, now: .seconds(100))
        #expect(reassembler.nextStaleDeadline == .seconds(130))
        reassembler.expireStaleMessages(now: .seconds(130)) { events.append($0) }
        #expect(events.isEmpty)
        events = feed([packets[1]], into: &reassembler, now: .seconds(131))
        #expect(events == [
            .failure(.staleMessage(messageID: 7, channel: 0, receivedBytes: 15)),
            .failure(.packetOutsideMessage(channel: 0)),
        ])
        #expect(reassembler.nextStaleDeadline == nil)
        #expect(feed(packets, into: &reassembler, now: .seconds(200)).compactMap(\.body) == [payload])
    }

    @Test("each channel goes stale on its own deadline")
    func staleDeadlinesPerChannel() throws {
        let zero = try msgpipePackets(payload, packetSize: 20, messageID: 1, channel: 0)
        let one = try msgpipePackets(payload, packetSize: 20, messageID: 2, channel: 1)
        var reassembler = MsgPipeReassembler(limits: ReassemblyLimits(staleTimeout: .seconds(30)))
        var events = feed([zero[0]], into: &reassembler, now: .seconds(0))
        events += feed([one[0]], into: &reassembler, now: .seconds(20))
        events += feed([one[1]], into: &reassembler, now: .seconds(25))
        #expect(events.isEmpty)
        events += feed([one[2]], into: &reassembler, now: .seconds(31))
        #expect(events == [.failure(.staleMessage(messageID: 1, channel: 0, receivedBytes: 15))])
        #expect(reassembler.nextStaleDeadline == .seconds(61))
        reassembler.expireStaleMessages(now: .seconds(61)) { events.append($0) }
        #expect(events.count == 1)
        reassembler.expireStaleMessages(now: .seconds(62)) { events.append($0) }
        #expect(events.last == .failure(.staleMessage(messageID: 2, channel: 1, receivedBytes: 53)))
    }

    @Test("a lost packet is reported as missing, the rest of its message is dropped silently")
    func missingPacket() throws {
        var packets = try msgpipePackets(payload, packetSize: 20, messageID: 7)
        packets.remove(at: 2)
        #expect(try eventsThenRecovery(packets) == [
            .failure(.missingPacket(messageID: 7, channel: 0, detail: "sequence 3, expected 2"))
        ])
    }

    @Test("a new Start on a busy channel reports the partial message and delivers the new one")
    func interrupted() throws {
        let first = try msgpipePackets(payload, packetSize: 20, messageID: 1)
        let second = try msgpipePackets(payload, packetSize: 20, messageID: 2)
        var reassembler = MsgPipeReassembler()
        let events = feed(Array(first.prefix(3)) + second, into: &reassembler)
        #expect(events.first == .failure(.messageInterrupted(messageID: 1, channel: 0, receivedBytes: 53)))
        #expect(events.dropFirst().compactMap(\.body) == [payload])
    }

    @Test("a continuation packet with no message in progress is reported")
    func outsideMessage() throws {
        let packets = try msgpipePackets(payload, packetSize: 20, messageID: 7, channel: 2)
        #expect(try eventsThenRecovery([packets[1]]) == [.failure(.packetOutsideMessage(channel: 2))])
    }

    @Test("End too early, too many bytes and a complete stream without End are malformed")
    func streamViolations() throws {
        let packets = try msgpipePackets(payload, packetSize: 20, messageID: 7)
        var early = packets
        early[1][0] |= 0x40
        #expect(try eventsThenRecovery(Array(early.prefix(2))) == [
            .failure(.endBeforeComplete(messageID: 7, received: 34, expected: 104))
        ])
        var long = packets
        long[long.count - 1] += [0]
        #expect(try eventsThenRecovery(long) == [.failure(.streamOverrun(messageID: 7, expected: 104))])
        var noEnd = packets
        noEnd[noEnd.count - 1][0] &= ~0x40
        #expect(try eventsThenRecovery(noEnd) == [.failure(.missingEndFlag(messageID: 7))])
    }

    @Test("resume with explicit offsets at a new packet size completes the message, overlap trimmed")
    func explicitOffsetResume() throws {
        var encoder = try MsgPipeEncoder(payload: payload, messageID: 7, packetSize: 20)
        var out: [UInt8] = []
        var packets: [[UInt8]] = []
        for index in 0..<3 {
            try encoder.writePacket(index: index, into: &out)
            packets.append(out)
        }
        // Resume from offset 40 (overlapping bytes already received up to 53) at packet size 60.
        try encoder.setPacketSize(60)
        var offset = 40
        var sequence = 3
        while offset < encoder.streamCount {
            let range = try encoder.writePacket(
                fromStreamOffset: offset, sequence: sequence, explicitOffset: true, into: &out)
            offset = range.upperBound
            packets.append(out)
            sequence += 1
        }
        var reassembler = MsgPipeReassembler()
        let events = feed(packets + [packets.last!], into: &reassembler)
        #expect(events.compactMap(\.body) == [payload])
        #expect(events.count == 1)
        // An explicit offset beyond the received bytes is a gap.
        var gap = MsgPipeReassembler()
        try encoder.writePacket(fromStreamOffset: 80, sequence: 3, explicitOffset: true, into: &out)
        #expect(feed(Array(packets.prefix(3)) + [out], into: &gap) == [
            .failure(.missingPacket(messageID: 7, channel: 0, detail: "stream offset 80, expected at most 53"))
        ])
    }

    @Test("progress reports the partial message and its received stream bytes, for resume")
    func progressForResume() throws {
        let packets = try msgpipePackets(payload, packetSize: 20, messageID: 7, channel: 1)
        var reassembler = MsgPipeReassembler()
        _ = feed(Array(packets.prefix(3)), into: &reassembler)
        #expect(reassembler.progress(onChannel: 1) == MessageProgress(
            header: MessageHeader(messageID: 7, length: 100), channel: 1, receivedStreamBytes: 53))
        #expect(reassembler.progress(onChannel: 0) == nil)
        #expect(reassembler.progress(onChannel: 9) == nil)
    }

    @Test("control packets are surfaced whole, between the packets of a message")
    func controlSurfaced() throws {
        var packets = try msgpipePackets(payload, packetSize: 20)
        packets.insert(bytes("c011aabb"), at: 2)
        var reassembler = MsgPipeReassembler()
        #expect(feed(packets, into: &reassembler) == [
            .control(ControlPacket(payload: bytes("aabb")[...])),
            .message(FramedMessage(body: payload, header: MessageHeader(messageID: 1, length: 100))),
        ])
    }

    @Test("finishing with a partial message reports it as incomplete")
    func finishReportsIncomplete() throws {
        let packets = try msgpipePackets(payload, packetSize: 20, messageID: 7, channel: 1)
        var reassembler = MsgPipeReassembler()
        #expect(feed(Array(packets.prefix(2)), into: &reassembler, finish: true) == [
            .failure(.incompleteMessage(messageID: 7, channel: 1, receivedBytes: 34))
        ])
    }

    /// Found by MsgPipeFuzzer: a `reliable` Start (no check, hand-made) was delivered, but the same message from
    /// `MsgPipeEncoder` ends its Start with Transport's check, which plain framing would have read as stream bytes.
    @Test("a reliable message is refused whether or not its Start carries the check, so encoder and reassembler agree")
    func reliableMessagesNeedTransport() throws {
        let encoder = try MsgPipeEncoder(payload: Array("hello".utf8), messageID: 1, flags: .reliable, packetSize: 64)
        var packet: [UInt8] = []
        var encoded = encoder
        let written = encoded.writeNextPacket(into: &packet)
        #expect(written)
        #expect(packet.count == 1 + encoder.header.encodedCount + 5 + 4 + 2)  // header byte, header, body, CRC, check
        var reassembler = MsgPipeReassembler()
        var events: [FrameEvent] = []
        reassembler.receive(packet[...], now: .zero) { events.append($0) }
        #expect(events == [.failure(.checkedMessage(messageID: 1))])
    }
}
