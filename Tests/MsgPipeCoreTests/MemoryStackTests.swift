import MemoryLinks
import MsgPipeCore
import Synchronization
import TestSupport
import Testing
import Transport

/// A backend over in-memory links, written against MsgPipeCore's public `PipeStack` alone (no Linux backend): the library's pipes,
/// accept loop, reconnect and resume run on it as on the kernel's or bluetoothd's. Each central connection is a
/// `MemoryLink` pair; the peripheral's end arrives at the acceptor serving the address's name.
final class MemoryStack: PipeStack {
    private let acceptors = Mutex<[String: MemoryAcceptor]>([:])
    private let centralCount = Atomic<Int>(0)
    /// The central end of every connection made so far.
    private let centralEnds = Mutex<[MemoryLink]>([])

    func centralLink(to address: PipeAddress, options: MessagePipe.Options) async throws -> any CentralLink {
        let number = centralCount.add(1, ordering: .relaxed).newValue
        return MemoryCentralLink(stack: self, name: "\(address)", identity: "memory-central-\(number)")
    }

    func acceptor(at address: PipeAddress, options: MessagePipe.Options) -> any LinkAcceptor {
        let acceptor = MemoryAcceptor(name: "\(address)", options: options)
        acceptors.withLock { $0["\(address)"] = acceptor }
        return acceptor
    }

    func acceptor(named name: String) -> MemoryAcceptor? { acceptors.withLock { $0[name] } }

    func connected(_ end: MemoryLink) { centralEnds.withLock { $0.append(end) } }

    /// Drops every connection made so far, as a radio that loses them does; the centrals reconnect by themselves.
    func dropConnections() async {
        for end in centralEnds.withLock({ $0 }) { await end.disconnect(reason: "dropped by the test") }
    }
}

/// What a memory link is made of: a relay carrying one `MemoryLink` end after another, on GATT's terms
/// (nothing confirms a packet, no info characteristic).
protocol MemoryRelayLink: PipeLink where Events == RelayLink.Events {
    var relay: RelayLink { get }
}

extension MemoryRelayLink {
    var events: RelayLink.Events { relay.events }
    func send(_ packet: [UInt8]) async throws { try await relay.send(packet) }
    func close() async { await relay.close() }
    var carrier: Carrier { .gatt }
    var peerInfo: MsgPipeServiceInfo? { nil }
    var canConfirm: Bool { false }
    func sendConfirmed(_ packet: [UInt8]) async throws { try await send(packet) }
    func disconnect() async { await relay.dropConnection() }

    /// Carries `end` until it ends, in a task of its own.
    func carryInBackground(_ end: MemoryLink) {
        Task { [relay] in await relay.carry(end) }
    }
}

/// The central's link: each connect makes a new pair and hands the other end to the acceptor.
final class MemoryCentralLink: MemoryRelayLink, CentralLink {
    let relay = RelayLink()
    private let stack: MemoryStack
    private let name: String
    private let identity: String

    init(stack: MemoryStack, name: String, identity: String) {
        self.stack = stack
        self.name = name
        self.identity = identity
    }

    func connect(until deadline: ContinuousClock.Instant) async throws -> String {
        guard let acceptor = stack.acceptor(named: name) else { throw LinkError.notConnected }
        let (central, peripheral) = MemoryLink.pair()
        // A server that stopped (and was not started again) takes no connection.
        guard acceptor.arrive(peripheral, from: identity) else { throw LinkError.notConnected }
        stack.connected(central)
        carryInBackground(central)
        return "memory:\(name)"
    }
}

/// A peripheral's link: the one connection a central made.
final class MemoryPeripheralLink: MemoryRelayLink {
    let relay = RelayLink()
}

/// Serves the centrals that connect to its name.
final class MemoryAcceptor: LinkAcceptor {
    let options: MessagePipe.Options
    let name: String
    private let arrivals = AsyncStream<(MemoryLink, String)>.makeStream()

    init(name: String, options: MessagePipe.Options) {
        self.name = name
        self.options = options
    }

    var endsOnCancellation: Bool { true }

    /// Hands `end` to the accept loop; false once the acceptor stopped.
    func arrive(_ end: MemoryLink, from peer: String) -> Bool {
        if case .terminated = arrivals.continuation.yield((end, peer)) { return false }
        return true
    }

