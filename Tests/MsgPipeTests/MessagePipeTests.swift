import BLELink
import GATT
import Glibc
import MsgPipe
import Synchronization
import TestSupport
import Testing

/// The library's one-screen API over `unix:` sockets: the same GATT, Transport and accept loop as over
/// Bluetooth, without a radio.
@Suite("MessagePipe over unix sockets")
struct MessagePipeTests {
    static func socketPath(_ name: String) -> String {
        "/tmp/msgpipe-test-\(getpid())-\(name)-\(UInt32.random(in: 0 ... .max)).sock"
    }


    @Test func aCentralSendsAndReceivesWholeMessagesBothWays() async throws {
        let path = Self.socketPath("both")
        let server = try await MessagePipe.listen(path: path, options: .patientForTests)
        #expect(server.description == "listening on unix:\(path)")
        let central = try await MessagePipe.connect(to: "unix:\(path)")
        let big = seededBytes(300_000, seed: 7)
        try await central.send(big)
        var centrals = server.centrals.makeAsyncIterator()
        let peripheralSide = try #require(await centrals.next())
        var received = peripheralSide.messages.makeAsyncIterator()
        #expect(await received.next()?.bytes == big)
        try await peripheralSide.send(Array("reply".utf8))
        var replies = central.messages.makeAsyncIterator()
        #expect(await replies.next()?.bytes == Array("reply".utf8))
        await central.close()
        await server.close()
        #expect(access(path, F_OK) != 0, "the socket file is removed")
    }

    @Test func aPeripheralServesSeveralCentralsAtOnce() async throws {
        let path = Self.socketPath("several")
        let server = try await MessagePipe.listen(path: path, options: .patientForTests)
        let pipes = try await withThrowingTaskGroup(of: MessagePipe.self) { group in
            for index in 0 ..< 3 {
                group.addTask {
                    let pipe = try await MessagePipe.connect(to: "unix:\(path)")
                    try await pipe.send(seededBytes(20_000 + index, seed: UInt64(index)))
                    return pipe
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var sizes: [Int] = []
        var peers = Set<String>()
        for await central in server.centrals {
            var iterator = central.messages.makeAsyncIterator()
            let message = try #require(await iterator.next())
            #expect(message.bytes == seededBytes(message.bytes.count, seed: UInt64(message.bytes.count - 20_000)))
            sizes.append(message.bytes.count)
            peers.insert(central.peer)
            if sizes.count == 3 { break }
        }
        #expect(sizes.sorted() == [20_000, 20_001, 20_002])
        #expect(peers.count == 3)
        #expect(server.connectedCentrals == 3, "each socket is a central of its own")
        for pipe in pipes { await pipe.close() }
        await server.waitUntilNoCentrals(timeout: hangGuard)  // returns as the last one goes: a hang guard only
        #expect(server.connectedCentrals == 0)
        await server.close()
    }

    @Test(arguments: ["legacy", "eom", "lines"])
    func plainFormatsCarryMessagesInOrderBothWays(format: String) async throws {
        let path = Self.socketPath("plain-\(format)")
        var options = MessagePipe.Options()
        options.format = try #require(.init(rawValue: format))
        let server = try await MessagePipe.listen(path: path, options: options)
        let central = try await MessagePipe.connect(to: "unix:\(path)", options: options)
        let first = Array("first message, longer than one packet of twenty bytes".utf8)
        let second = Array("second".utf8)
        try await central.send(first)
        try await central.send(second)
        var centrals = server.centrals.makeAsyncIterator()
        let peripheralSide = try #require(await centrals.next())
        var received = peripheralSide.messages.makeAsyncIterator()
        #expect(await received.next()?.bytes == first)
        #expect(await received.next()?.bytes == second)
        try await peripheralSide.send(Array("pushed".utf8))
        var pushed = central.messages.makeAsyncIterator()
        #expect(await pushed.next()?.bytes == Array("pushed".utf8))
        await central.close()
        await server.close()
    }

    @Test func aCentralThatSpeaksAnotherFormatIsRefusedAtConnect() async throws {
        let path = Self.socketPath("mismatch")
        var legacy = MessagePipe.Options()
        legacy.format = .legacy
        let server = try await MessagePipe.listen(path: path, options: legacy)
        await #expect(throws: MessagePipeError.formatMismatch(.msgpipe)) {
            _ = try await MessagePipe.connect(to: "unix:\(path)")
        }
        await server.close()
    }

    @Test func aMessageLargerThanThePeerTakesIsRefusedBeforeSending() async throws {
        let path = Self.socketPath("large")
        var small = MessagePipe.Options.patientForTests
        small.maximumMessageSize = 1000
        let server = try await MessagePipe.listen(path: path, options: small)
        let central = try await MessagePipe.connect(to: "unix:\(path)")
        await #expect(throws: MessagePipeError.messageTooLarge(size: 1001, limit: 1000)) {
            try await central.send(seededBytes(1001, seed: 1))
        }
        await central.close()
        await server.close()
    }

    /// The peripheral drops the connection once mid-message: the central reconnects (backoff from its
    /// options) and Transport resumes; the message arrives once, intact.
    @Test func aDroppedLinkIsReconnectedAndTheMessageResumed() async throws {
        let path = Self.socketPath("drop")
        let counters = DropCounters()
        var serverOptions = MessagePipe.Options.patientForTests
        serverOptions.onLinkEvent = { event, link in
            guard case let .packet(packet) = event else { return }
            if counters.received.add(packet.count, ordering: .relaxed).newValue > 60_000,
               !counters.dropped.exchange(true, ordering: .relaxed) {
                Task { await link.disconnect() }
            }
        }
        let server = try await MessagePipe.listen(path: path, options: serverOptions)
        let notes = Mutex<[String]>([])
        var options = MessagePipe.Options()
        options.onNote = { note in notes.withLock { $0.append(note.description) } }
        let central = try await MessagePipe.connect(to: "unix:\(path)", options: options)
        let body = seededBytes(200_000, seed: 3)
        try await central.send(body, timeout: hangGuard)
        var centrals = server.centrals.makeAsyncIterator()
        let peripheralSide = try #require(await centrals.next())
        var messages = peripheralSide.messages.makeAsyncIterator()
        #expect(await messages.next()?.bytes == body)
        let didDrop = counters.dropped.load(ordering: .relaxed)
        #expect(didDrop)
        #expect(central.connections == 2)
        #expect(notes.withLock { $0 }.contains { $0.hasPrefix("reconnected to unix:") })
        await central.close()
        await server.close()
    }

    @Test func connectingToNothingFailsWithTheSystemsReason() async throws {
        await #expect(throws: (any Error).self) {
            _ = try await MessagePipe.connect(to: "unix:/nonexistent/msgpipe.sock")
        }
    }
}

