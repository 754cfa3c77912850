import MsgPipeCore
import TestSupport
import Testing

/// `PipeBenchmark` and `MessagePipe.within` over the memory backend of `MemoryStackTests`: what `msgpipe bench`
/// and `msgpipe request` run on, without a Linux backend.
@Suite("PipeBenchmark and one-shot pipes over a test backend of memory links")
struct PipeBenchmarkMemoryTests {
    static func body(_ transfer: Int, _ message: Int) -> [UInt8] {
        seededBytes(5_000, seed: UInt64(transfer * 10 + message))
    }

    @Test func centralsCountEveryAcknowledgedMessageAndTheLastLineSumsThemOverTheWallTime() async throws {
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "kiosk", over: stack, options: .patientForTests)
        let bench = PipeBenchmark(size: 5_000, messages: 3) { Self.body($0, $1) }
        let connectors = (0 ..< 2).map { _ in PipeConnector(to: PipeAddress("kiosk"), over: stack, options: MessagePipe.Options()) }
        let report = await bench.sendAsCentrals(connectors)
        await server.close()
        #expect(report.results.map(\.messagesDelivered) == [3, 3])
        let lines = report.lines
        #expect(lines.map(\.index) == [0, 1, nil])
        #expect(lines.map(\.completed) == [true, true, true])
        #expect(lines.map(\.payloadBytes) == [15_000, 15_000, 30_000])
        #expect(lines[2].messagesSent == 6)
        #expect(lines[2].seconds == report.seconds)
        #expect(lines[0].peer == "memory:kiosk")
        #expect(lines[0].carrier == .gatt)
        #expect(lines[2].carrier == nil)
        #expect(lines[0].mtu != nil && lines[2].mtu == lines[0].mtu)
        #expect(lines[0].phy == nil, "a memory link tells no PHY")
        #expect(lines[0].goodputKbps > 0)
    }

    @Test func aTransferThatCannotConnectCountsItsFailedMessageAndIsNotCompleted() async throws {
        let bench = PipeBenchmark(size: 5_000, messages: 2) { Self.body($0, $1) }
        var options = MessagePipe.Options()
        options.connectTimeout = .milliseconds(100)
        let report = await bench.sendAsCentrals([PipeConnector(to: PipeAddress("nobody"), over: MemoryStack(), options: options)])
        let result = try #require(report.results.first)
        guard case .connect? = result.failure else {
            Issue.record("expected a connect failure, got \(String(describing: result.failure))")
            return
        }
        #expect(report.lines.count == 1, "one transfer: no line for all")
        #expect(report.lines[0].completed == false)
        #expect(report.lines[0].messagesSent == 1)
        #expect(report.lines[0].messagesDelivered == 0)
    }

    @Test func aPeripheralSendsToTheCentralThatSubscribed() async throws {
        let stack = MemoryStack()
        let acceptor = stack.acceptor(at: PipeAddress("kiosk"), options: .patientForTests)
        let bench = PipeBenchmark(size: 5_000, messages: 2) { Self.body($0, $1) }
        let running = Task { try await bench.sendAsPeripheral(acceptor, centrals: 1) }
        let central = try await MessagePipe.connect(to: "kiosk", over: stack)
        var messages = central.messages.makeAsyncIterator()
        #expect(await messages.next()?.bytes == Self.body(0, 0))
        #expect(await messages.next()?.bytes == Self.body(0, 1))
        let report = try await running.value
        await central.close()
        #expect(report.lines.map(\.completed) == [true])
        #expect(report.lines[0].peer == "memory-central-1")
        #expect(report.lines[0].payloadBytes == 10_000)
    }

    @Test func withinReturnsWhatItsBodyReturned() async throws {
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "kiosk", over: stack, options: .patientForTests)
        let peer = try await MessagePipe.within(hangGuard) {
            try await MessagePipe.connect(to: "kiosk", over: stack)
        } run: { pipe in
            try await pipe.send(Array("hello".utf8), timeout: hangGuard)
            return pipe.peer
        }
        await server.close()
        #expect(peer == "memory:kiosk")
    }

    @Test func pastItsTimeWithinClosesThePipeWhichEndsTheBodyAndSaysNoResponse() async throws {
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "kiosk", over: stack, options: .patientForTests)
        await #expect(throws: MessagePipeError.noResponse(seconds: 0.2)) {
            try await MessagePipe.within(.milliseconds(200)) {
                try await MessagePipe.connect(to: "kiosk", over: stack)
            } run: { pipe in
                for await _ in pipe.messages {}  // the server never sends: only the close ends this
                return 0
            }
        }
        await server.close()
    }
}