    func acceptLinks(
        info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int, centralsAtOnce: Int, unnumbered: Bool,
        onReady: (String) -> Void, handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        onReady("serving memory:\(name)")
        await withDiscardingTaskGroup { group in
            var accepted = 0
            for await (end, peer) in arrivals.stream {
                accepted += 1
                group.addTask {
                    let link = MemoryPeripheralLink()
                    link.carryInBackground(end)
                    await handle(link, peer)
                    await link.close()
                }
                if let connections, accepted >= connections { break }
            }
        }
    }

    func stop() { arrivals.continuation.finish() }
}

@Suite("MessagePipe over a test backend of memory links")
struct MemoryStackTests {
    @Test func aCentralSendsAndReceivesWholeMessagesBothWays() async throws {
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "kiosk", over: stack, options: .patientForTests)
        #expect(server.description == "serving memory:kiosk")
        let central = try await MessagePipe.connect(to: "kiosk", over: stack)
        #expect(central.peer == "memory:kiosk")
        #expect(central.carrier == .gatt)
        let big = seededBytes(300_000, seed: 11)
        try await central.send(big, timeout: hangGuard)
        var centrals = server.centrals.makeAsyncIterator()
        let peripheralSide = try #require(await centrals.next())
        var received = peripheralSide.messages.makeAsyncIterator()
        #expect(await received.next()?.bytes == big)
        try await peripheralSide.send(Array("reply".utf8), timeout: hangGuard)
        var replies = central.messages.makeAsyncIterator()
        #expect(await replies.next()?.bytes == Array("reply".utf8))
        await central.close()
        await server.close()
    }

    /// The peripheral drops the connection mid-message: the central's link connects again through the
    /// stack, Transport resumes, and the message arrives once, intact.
    @Test func aDroppedLinkIsReconnectedAndTheMessageResumed() async throws {
        let stack = MemoryStack()
        let counters = DropCounters()
        var serverOptions = MessagePipe.Options.patientForTests
        serverOptions.onLinkEvent = { event, link in
            guard case let .packet(packet) = event else { return }
            if counters.received.add(packet.count, ordering: .relaxed).newValue > 60_000,
               !counters.dropped.exchange(true, ordering: .relaxed) {
                Task { await link.disconnect() }
            }
        }
        let server = try await MessagePipe.serve(at: "kiosk", over: stack, options: serverOptions)
        let notes = Mutex<[String]>([])
        var options = MessagePipe.Options()
        options.onNote = { note in notes.withLock { $0.append(note.description) } }
        let central = try await MessagePipe.connect(to: "kiosk", over: stack, options: options)
        let body = seededBytes(200_000, seed: 5)
        try await central.send(body, timeout: hangGuard)
        var centrals = server.centrals.makeAsyncIterator()
        let peripheralSide = try #require(await centrals.next())
        var messages = peripheralSide.messages.makeAsyncIterator()
        #expect(await messages.next()?.bytes == body)
        let didDrop = counters.dropped.load(ordering: .relaxed)
        #expect(didDrop)
        #expect(central.connections == 2)
        #expect(notes.withLock { $0 }.contains { $0.hasPrefix("reconnected to memory:kiosk") })
        await central.close()
        await server.close()
    }
}

