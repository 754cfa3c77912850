import MsgPipe
import Simulator
import TestSupport
import Testing

/// The library's benchmark over UNIX sockets: what it counts is what the receivers got, either way round.
@Suite(.timeLimit(.minutes(1)))
struct PipeBenchmarkTests {
    static func path() -> String { "/tmp/msgpipe-bench-\(UInt32.random(in: 0 ... .max)).sock" }
    static func body(_ transfer: Int, _ message: Int) -> [UInt8] { [UInt8](repeating: UInt8(transfer * 16 + message), count: 3_000) }

    @Test("centrals connecting to peers: one connector per entry, each to its peer, with the options given")
    func centralsConnectingToPeers() {
        var options = MessagePipe.Options()
        options.connectTimeout = .seconds(3)
        guard case let .centrals(connectors) = PipeBenchmark.Side.centrals(
            connectingTo: ["unix:/tmp/a.sock", "unix:/tmp/a.sock", "door"], options: options) else {
            Issue.record("not the centrals' side")
            return
        }
        #expect(connectors.map(\.address) == [.unix(path: "/tmp/a.sock"), .unix(path: "/tmp/a.sock"), .bluetooth("door")])
        #expect(connectors.allSatisfy { $0.options.connectTimeout == .seconds(3) })
    }

    @Test("two centrals' transfers are counted as the listener received them")
    func centralsSendToAListener() async throws {
        let path = Self.path()
        let server = try await MessagePipe.listen(path: path, options: .patientForTests)
        let received = Task {
            var bodies: [[UInt8]] = []
            for await central in server.centrals {
                var messages = central.messages.makeAsyncIterator()
                while bodies.count < 6, let message = await messages.next() {
                    bodies.append(message.bytes)
                    if bodies.count % 3 == 0 { break }
                }
                if bodies.count == 6 { break }
            }
            return bodies
        }
        let bench = PipeBenchmark(size: 3_000, messages: 3, body: Self.body)
        let connector = PipeConnector(to: .unix(path: path), options: MessagePipe.Options())
        let report = await bench.sendAsCentrals([connector, connector])
        #expect(report.results.map(\.index) == [0, 1])
        for result in report.results {
            #expect(result.succeeded, "\(String(describing: result.failure))")
            #expect(result.messagesDelivered == 3 && result.payloadBytes == 9_000)
            #expect(result.carrier == nil, "no carrier over a UNIX socket")
        }
        #expect(report.lines.allSatisfy { $0.mtu != nil && $0.goodputKbps > 0 && $0.completed })
        let bodies = await received.value
        #expect(Set(bodies) == Set((0..<2).flatMap { transfer in (0..<3).map { Self.body(transfer, $0) } }))
        await server.close()
    }

    @Test("a listener that takes smaller messages is reported, not sent to")
    func aTooLargeMessageIsAFailure() async throws {
        let path = Self.path()
        var options = MessagePipe.Options.patientForTests
        options.maximumMessageSize = 1_000
        let server = try await MessagePipe.listen(path: path, options: options)
        let report = await PipeBenchmark(size: 3_000, messages: 1, body: Self.body)
            .sendAsCentrals([PipeConnector(to: .unix(path: path), options: MessagePipe.Options())])
        guard case let .tooLarge(limit)? = report.results.first?.failure else {
            Issue.record("no tooLarge failure: \(String(describing: report.results.first?.failure))")
            return
        }
        #expect(limit == 1_000 && report.results[0].messagesDelivered == 0)
        await server.close()
    }

