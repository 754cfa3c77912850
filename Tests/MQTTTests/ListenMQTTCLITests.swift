import Foundation
import MsgPipe
import Synchronization
import Testing

/// `msgpipe listen --mqtt` as a process: the gateway killed or the broker restarted mid-stream, and the exit
/// codes of its errors.
@Suite(.enabled(if: Mosquitto.isInstalled, "needs Debian's mosquitto"), .serialized)
struct ListenMQTTCLITests {
    static var binary: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("msgpipe")
    }

    /// Starts `msgpipe listen` with `arguments`; returns once it says it publishes (or exited).
    private func listen(_ arguments: [String]) async throws -> (Process, @Sendable () -> String) {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["listen"] + arguments
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        let text = Mutex("")
        /// Signalled once the reader took standard error to its end.
        let ended = DispatchSemaphore(value: 0)
        try process.run()
        let handle = stderr.fileHandleForReading
        Thread {
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            ended.signal()
        }.start()
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline, process.isRunning, !text.withLock({ $0.contains("publishing to") }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        // Standard error so far; once the process exited, all of it (the reader may lag behind the exit).
        return (process, {
            if !process.isRunning, ended.wait(timeout: .now() + 10) == .success { ended.signal() }
            return text.withLock { $0 }
        })
    }

    private func phone(_ path: String) async throws -> MessagePipe {
        var options = MessagePipe.Options()
        options.reconnect = .init(initial: .milliseconds(100), maximum: .milliseconds(300), attempts: .max)
        return try await MessagePipe.connect(to: "unix:\(path)", options: options)
    }

    @Test func aGatewayKilledHoldingMessagesLeavesThemToThePhoneWhichResendsThem() async throws {
        let broker = try await Mosquitto.started()
        let consumer = try Consumer(port: broker.port)
        try await Task.sleep(for: .milliseconds(300))
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("gw.sock").path
        let arguments = ["--link", "unix:\(path)", "--mqtt", broker.url, "--gateway", "gw1"]
        var (gateway, firstLog) = try await listen(arguments)
        let pipe = try await phone(path)
        try await pipe.send(Array("m0".utf8), timeout: .seconds(10))
        // The broker goes: the gateway holds what arrives now, unacknowledged.
        await broker.stop()
        let sent = Atomic<Int>(0)
        let sending = Task {
            for index in 1 ... 3 {
                try await pipe.send(Array("m\(index)".utf8), timeout: .seconds(60))
                sent.add(1, ordering: .relaxed)
            }
        }
        try await Task.sleep(for: .seconds(1.5))
        let sentEarly = sent.load(ordering: .relaxed)
        #expect(sentEarly == 0)
        kill(gateway.processIdentifier, SIGKILL)
        _ = await exited(gateway)
        try await broker.start()
        let (restarted, secondLog) = try await listen(arguments)
        gateway = restarted
        try await sending.value
        #expect(await consumer.waitFor(distinctIDs: 4, seconds: 15), "\(firstLog())\n---\n\(secondLog())\n---\n\(consumer.received)")
        let received = consumer.received
        var firstByID: [String: String] = [:]
        for message in received { firstByID[message.properties["id"] ?? "?"] = message.payload }
        #expect(Set(firstByID.values) == ["m0", "m1", "m2", "m3"])
        #expect(firstByID.count == 4)
        #expect(await retained(port: broker.port, topic: "fleet/gw1/status") == "online")
        await pipe.close()
        // Killed while connected: the broker publishes the Last Will.
        kill(gateway.processIdentifier, SIGKILL)
        _ = await exited(gateway)
        try await Task.sleep(for: .milliseconds(300))
        #expect(await retained(port: broker.port, topic: "fleet/gw1/status") == "offline")
        consumer.stop()
    }

    @Test func aBrokerRestartedMidStreamLosesNothingAcknowledged() async throws {
        let broker = try await Mosquitto.started()
        let consumer = try Consumer(port: broker.port)
        try await Task.sleep(for: .milliseconds(300))
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("gw.sock").path
        let (gateway, _) = try await listen(["--link", "unix:\(path)", "--mqtt", broker.url, "--gateway", "gw1"])
        let pipe = try await phone(path)
        let count = 60
        let sending = Task {
            for index in 0 ..< count { try await pipe.send(Array("n\(index)".utf8), timeout: .seconds(60)) }
        }
        while consumer.received.count < 20 { try await Task.sleep(for: .milliseconds(10)) }
        await broker.stop()
        try await Task.sleep(for: .milliseconds(500))
        try await broker.start()
        try await sending.value
        #expect(await consumer.waitFor(distinctIDs: count, seconds: 15))
        let byID = Dictionary(consumer.received.map { ($0.properties["id"] ?? "?", $0.payload) }, uniquingKeysWith: { a, _ in a })
        #expect(byID.count == count)
        #expect(Set(byID.values) == Set((0 ..< count).map { "n\($0)" }))
        await pipe.close()
        gateway.terminate()
        _ = await exited(gateway)
        consumer.stop()
    }

    @Test func brokerErrorsHaveTheirExitCodes() async throws {
        let broker = try await Mosquitto.started(users: [("gw", "secret")])
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("gw.sock").path
        func status(_ url: String) async throws -> (Int32, String) {
            let (process, text) = try await listen(["--link", "unix:\(path)", "--mqtt", url, "--gateway", "gw1"])
            let code = await exited(process) ?? -1
            return (code, text())
        }
        let bad = try await status("mqtt://127.0.0.1")
        #expect(bad.0 == 64)
        #expect(bad.1.contains("bad broker URL"))
        let refused = try await status("mqtt://gw:wrong@127.0.0.1:\(broker.port)/fleet")
        #expect(refused.0 == 77)
        #expect(refused.1.contains("refused the connection"))
        let unreachable = try await status("mqtt://127.0.0.1:\(try Mosquitto.freePort())/fleet")
        #expect(unreachable.0 == 69)
        #expect(unreachable.1.contains("cannot reach the broker"))
    }
}
