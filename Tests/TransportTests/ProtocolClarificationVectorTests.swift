import Framing
import Testing
import TestSupport
@testable import Transport

/// PROTOCOL.md 3.1-3.9 clarifications: each vector written there is produced here by the
/// implementation itself (endpoints talking through a hand-driven link), so spec and code cannot drift.
@Suite struct ProtocolClarificationVectorTests {
    static let senderSession: UInt64 = 0x0123_4567_89ab_cdef
    static let listenerSession: UInt64 = 0xfedc_ba98_7654_3210
    /// The 100-byte body of the vectors: bytes 00 01 .. 63.
    static let body = (0 ..< 100).map { UInt8($0) }

    /// Two endpoints, unchecked packets (so that the implicit and explicit forms are both visible).
    struct Pair {
        var sender: TransportEndpoint
        var listener: TransportEndpoint
        var now: Duration = .zero

        init(packetSize: Int) {
            var configuration = EndpointConfiguration()
            configuration.packetChecks = .never
            sender = TransportEndpoint(configuration: configuration, session: senderSession)
            listener = TransportEndpoint(configuration: configuration, session: listenerSession)
            connect(packetSize: packetSize)
        }

        mutating func connect(packetSize: Int) {
            sender.linkConnected(maximumPacketSize: packetSize, now: now)
            listener.linkConnected(maximumPacketSize: packetSize, now: now)
        }

        mutating func disconnect() {
            sender.linkDisconnected(now: now)
            listener.linkDisconnected(now: now)
        }

        /// Everything `endpoint` writes now.
        static func drain(_ endpoint: inout TransportEndpoint, now: Duration) -> [[UInt8]] {
            var packets: [[UInt8]] = []
            var buffer: [UInt8] = []
            while endpoint.writeNextPacket(into: &buffer, now: now) { packets.append(buffer) }
            return packets
        }

        mutating func fromSender() -> [[UInt8]] { Self.drain(&sender, now: now) }

        /// The next `count` packets the sender writes (the rest stays unsent).
        mutating func fromSender(first count: Int) -> [[UInt8]] {
            var packets: [[UInt8]] = []
            var buffer: [UInt8] = []
            while packets.count < count, sender.writeNextPacket(into: &buffer, now: now) { packets.append(buffer) }
            return packets
        }
        mutating func fromListener() -> [[UInt8]] { Self.drain(&listener, now: now) }

        mutating func toListener(_ packets: [[UInt8]]) {
            for packet in packets { listener.receive(packet[...], now: now) }
        }

        mutating func toSender(_ packets: [[UInt8]]) {
            for packet in packets { sender.receive(packet[...], now: now) }
        }
    }

    static func isControl(_ packet: [UInt8]) -> Bool { packet.starts(with: [0xC0, 0x11]) }
    static func control(_ packet: [UInt8]) -> TransportControl? { TransportControl(decoding: packet[...]) }
    /// Hello, query and cancel: what a side sends as a sender (the rest answers the peer's sender).
    static func isSenderControl(_ control: TransportControl) -> Bool {
        switch control {
        case .hello, .query, .cancel: true
        default: false
        }
    }

    static func spaced(_ packets: [[UInt8]]) -> [String] { packets.map { hex($0, separator: " ") } }

    // MARK: 3.1 / 3.9: a side that only receives still sends hello and expects welcome

    @Test("a side with nothing to send opens every connection with its hello, resent until welcome")
    func receiveOnlySideSendsHelloUntilWelcome() {
        var pair = Pair(packetSize: 20)
        let first = pair.fromListener()
        #expect(Self.spaced(first) == ["c0 11 0d 10 32 54 76 98 ba dc fe 01 13 49"])
        #expect(Self.control(first[0]) == .hello(session: Self.listenerSession, firstMessageID: 1))
        // Unanswered, it goes again on the retransmission timeout.
        let timeout = try! #require(pair.listener.nextTimeout)
        pair.now = timeout
        pair.listener.handleTimeout(now: pair.now)
        #expect(pair.fromListener() == first)
        // The other side answers with welcome naming that session; then the hello stops.
        pair.toSender(first)
        let answer = pair.fromSender().filter { Self.control($0) == .welcome(session: Self.listenerSession) }
        #expect(Self.spaced(answer) == ["c0 11 0e 10 32 54 76 98 ba dc fe 83 91"])
        pair.toListener(answer)
        pair.now += .seconds(10)
        pair.listener.handleTimeout(now: pair.now)
        #expect(pair.fromListener().isEmpty)
    }

