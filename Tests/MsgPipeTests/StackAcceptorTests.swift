@testable import MsgPipe
import Synchronization
import Testing

/// Each stack's peripheral is its own acceptor, and the accept loop they share keeps its bounds.
@Suite(.timeLimit(.minutes(1)))
struct StackAcceptorTests {
    @Test("each stack hands out its own acceptor; a unix: address is the socket's on every stack")
    func eachStackHasItsAcceptor() throws {
        let options = MessagePipe.Options()
        let kernel = try #require(KernelStack().acceptor(at: .bluetooth("kiosk"), options: options) as? KernelAcceptor)
        #expect(kernel.name == "kiosk")
        #expect(kernel.options.backend == .kernel)
        #expect(!kernel.endsOnCancellation)
        let socket = try #require(KernelStack().acceptor(at: .unix(path: "/tmp/k.sock"), options: options) as? SocketAcceptor)
        #expect(socket.path == "/tmp/k.sock")
        #expect(socket.endsOnCancellation)
        #expect(SocketStack().acceptor(at: .unix(path: "/tmp/s.sock"), options: options) is SocketAcceptor)
        #expect(BluetoothdAcceptor(name: "kiosk", options: options).options.backend == .bluez)
    }

    @Test("a stack's acceptor keeps only what its stack honours: the kernel's keeps auto's kernel options, bluetoothd's drops them")
    func acceptorsKeepTheirOwnOptions() throws {
        let kernel = KernelOptions(
            connectionParameters: try ConnectionParameterRequest(interval: "15", latency: nil, supervisionTimeout: nil, phy: "2m"),
            bondDirectory: "/var/lib/msgpipe/bonds")
        var options = MessagePipe.Options()
        options.backend = .auto(kernel: kernel)
        #expect(KernelAcceptor(name: "kiosk", options: options).options.backend == .kernel(kernel))
        #expect(BluetoothdAcceptor(name: "kiosk", options: options).options.backend.kernelOptions == nil)
        options.backend = .bluez
        #expect(KernelAcceptor(name: "kiosk", options: options).options.backend == .kernel)
    }

    @Test("the factory's acceptor for a unix: address listens on the socket whatever the backend")
    func factoryPicksTheSocketForAPath() async throws {
        var options = MessagePipe.Options()
        options.backend = .bluez
        let acceptor = try await PipeStacks.acceptor(at: .unix(path: "/tmp/f.sock"), options: options)
        #expect((acceptor as? SocketAcceptor)?.path == "/tmp/f.sock")
    }

    @Test("a PipeAcceptor stopped before its loop picked a backend accepts nobody and returns")
    func stopBeforeStartEndsTheLoop() async throws {
        let path = "/tmp/msgpipe-acceptor-\(UInt32.random(in: 0 ... .max)).sock"
        let acceptor = PipeAcceptor(at: .unix(path: path), options: MessagePipe.Options())
        acceptor.stop()
        let handled = Atomic(0)
        try await acceptor.acceptLinks(info: MessagePipe.Options().serviceInfo()) { _, _ in
            handled.add(1, ordering: .relaxed)
        }
        #expect(handled.load(ordering: .relaxed) == 0)
    }

    @Test("the accept loop runs at most maximumConcurrent handlers at once and stops after connections", arguments: [1, 3])
    func acceptEachKeepsItsBounds(maximumConcurrent: Int) async throws {
        let running = Atomic(0)
        let peak = Atomic(0)
        let numbers = Mutex<[Int]>([])
        var offered = 0
        try await AcceptLoop.acceptEach(connections: 7, maximumConcurrent: maximumConcurrent) { () async -> Int? in
            offered += 1
            return offered
        } handle: { item, number in
            let now = running.add(1, ordering: .relaxed).newValue
            peak.max(now, ordering: .relaxed)
            try? await Task.sleep(for: .milliseconds(5))
            numbers.withLock { $0.append(number) }
            #expect(item == number)
            running.subtract(1, ordering: .relaxed)
        }
        #expect(numbers.withLock { $0.sorted() } == Array(1...7))
        #expect(peak.load(ordering: .relaxed) <= maximumConcurrent)
        #expect(offered == 7)
    }

    @Test("the accept loop ends when its source runs dry, after the handlers it started")
    func acceptEachEndsWithItsSource() async throws {
        let handled = Atomic(0)
        var left = 2
        try await AcceptLoop.acceptEach(connections: nil, maximumConcurrent: 4) { () async -> Int? in
            guard left > 0 else { return nil }
            left -= 1
            return left
        } handle: { _, _ in
            try? await Task.sleep(for: .milliseconds(5))
            handled.add(1, ordering: .relaxed)
        }
        #expect(handled.load(ordering: .relaxed) == 2)
    }
}
