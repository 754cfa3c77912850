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
        acceptor.arrive(peripheral, from: identity)
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

    func arrive(_ end: MemoryLink, from peer: String) { arrivals.continuation.yield((end, peer)) }

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
        let server = try await MessagePipe.serve(at: "kiosk", over: stack)
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
        var serverOptions = MessagePipe.Options()
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