/// Phones as centrals do not always subscribe: one that only writes (sending to the box) is served too.
@Suite("plain-format centrals that only write")
struct WriteOnlyCentralTests {
    @Test func aCentralThatWritesWithoutSubscribingGetsItsMessageThrough() async throws {
        let path = MessagePipeTests.socketPath("write-only")
        var options = MessagePipe.Options()
        options.format = .lines
        let server = try await MessagePipe.listen(path: path, options: options)
        let client = GATTClient(bearer: try ATTBearer(adopting: try SeqPacketSocket.connect(path: path)))
        _ = try await client.exchangeMTU(23)
        let service = try await client.discoverPrimaryService(GATTServiceProfile.msgpipe.service)
        let rx = try await client.characteristic(GATTServiceProfile.msgpipe.rx, of: service)
        try await client.write(Array("hi\n".utf8), to: rx.valueHandle)
        var centrals = server.centrals.makeAsyncIterator()
        let central = try #require(await centrals.next())
        var messages = central.messages.makeAsyncIterator()
        #expect(await messages.next()?.bytes == Array("hi".utf8))
        client.close()
        await server.close()
    }

    /// A central that only looks at the services and leaves is not handed out as a pipe.
    @Test func aCentralThatOnlyBrowsesIsNoPipe() async throws {
        let path = MessagePipeTests.socketPath("browse")
        var options = MessagePipe.Options()
        options.format = .legacy
        let server = try await MessagePipe.listen(path: path, options: options)
        let browser = GATTClient(bearer: try ATTBearer(adopting: try SeqPacketSocket.connect(path: path)))
        _ = try await browser.discoverPrimaryServices()
        browser.close()
        let subscriber = try await MessagePipe.connect(to: "unix:\(path)", options: options)
        var centrals = server.centrals.makeAsyncIterator()
        let first = try #require(await centrals.next())
        try await first.send(Array("ticket".utf8))
        var messages = subscriber.messages.makeAsyncIterator()
        #expect(await messages.next()?.bytes == Array("ticket".utf8))
        await subscriber.close()
        await server.close()
    }
}