    // MARK: 3.4: a control packet's check covers only its own bytes

    @Test("a control packet's check is CRC-32 over its own preceding bytes, no message id or offset before them")
    func controlCheckCoversOnlyItsOwnBytes() {
        var packet: [UInt8] = []
        TransportControl.complete(messageID: 1).encode(into: &packet)
        #expect(hex(packet, separator: " ") == "c0 11 02 01 49 aa")
        #expect(CRC32.checksum(bytes("c0 11 02 01")) == 0x0FDC_AA49)
        // A data packet's check of the same bytes (message id 1, offset 0 before them) would differ.
        #expect(PacketCheck.data(messageID: 1, streamOffset: 0, bytes: bytes("c0 11 02 01")[...]) == 0xFF55)
    }

    // MARK: 3.4: acknowledgement bitmaps

    @Test("no segment held after the cumulative one: the acknowledgement has an empty bitmap")
    func emptyBitmap() {
        var pair = Pair(packetSize: 20)
        _ = try! pair.sender.submit(Self.body, now: pair.now)
        let packets = pair.fromSender()
        // hello, Start (segment 0), segments 1-5
        #expect(packets.count == 7)
        pair.toListener(Array(packets[0 ... 2]))
        pair.now = try! #require(pair.listener.nextTimeout)
        pair.listener.handleTimeout(now: pair.now)
        let acks = pair.fromListener().filter { if case .acknowledgement = Self.control($0) { true } else { false } }
        #expect(Self.spaced(acks) == ["c0 11 01 01 02 01 63 5e"])
        #expect(Self.control(acks[0]) == .acknowledgement(
            Acknowledgement(messageID: 1, cumulative: 2, bitmapStart: 3, bitmap: [])))
    }

    @Test("the bitmap ends at the byte of the highest held segment; its trailing zero bits are missing segments")
    func trailingZeroBits() {
        var pair = Pair(packetSize: 20)
        _ = try! pair.sender.submit(Self.body, now: pair.now)
        let packets = pair.fromSender()
        // Segment 2 lost: segment 3 skips ahead, and the listener acknowledges at once.
        pair.toListener([packets[0], packets[1], packets[2], packets[4]])
        let acks = pair.fromListener().filter { if case .acknowledgement = Self.control($0) { true } else { false } }
        #expect(Self.spaced(acks) == ["c0 11 01 01 02 01 01 a7 0a"])
        guard case let .acknowledgement(ack)? = acks.first.flatMap(Self.control) else {
            Issue.record("no acknowledgement")
            return
        }
        #expect(ack.isHeldInBitmap(3))
        #expect((4 ..< 11).allSatisfy { ack.reportsMissing($0) }, "bits 1-7 of the last byte read as missing")
        #expect(!ack.reportsMissing(11), "past the last byte nothing is reported")
    }

    // MARK: 3.2 / 3.3: an explicit-offset packet: its check, and E on the last byte

    @Test("a lost last segment goes again with an explicit offset, E set, and a check over id, offset and bytes")
    func explicitOffsetPacketCarryingTheLastByte() {
        var pair = Pair(packetSize: 20)
        _ = try! pair.sender.submit(Array("abcdefghijklmnopqrst".utf8), now: pair.now)
        let packets = pair.fromSender()
        #expect(Self.spaced(Array(packets.dropFirst())) == [
            "80 10 04 01 14 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 61 6b",
            "41 6e 6f 70 71 72 73 74 e5 6a 59 1a",
        ])
        // Segment 1 lost; the sender's timeout sends a query, the answer reports segment 1 missing.
        pair.toListener(Array(packets.prefix(2)))
        pair.toSender(pair.fromListener())
        pair.now = try! #require(pair.sender.nextTimeout)
        pair.sender.handleTimeout(now: pair.now)
        pair.toListener(pair.fromSender())
        pair.toSender(pair.fromListener())
        let resent = pair.fromSender().filter { !Self.isControl($0) }
        #expect(Self.spaced(resent) == ["61 0d 6e 6f 70 71 72 73 74 e5 6a 59 1a d3 4f"])
        #expect(PacketCheck.data(messageID: 1, streamOffset: 13, bytes: resent[0].dropLast(2)) == 0x4FD3)
        pair.toListener(resent)
        #expect(pair.listener.takeMessage()?.body == Array("abcdefghijklmnopqrst".utf8))
    }

    // MARK: 3.7: new segments after a reconnect

    @Test("after a reconnect the next 3 new segments start explicit-offset packets; then implicit packets resume")
    func explicitNewSegmentsAfterReconnect() {
        var pair = Pair(packetSize: 20)
        _ = try! pair.sender.submit(Self.body, now: pair.now)
        pair.toListener(pair.fromSender(first: 3))  // hello, segments 0 and 1; then the link drops
        pair.toSender(pair.fromListener())
        pair.disconnect()
        pair.connect(packetSize: 20)
        // (Its own answers to the listener, e.g. a welcome, are not part of this vector.)
        let reconnect = pair.fromSender()
        #expect(Self.spaced(reconnect.filter { Self.control($0).map(Self.isSenderControl) ?? true }) == [
            "c0 11 0d ef cd ab 89 67 45 23 01 01 a0 aa",  // hello
            "c0 11 05 01 8e 3c",  // query 1
        ])
        pair.toListener(reconnect)
        pair.toSender(pair.fromListener())
        let data = pair.fromSender().filter { !Self.isControl($0) }
        #expect(Self.spaced(data) == [
            "22 20 20 21 22 23 24 25 26 27 28 29 2a 2b 2c 2d 2e 2f 2c fd",  // segment 2, first 16 bytes
            "22 30 30 31 32 b2 68",  // its last 3 bytes
            "23 33 33 34 35 36 37 38 39 3a 3b 3c 3d 3e 3f 40 41 42 84 ea",  // segment 3
            "23 43 43 44 45 45 0e",
            "24 46 46 47 48 49 4a 4b 4c 4d 4e 4f 50 51 52 53 54 55 b9 d6",  // segment 4
            "24 56 56 57 58 16 3e",
            "45 59 5a 5b 5c 5d 5e 5f 60 61 62 63 f5 32 c9 58",  // segment 5: implicit again (E, Q 5)
        ])
        pair.toListener(data)
        #expect(pair.listener.takeMessage()?.body == Self.body)
    }

    // MARK: 3.2 / 3.7: a lost Start when P shrank below P0

    @Test("a Start lost before a reconnect at a smaller P: the answer is unknown and the message restarts at the new P")
    func lostStartAfterPacketSizeShrank() {
        var pair = Pair(packetSize: 40)
        let body = Array("abcdefghijklmnopqrst".utf8)
        _ = try! pair.sender.submit(body, now: pair.now)
        let packets = pair.fromSender()
        #expect(packets.count == 2 && packets[1].count == 31)  // hello; the whole message in one Start (P0 40)
        pair.toListener([packets[0]])  // the Start is lost with the link
        pair.toSender(pair.fromListener())
        pair.disconnect()
        pair.connect(packetSize: 20)
        pair.toListener(pair.fromSender())  // hello, query 1
        let answer = pair.fromListener()
        #expect(answer.contains { Self.control($0) == .unknown(messageID: 1) })
        pair.toSender(answer)
        let data = pair.fromSender().filter { !Self.isControl($0) }
        // The same packets as a message first sent at P = 20 (PROTOCOL.md 3.4's data vector): P0 is now 20.
        #expect(Self.spaced(data) == [
            "80 10 04 01 14 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 61 6b",
            "41 6e 6f 70 71 72 73 74 e5 6a 59 1a",
        ])
        pair.toListener(data)
        #expect(pair.listener.takeMessage()?.body == body)
    }
}