    @Test("the peripheral sends each subscribed central its transfer")
    func aPeripheralSendsToEachCentral() async throws {
        let path = Self.path()
        let acceptor = PipeAcceptor(at: .unix(path: path), options: .patientForTests)
        let bench = PipeBenchmark(size: 3_000, messages: 2, body: Self.body)
        let ready = AsyncStream<Void>.makeStream()
        let serving = Task { try await bench.sendAsPeripheral(acceptor, centrals: 2) { _ in ready.continuation.yield() } }
        var readiness = ready.stream.makeAsyncIterator()
        await readiness.next()
        let centrals = try await withThrowingTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let pipe = try await MessagePipe.connect(to: "unix:\(path)")
                    var messages = pipe.messages.makeAsyncIterator()
                    var bodies: [[UInt8]] = []
                    while bodies.count < 2, let message = await messages.next() { bodies.append(message.bytes) }
                    await pipe.close()
                    return bodies
                }
            }
            return try await group.reduce(into: [[[UInt8]]]()) { $0.append($1) }
        }
        let report = try await serving.value
        #expect(report.results.count == 2 && report.results.allSatisfy { $0.succeeded && $0.messagesDelivered == 2 })
        #expect(report.seconds > 0)
        #expect(Set(centrals.flatMap { $0 }) == Set((0..<2).flatMap { transfer in (0..<2).map { Self.body(transfer, $0) } }))
    }
}

/// What `msgpipe bench` runs on a real link, as library calls: the seeded messages, either side, the limit.
@Suite(.timeLimit(.minutes(1)))
struct PipeBenchmarkBenchTests {
    @Test("a seeded benchmark sends the simulator's messages, transfer t with seed + t, and counts each")
    func seededCentralsSendTheSimulatorsMessages() async throws {
        let path = PipeBenchmarkTests.path()
        let server = try await MessagePipe.listen(path: path, options: .patientForTests)
        let received = Task {
            var bodies: [[UInt8]] = []
            for await central in server.centrals {
                var messages = central.messages.makeAsyncIterator()
                while let message = await messages.next() {
                    bodies.append(message.bytes)
                    if bodies.count % 2 == 0 { break }
                }
                if bodies.count == 4 { break }
            }
            return bodies
        }
        let connector = PipeConnector(to: .unix(path: path), options: MessagePipe.Options())
        let report = try await PipeBenchmark(size: 2_000, messages: 2, seed: 7).run(.centrals([connector, connector]))
        #expect(report.lines.count == 3 && report.lines.allSatisfy(\.completed))
        let expected = (0..<2).flatMap { transfer in
            (0..<2).map { TransferScenario(link: BLELinkConfiguration(), seed: 7 + UInt64(transfer), messageSize: 2_000, messageCount: 2).message($0) }
        }
        #expect(Set(await received.value) == Set(expected))
        await server.close()
    }

    @Test("a line's limit is the best case at its MTU and measured PHY, 2M when unknown, none on Coded")
    func aLinesLimit() {
        var result = PipeBenchmark.Result(index: 0)
        (result.mtu, result.messagesDelivered, result.payloadBytes) = (247, 1, 100_000)
        let start = ContinuousClock.now
        result.span = start ..< start + .seconds(1)
        var line = PipeBenchmark.Report(results: [result], seconds: 1, messages: 1).lines[0]
        #expect(line.goodputKbps == 800)
        let unknown = line.limit(requestedInterval: nil)
        #expect(unknown.phy == .le2M && !unknown.phyMeasured && unknown.interval == .microseconds(7_500))
        #expect(unknown.kbps == AirTimeModel.bestCase(attMTU: 247).limitKbps)
        #expect(unknown.efficiency == line.goodputKbps / AirTimeModel.bestCase(attMTU: 247).limitKbps)
        line.phy = LinkPHY(transmit: .le1M, receive: .le2M)
        let measured = line.limit(requestedInterval: .milliseconds(30))
        #expect(measured.phy == .le1M && measured.phyMeasured && measured.interval == .milliseconds(30))
        #expect(measured.kbps == AirTimeModel.bestCase(attMTU: 247, phy: .le1M, interval: .milliseconds(30)).limitKbps)
        line.phy = LinkPHY(transmit: .coded, receive: .coded)
        #expect(line.limit(requestedInterval: nil).kbps == nil && line.limit(requestedInterval: nil).efficiency == nil)
        line.phy = nil
        line.mtu = nil
        #expect(line.limit(requestedInterval: nil).kbps == nil)
    }
}
