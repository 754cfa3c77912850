import Foundation
import MsgPipe
import Secure
import TestSupport
import Testing

/// The MQTT gateway with end-to-end keys: uplinks say which key sealed them, a downlink addressed to a key's
/// name reaches only that phone.
@Suite(.enabled(if: Mosquitto.isInstalled, "needs Debian's mosquitto"), .serialized)
struct KeyedGatewayTests {
    let gateway = IdentityKey()
    let phones = ["till-a": IdentityKey(), "till-b": IdentityKey()]

    /// The gateway's identity file and an authorized-keys file with both phones, mode 0600.
    func keyFiles(in directory: URL) throws -> (identity: String, authorized: String) {
        let identity = directory.appendingPathComponent("gw.id").path
        let authorized = directory.appendingPathComponent("authorized_keys").path
        try (gateway.text + "\n").write(toFile: identity, atomically: true, encoding: .utf8)
        let lines = phones.keys.sorted().map { "\(phones[$0]!.publicKey.text) \($0)\n" }.joined()
        try lines.write(toFile: authorized, atomically: true, encoding: .utf8)
        for path in [identity, authorized] { chmod(path, 0o600) }
        return (identity, authorized)
    }

    func phone(_ name: String, at path: String) async throws -> MessagePipe {
        var options = MessagePipe.Options()
        options.keys = .credentials(.identity(phones[name]!, peer: gateway.publicKey))
        return try await MessagePipe.connect(to: "unix:\(path)", options: options)
    }

    func start(_ arguments: [String], socket: String) async throws -> Process {
        let process = Process()
        process.executableURL = ListenMQTTCLITests.binary
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date(timeIntervalSinceNow: 20)
        while !FileManager.default.fileExists(atPath: socket), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        return process
    }

    @Test("listen --mqtt with authorized keys: each uplink carries peer_key and peer_name of the phone that sealed it")
    func uplinksNameTheKey() async throws {
        let broker = try await Mosquitto.started()
        let consumer = try Consumer(port: broker.port)
        try await Task.sleep(for: .milliseconds(300))
        let dir = try scratchDirectory()
        let socket = dir.appendingPathComponent("gw.sock").path
        let keys = try keyFiles(in: dir)
        let metrics = try Consumer(port: broker.port, topic: "fleet/+/metrics")
        let listen = try await start([
            "listen", "--link", "unix:\(socket)", "--mqtt", broker.url, "--gateway", "gw1",
            "--identity", keys.identity, "--authorized-keys", keys.authorized, "--metrics-interval", "1",
        ], socket: socket)
        defer { listen.terminate() }
        for name in ["till-a", "till-b"] {
            let pipe = try await phone(name, at: socket)
            try await pipe.send(Array("sale from \(name)".utf8), timeout: hangGuard)
            await pipe.close()
        }
        #expect(await consumer.waitFor(count: 2, seconds: 15))
        var byName: [String: String] = [:]
        for message in consumer.received {
            byName[message.properties["peer_name"] ?? "?"] = message.payload
            #expect(message.properties["peer_key"] == phones[message.properties["peer_name"] ?? ""]?.publicKey.text)
        }
        #expect(byName == ["till-a": "sale from till-a", "till-b": "sale from till-b"])
        // A stranger is refused, and the metrics line counts it.
        var strangerOptions = MessagePipe.Options()
        strangerOptions.keys = .credentials(.identity(IdentityKey(), peer: gateway.publicKey))
        await #expect(throws: (any Error).self) {
            _ = try await MessagePipe.connect(to: "unix:\(socket)", options: strangerOptions)
        }
        let deadline = ContinuousClock.now + .seconds(15)
        while !metrics.received.contains(where: { $0.payload.contains("\"refused_handshakes\":1}") }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(metrics.received.contains { $0.payload.contains("\"refused_handshakes\":1}") }, "\(metrics.received.map(\.payload))")
        listen.terminate()
        #expect(await exited(listen) == 0)
    }

    @Test("send --role peripheral --mqtt with authorized keys: a downlink to a key's name reaches only that phone")
    func downlinkToAKeyName() async throws {
        let broker = try await Mosquitto.started()
        let dir = try scratchDirectory()
        let socket = dir.appendingPathComponent("gw.sock").path
        let keys = try keyFiles(in: dir)
        let gatewayProcess = try await start([
            "send", "--link", "unix:\(socket)", "--role", "peripheral", "--mqtt", broker.url, "--gateway", "gw1",
            "--state", dir.appendingPathComponent("state").path,
            "--identity", keys.identity, "--authorized-keys", keys.authorized,
        ], socket: socket)
        defer { gatewayProcess.terminate() }
        let a = Inbox(try await phone("till-a", at: socket))
        let b = Inbox(try await phone("till-b", at: socket))
        try await Task.sleep(for: .milliseconds(300))
        let publish = Process()
        publish.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        publish.arguments = [
            "-V", "mqttv5", "-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1", "-t", "fleet/gw1/down",
            "-m", "refund 5", "-D", "publish", "user-property", "id", "d-1", "-D", "publish", "user-property", "peer", "till-b",
        ]
        try publish.run()
        publish.waitUntilExit()
        #expect(await b.waitFor(["refund 5"]))
        try await Task.sleep(for: .milliseconds(500))
        #expect(a.received.isEmpty, "till-a gets nothing")
        gatewayProcess.terminate()
        _ = await exited(gatewayProcess)
    }
}
