import Foundation
import MsgPipe
import MsgPipeMQTT
import Synchronization
import TestSupport
import Testing

/// The gateway against a real mosquitto on loopback, centrals over UNIX sockets: what the phone saw
/// acknowledged is in the broker, exactly once by `id`.
@Suite(.enabled(if: Mosquitto.isInstalled, "needs Debian's mosquitto"), .serialized)
struct GatewayUplinkTests {
    /// A gateway serving `unix:PATH` with held acknowledgements, forwarding until the returned task ends.
    private func startGateway(
        broker: String, id: String, path: String, options: MQTTGateway.Options = MQTTGateway.Options()
    ) async throws -> (MQTTGateway, PipeServer, Task<MQTTGatewayError?, Never>) {
        let gateway = try await MQTTGateway.connect(to: MQTTBrokerURL(broker), gatewayID: id, options: options)
        var pipeOptions = MessagePipe.Options()
        pipeOptions.holdsAcknowledgements = true
        let server = try await MessagePipe.listen(path: path, options: pipeOptions)
        let task = Task<MQTTGatewayError?, Never> {
            do throws(MQTTGatewayError) {
                try await gateway.uplink(from: server)
                return nil
            } catch {
                return error
            }
        }
        return (gateway, server, task)
    }

    private func phone(_ path: String) async throws -> MessagePipe {
        var options = MessagePipe.Options()
        options.reconnect = .init(initial: .milliseconds(100), maximum: .milliseconds(500), attempts: .max)
        return try await MessagePipe.connect(to: "unix:\(path)", options: options)
    }

