import Foundation
import MsgPipe
import MsgPipeMQTT
import Synchronization
import Testing

/// Throughput and latency phone -> consumer through gateway and broker, against `listen` alone, over UNIX
/// links. Run on demand: MSGPIPE_MQTT_MEASURE=1 swift test --filter MeasurementTests.
@Suite(
    .enabled(if: Mosquitto.isInstalled && ProcessInfo.processInfo.environment["MSGPIPE_MQTT_MEASURE"] == "1"),
    .serialized)
struct MeasurementTests {
    static let count = 1000
    static let concurrency = 16

    private func body(_ index: Int) -> [UInt8] { Array(String(format: "%06d", index).utf8) + [UInt8](repeating: 0x61, count: 94) }

    /// Sends `count` messages, `concurrency` at a time; returns each message's send start and the total time.
    private func run(_ pipe: MessagePipe) async throws -> ([ContinuousClock.Instant], Duration) {
        let starts = Locked([ContinuousClock.Instant?](repeating: nil, count: Self.count))
        let began = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0 ..< Self.count {
                if index >= Self.concurrency { try await group.next() }
                group.addTask {
                    starts.withLock { $0[index] = .now }
                    try await pipe.send(self.body(index), timeout: .seconds(60))
                }
            }
            try await group.waitForAll()
        }
        return (starts.withLock { $0.map { $0! } }, ContinuousClock.now - began)
    }

    private func report(_ label: String, total: Duration, latencies: [Duration]) {
        let sorted = latencies.sorted()
        let seconds = Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18
        func ms(_ d: Duration) -> String { String(format: "%.2f ms", Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000) }
        print(
            "\(label): \(Self.count) messages of 100 B, \(Self.concurrency) in flight: "
                + String(format: "%.0f msg/s", Double(Self.count) / seconds)
                + ", latency p50 \(ms(sorted[sorted.count / 2])), p99 \(ms(sorted[sorted.count * 99 / 100]))")
    }

    @Test func listenAlone() async throws {
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("l.sock").path
        let server = try await MessagePipe.listen(path: path)
        let arrivals = Locked([Int: ContinuousClock.Instant]())
        let receiving = Task {
            for await central in server.centrals {
                for await message in central.messages {
                    let index = Int(String(decoding: message.bytes.prefix(6), as: UTF8.self))!
                    arrivals.withLock { $0[index] = .now }
                }
            }
        }
        let pipe = try await MessagePipe.connect(to: "unix:\(path)")
        let (starts, total) = try await run(pipe)
        let latencies = arrivals.withLock { arrivals in (0 ..< Self.count).map { arrivals[$0]! - starts[$0] } }
        report("listen alone", total: total, latencies: latencies)
        await pipe.close()
        await server.close()
        receiving.cancel()
    }

    @Test func throughGatewayAndBroker() async throws {
        let broker = try Mosquitto()
        let consumer = try Consumer(port: broker.port)
        try await Task.sleep(for: .milliseconds(300))
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("g.sock").path
        let gateway = try await MQTTGateway.connect(to: MQTTBrokerURL(broker.url), gatewayID: "gw1")
        var options = MessagePipe.Options()
        options.holdsAcknowledgements = true
        let server = try await MessagePipe.listen(path: path, options: options)
        let uplink = Task { try? await gateway.uplink(from: server) }
        let pipe = try await MessagePipe.connect(to: "unix:\(path)")
        let (starts, total) = try await run(pipe)
        #expect(await consumer.waitFor(count: Self.count, seconds: 30))
        let received = consumer.received
        let times = consumer.arrivalTimes
        var latencies: [Duration] = []
        for (line, time) in zip(received, times) {
            guard let index = Int(line.payload.prefix(6)) else { continue }
            latencies.append(time - starts[index])
        }
        report("phone -> gateway -> mosquitto -> mosquitto_sub", total: total, latencies: latencies)
        await pipe.close()
        await server.close()
        _ = await uplink.value
        await gateway.close()
        consumer.stop()
    }

    @Test func gatewayMemoryWhileTheBrokerIsDown() async throws {
        let broker = try Mosquitto()
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("m.sock").path
        let gateway = Process()
        gateway.executableURL = ListenMQTTCLITests.binary
        gateway.arguments = ["listen", "--link", "unix:\(path)", "--mqtt", broker.url, "--gateway", "gw1"]
        gateway.standardOutput = FileHandle.nullDevice
        gateway.standardError = FileHandle.nullDevice
        try gateway.run()
        while !FileManager.default.fileExists(atPath: path) { try await Task.sleep(for: .milliseconds(50)) }
        try await Task.sleep(for: .milliseconds(300))
        func rss() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(gateway.processIdentifier)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        let idle = rss()
        broker.stop()
        let phones = 4
        let perPhone = 20
        let size = 256 << 10
        let sending = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for phone in 0 ..< phones {
                    group.addTask {
                        let pipe = try await MessagePipe.connect(to: "unix:\(path)")
                        for index in 0 ..< perPhone {
                            try await pipe.send([UInt8](repeating: UInt8(phone * 32 + index), count: size), timeout: .seconds(120))
                        }
                        await pipe.close()
                    }
                }
                try await group.waitForAll()
            }
        }
        try await Task.sleep(for: .seconds(6))
        let held = rss()
        try broker.start()
        let began = ContinuousClock.now
        try await sending.value
        print(
            "gateway RSS: \(idle) kB idle, \(held) kB with the broker down and \(phones) phones sending \(perPhone) x 256 KiB each; "
                + "all \(phones * perPhone) acknowledged \(ContinuousClock.now - began) after the broker returned")
        gateway.terminate()
        _ = await exited(gateway)
    }
}

/// A value several tasks update.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