@Suite("sending to several peers and to several centrals over memory links")
struct DeliveryTests {
    /// What a server's first `count` centrals receive, `messages` each, read until then.
    static func received(by server: PipeServer, centrals count: Int, messages: Int) async -> [[[UInt8]]] {
        var pipes: [MessagePipe] = []
        for await pipe in server.centrals {
            pipes.append(pipe)
            if pipes.count == count { break }
        }
        return await withTaskGroup(of: (Int, [[UInt8]]).self) { group in
            for (index, pipe) in pipes.enumerated() {
                group.addTask { (index, await pipe.messages.prefix(messages).reduce(into: []) { $0.append($1.bytes) }) }
            }
            return await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    @Test func aPeerThatCannotBeReachedFailsAloneAndTheOutcomeIsPartial() async throws {
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "door", over: stack, options: .patientForTests)
        let bodies = (0 ..< 3).map { seededBytes(40_000, seed: UInt64($0)) }
        let reading = Task { await Self.received(by: server, centrals: 1, messages: 3) }
        var options = MessagePipe.Options()
        options.connectTimeout = .milliseconds(300)
        let connected = Mutex<[String]>([])
        let outcome = await MessagePipe.send(
            count: bodies.count, toEach: ["door", "absent"], over: stack, options: options, body: { bodies[$0] },
            onConnected: { peer, _ in connected.withLock { $0.append(peer) } })
        #expect(outcome.deliveries.map(\.peer) == ["door", "absent"])
        #expect(outcome.deliveries.map(\.acknowledged) == [3, 0])
        #expect(outcome.isPartial && !outcome.isComplete)
        #expect(outcome.failed.map(\.peer) == ["absent"])
        guard case .connect? = outcome.deliveries[1].failure else {
            Issue.record("the absent peer failed with \(String(describing: outcome.deliveries[1].failure))")
            return
        }
        #expect(outcome.deliveries[1].failure?.kind == .link)
        #expect(connected.withLock { $0 } == ["door"])
        #expect(await reading.value == [bodies])
        await server.close()
    }

    @Test func everyCentralGetsEveryMessageInOrder() async throws {
        let stack = MemoryStack()
        var options = MessagePipe.Options.patientForTests
        options.maximumCentrals = 3
        let server = try await MessagePipe.serve(at: "kiosk", over: stack, options: options)
        var centrals: [MessagePipe] = []
        for _ in 0 ..< 3 { centrals.append(try await MessagePipe.connect(to: "kiosk", over: stack)) }
        let reading = centrals.map { central in
            Task { await central.messages.prefix(4).reduce(into: []) { $0.append($1.bytes) } }
        }
        let bodies = (0 ..< 4).map { seededBytes(30_000, seed: 100 + UInt64($0)) }
        let acknowledged = Atomic<Int>(0)
        let outcome = try await server.send(count: bodies.count, toCentrals: 3, body: { bodies[$0] }) { _, _, _, _ in
            acknowledged.add(1, ordering: .relaxed)
        }
        #expect(outcome.isComplete)
        #expect(outcome.deliveries.map(\.acknowledged) == [4, 4, 4])
        #expect(acknowledged.load(ordering: .relaxed) == 12)
        for task in reading { #expect(await task.value == bodies) }
        for central in centrals { await central.close() }
        await server.close()
    }

    @Test("serve, send to every central, close: each central gets every message, then the server is closed",
          .timeLimit(.minutes(1)))
    func aServerThatSendsAndLeaves() async throws {
        let stack = MemoryStack()
        var options = MessagePipe.Options.patientForTests
        options.maximumCentrals = 2
        let bodies = (0 ..< 3).map { seededBytes(20_000, seed: 200 + UInt64($0)) }
        let (serving, served) = AsyncStream<PipeServer>.makeStream()
        let sending = Task {
            try await PipeServer.send(
                count: bodies.count, toCentrals: 2, through: stack.acceptor(at: .bluetooth("kiosk"), options: options),
                body: { bodies[$0] }, onServing: { served.yield($0) })
        }
        var heard = serving.makeAsyncIterator()
        let server = try #require(await heard.next(), "told once it serves")
        var reading: [Task<[[UInt8]], Never>] = []
        for _ in 0 ..< 2 {
            let central = try await MessagePipe.connect(to: "kiosk", over: stack)
            reading.append(Task { await central.messages.prefix(bodies.count).reduce(into: []) { $0.append($1.bytes) } })
        }
        let outcome = try await sending.value
        #expect(outcome.isComplete && outcome.deliveries.map(\.acknowledged) == [3, 3])
        for task in reading { #expect(await task.value == bodies) }
        // The server was closed: its centrals ended.
        var rest = server.centrals.makeAsyncIterator()
        #expect(await rest.next() == nil)
    }

    @Test func aServerThatEndsBeforeEnoughCentralsSubscribedSendsNothing() async throws {
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "kiosk", over: stack)
        await server.close()
        await #expect(throws: CentralsError.self) {
            _ = try await server.send(count: 1, toCentrals: 2, body: { _ in [1] })
        }
    }
}