    @Test func eachMessageIsPublishedWithItsIDPeerAndCRCAndStatusAndMetricsFollow() async throws {
        let broker = try await Mosquitto.started()
        let consumer = try Consumer(port: broker.port)
        let metrics = try Consumer(port: broker.port, topic: "fleet/+/metrics")
        try await Task.sleep(for: .milliseconds(300))
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("gw.sock").path
        var options = MQTTGateway.Options()
        options.metricsInterval = .milliseconds(300)
        let (gateway, server, task) = try await startGateway(broker: broker.url, id: "gw1", path: path, options: options)
        let pipe = try await phone(path)
        for index in 0 ..< 20 { try await pipe.send(Array("message \(index)".utf8), timeout: hangGuard) }
        // Acknowledged means published: the consumer has all 20 already (within its own delivery latency).
        #expect(await consumer.waitFor(count: 20, seconds: 10))
        let received = consumer.received
        #expect(received.map(\.payload) == (0 ..< 20).map { "message \($0)" })
        #expect(received.allSatisfy { $0.topic == "fleet/gw1/up" })
        #expect(Set(received.compactMap { $0.properties["id"] }).count == 20)
        #expect(received.allSatisfy { $0.properties["peer"] != nil && $0.properties["crc32"] != nil })
        let crc = String(CRC32Check.of("message 0"), radix: 16)
        #expect(received.first?.properties["crc32"] == String(repeating: "0", count: 8 - crc.count) + crc)
        #expect(await retained(port: broker.port, topic: "fleet/gw1/status") == "online")
        let deadline = ContinuousClock.now + .seconds(5)
        while !metrics.received.contains(where: { $0.payload.contains("\"messages_up\":20,") }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(metrics.received.contains { $0.topic == "fleet/gw1/metrics" && $0.payload.contains("\"messages_up\":20,") })
        await pipe.close()
        await server.close()
        _ = await task.value
        await gateway.close()
        #expect(await retained(port: broker.port, topic: "fleet/gw1/status") == "offline")
        consumer.stop()
        metrics.stop()
    }

    @Test func whileTheBrokerIsDownTheSendWaitsAndCompletesOnceItIsBack() async throws {
        let broker = try await Mosquitto.started()
        let consumer = try Consumer(port: broker.port)
        try await Task.sleep(for: .milliseconds(300))
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("gw.sock").path
        let (gateway, server, task) = try await startGateway(broker: broker.url, id: "gw1", path: path)
        let pipe = try await phone(path)
        try await pipe.send(Array("before".utf8), timeout: hangGuard)
        await broker.stop()
        let done = Atomic<Bool>(false)
        let sending = Task {
            try await pipe.send(Array("during".utf8), timeout: hangGuard)
            done.store(true, ordering: .relaxed)
        }
        try await Task.sleep(for: .seconds(2))
        let doneEarly = done.load(ordering: .relaxed)
        #expect(!doneEarly, "acknowledged while the broker was down")
        #expect(gateway.metrics.messagesHeld == 1)
        try await broker.start()
        try await sending.value
        #expect(await consumer.waitFor(distinctIDs: 2, seconds: 15))
        // A publish cut by the lost connection may reach the broker twice: with the same id.
        let received = consumer.received
        var payloadByID: [String: String] = [:]
        for message in received { payloadByID[message.properties["id"] ?? "?"] = message.payload }
        #expect(payloadByID.count == 2)
        #expect(Set(payloadByID.values) == ["before", "during"])
        #expect(received.first?.payload == "before")
        await pipe.close()
        await server.close()
        _ = await task.value
        await gateway.close()
    }

    @Test func severalGatewaysAndPhonesDeliverEveryMessageOnceByID() async throws {
        let broker = try await Mosquitto.started()
        let consumer = try Consumer(port: broker.port)
        try await Task.sleep(for: .milliseconds(300))
        let dir = try scratchDirectory()
        var gateways: [(MQTTGateway, PipeServer, Task<MQTTGatewayError?, Never>)] = []
        for index in 0 ..< 3 {
            gateways.append(
                try await startGateway(broker: broker.url, id: "gw\(index)", path: dir.appendingPathComponent("gw\(index).sock").path))
        }
        let perPhone = 15
        try await withThrowingTaskGroup(of: Void.self) { group in
            for gateway in 0 ..< 3 {
                for phone in 0 ..< 2 {
                    group.addTask {
                        let pipe = try await self.phone(dir.appendingPathComponent("gw\(gateway).sock").path)
                        for index in 0 ..< perPhone {
                            try await pipe.send(Array("g\(gateway) p\(phone) m\(index)".utf8), timeout: hangGuard)
                        }
                        await pipe.close()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await consumer.waitFor(count: 3 * 2 * perPhone, seconds: 15))
        let received = consumer.received
        let ids = received.compactMap { $0.properties["id"] }
        #expect(ids.count == 90)
        #expect(Set(ids).count == 90)
        #expect(Set(received.map(\.payload)).count == 90)
        for gateway in 0 ..< 3 {
            #expect(received.filter { $0.topic == "fleet/gw\(gateway)/up" }.count == 2 * perPhone)
        }
        for (gateway, server, task) in gateways {
            await server.close()
            _ = await task.value
            await gateway.close()
        }
    }

    @Test func aPublishTheBrokerRefusesIsNotAcknowledgedAndEndsTheUplink() async throws {
        let broker = try await Mosquitto.started(users: [("gw", "secret")], acl: ["user gw", "topic write fleet/gw1/status"])
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("gw.sock").path
        let url = "mqtt://gw:secret@127.0.0.1:\(broker.port)/fleet"
        let (gateway, _, task) = try await startGateway(broker: url, id: "gw1", path: path)
        let pipe = try await phone(path)
        await #expect(throws: (any Error).self) { try await pipe.send(Array("denied".utf8), timeout: .seconds(3)) }
        let failure = await task.value
        #expect(failure.map { if case .publishRefused(_, 0x87, _) = $0 { true } else { false } } == true, "\(String(describing: failure))")
        await pipe.close()
        await gateway.close()
    }

    @Test func badURLsRefusedCredentialsAndAnUnreachableBrokerAreClearErrors() async throws {
        #expect(throws: MQTTGatewayError.self) { try MQTTBrokerURL("http://host/fleet") }
        #expect(throws: MQTTGatewayError.self) { try MQTTBrokerURL("mqtt://host") }
        #expect(throws: MQTTGatewayError.self) { try MQTTBrokerURL("mqtt://host:99999/fleet") }
        #expect(throws: MQTTGatewayError.self) { try MQTTBrokerURL("mqtt://host/fleet/#") }
        let parsed = try MQTTBrokerURL("mqtts://u%40x:p@broker.example:8884/a/b")
        #expect(parsed.user == "u@x" && parsed.password == "p" && parsed.port == 8884 && parsed.prefix == "a/b")
        #expect(parsed.usesTLS)

        let broker = try await Mosquitto.started(users: [("gw", "secret")])
        do {
            _ = try await MQTTGateway.connect(to: MQTTBrokerURL("mqtt://gw:wrong@127.0.0.1:\(broker.port)/fleet"), gatewayID: "gw1")
            Issue.record("connected with a wrong password")
        } catch {
            guard case let .connectionRefused(_, code, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(code == 0x86 || code == 0x87)
        }
        let closedPort = try Mosquitto.freePort()
        var options = MQTTGateway.Options()
        options.connectTimeout = .seconds(2)
        do {
            _ = try await MQTTGateway.connect(
                to: MQTTBrokerURL("mqtt://127.0.0.1:\(closedPort)/fleet"), gatewayID: "gw1", options: options)
            Issue.record("connected to a closed port")
        } catch {
            guard case .unreachable = error else {
                Issue.record("\(error)")
                return
            }
        }
    }
}

/// CRC-32 of a string's UTF-8, as the gateway's `crc32` property carries it.
enum CRC32Check {
    static func of(_ text: String) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in text.utf8 {
            crc ^= UInt32(byte)
            for _ in 0 ..< 8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

extension GatewayUplinkTests {
    @Test func forwardingPublishesUnderTheCentralsPeerAndAcceptsTheMessage() async throws {
        let broker = try await Mosquitto.started()
        let consumer = try Consumer(port: broker.port)
        try await Task.sleep(for: .milliseconds(300))
        let path = try scratchDirectory().appendingPathComponent("gw.sock").path
        let gateway = try await MQTTGateway.connect(to: MQTTBrokerURL(broker.url), gatewayID: "gw1")
        var pipeOptions = MessagePipe.Options()
        pipeOptions.holdsAcknowledgements = true
        let server = try await MessagePipe.listen(path: path, options: pipeOptions)
        let forwarding = gateway.forwarding
        let forwarded = Task {
            for await central in server.centrals {
                for await message in central.messages { try await forwarding(message, central) }
            }
        }
        let pipe = try await phone(path)
        // The send completes only once the message was accepted, which forwarding does after the PUBACK.
        try await pipe.send(Array("through forwarding".utf8), timeout: hangGuard)
        #expect(await consumer.waitFor(count: 1, seconds: 10))
        #expect(consumer.received.first?.payload == "through forwarding")
        #expect(consumer.received.first?.topic == "fleet/gw1/up")
        #expect(consumer.received.first?.properties["peer"]?.hasPrefix("unix:\(path)") == true)
        await pipe.close()
        await server.close()
        forwarded.cancel()
        _ = try? await forwarded.value
        await gateway.close()
        consumer.stop()
    }
}
