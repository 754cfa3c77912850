import Foundation
import Glibc
import MsgPipe
import MsgPipeMQTT
import Synchronization
import Testing
import BLELink
import TestSupport

/// `PREFIX/ID/down` through the journal to a central and the acknowledgement on `PREFIX/ID/ack`.
@Suite(.enabled(if: Mosquitto.isInstalled, "needs Debian's mosquitto"), .serialized)
struct DownlinkTests {
    private func publish(port: Int, topic: String, _ payload: String, id: String?, peer: String? = nil) async {
        try! await BlockingCall.run {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
            var arguments = ["-V", "mqttv5", "-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-m", payload]
            if let id { arguments += ["-D", "publish", "user-property", "id", id] }
            if let peer { arguments += ["-D", "publish", "user-property", "peer", peer] }
            process.arguments = arguments
            try? process.run()
            process.waitUntilExit()
        }
    }

    private func journalFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".down") }
    }

    @Test func aMessageIsJournaledHandedOutAndAcknowledgedWithItsID() async throws {
        let broker = try await Mosquitto.started()
        let acks = try Consumer(port: broker.port, topic: "fleet/+/ack")
        let journal = try scratchDirectory().appendingPathComponent("down").path
        let url = try MQTTBrokerURL(broker.url)
        var downlink = try await MQTTDownlink.connect(to: url, gatewayID: "gw1", journal: journal)
        try await Task.sleep(for: .milliseconds(300))
        await publish(port: broker.port, topic: "fleet/gw1/down", "open door", id: "cmd-1")
        var iterator = downlink.messages.makeAsyncIterator()
        let message = try #require(await iterator.next())
        #expect(message.id == "cmd-1")
        #expect(message.bytes == Array("open door".utf8))
        #expect(journalFiles(journal).count == 1)
        // Not acknowledged by a central: a restart hands it out again from the journal.
        await downlink.close()
        downlink = try await MQTTDownlink.connect(to: url, gatewayID: "gw1", journal: journal)
        var again = downlink.messages.makeAsyncIterator()
        let replayed = try #require(await again.next())
        #expect(replayed == message)
        try await downlink.acknowledged(replayed)
        #expect(journalFiles(journal).isEmpty)
        #expect(await acks.waitFor(count: 1, seconds: 5))
        #expect(acks.received.first?.topic == "fleet/gw1/ack")
        #expect(acks.received.first?.properties["id"] == "cmd-1")
        await downlink.close()
        acks.stop()
    }

    @Test func aBrokerThatLostTheSessionIsSubscribedToAgain() async throws {
        let broker = try await Mosquitto.started()
        let journal = try scratchDirectory().appendingPathComponent("down").path
        let downlink = try await MQTTDownlink.connect(to: MQTTBrokerURL(broker.url), gatewayID: "gw1", journal: journal)
        let subscribes = { broker.log.components(separatedBy: "Received SUBSCRIBE from msgpipe-gw1-down").count - 1 }
        #expect(subscribes() == 1)
        try await broker.restartForgettingSessions()
        let deadline = Date(timeIntervalSinceNow: 15)
        while subscribes() < 2, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(subscribes() == 2)
        try await Task.sleep(for: .milliseconds(200))  // the SUBACK
        await publish(port: broker.port, topic: "fleet/gw1/down", "after the restart", id: "r-1")
        let message = try #require(await nextEvent(of: downlink.messages, patience: .seconds(10)))
        #expect(message.id == "r-1")
        #expect(message.bytes == Array("after the restart".utf8))
        await downlink.close()
    }

    @Test func sendMQTTDeliversToTheCentralAndReportsTheAcknowledgement() async throws {
        let broker = try await Mosquitto.started()
        let acks = try Consumer(port: broker.port, topic: "fleet/+/ack")
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("phone.sock").path
        // The phone: a peripheral that receives (listen), the gateway connects to it as the central.
        let phone = try await MessagePipe.listen(path: path)
        let gateway = Process()
        gateway.executableURL = ListenMQTTCLITests.binary
        gateway.arguments = [
            "send", "--link", "unix:\(path)", "--mqtt", broker.url, "--gateway", "gw1", "--state",
            dir.appendingPathComponent("state").path,
        ]
        gateway.standardError = FileHandle.nullDevice
        try gateway.run()
        var centrals = phone.centrals.makeAsyncIterator()
        let central = try #require(await centrals.next())
        try await Task.sleep(for: .milliseconds(500))
        await publish(port: broker.port, topic: "fleet/gw1/down", "ticket 42", id: "t-42")
        var messages = central.messages.makeAsyncIterator()
        let received = try #require(await messages.next())
        #expect(received.bytes == Array("ticket 42".utf8))
        #expect(await acks.waitFor(count: 1, seconds: 10))
        #expect(acks.received.first?.properties["id"] == "t-42")
        gateway.terminate()
        #expect(await exited(gateway) == 0)
        await phone.close()
        acks.stop()
    }

    @Test func asThePeripheralAMessageGoesToEveryCentralOrTheNamedOneAndWaitsForItsCentral() async throws {
        let broker = try await Mosquitto.started()
        let acks = try Consumer(port: broker.port, topic: "fleet/+/ack")
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("gw.sock").path
        let journal = dir.appendingPathComponent("state").path
        let gateway = Process()
        gateway.executableURL = ListenMQTTCLITests.binary
        gateway.arguments = [
            "send", "--link", "unix:\(path)", "--role", "peripheral", "--mqtt", broker.url, "--gateway", "gw1",
            "--state", journal,
        ]
        gateway.standardError = FileHandle.nullDevice
        try gateway.run()
        defer { gateway.terminate() }
        let deadline = Date(timeIntervalSinceNow: 10)
        while !FileManager.default.fileExists(atPath: path), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        // Connected one after the other: the gateway names them unix:PATH#1 and #2.
        let a = try await Inbox(MessagePipe.connect(to: "unix:\(path)"))
        let b = try await Inbox(MessagePipe.connect(to: "unix:\(path)"))
        try await Task.sleep(for: .milliseconds(300))

        await publish(port: broker.port, topic: "fleet/gw1/down", "to all", id: "m-1")
        #expect(await a.waitFor(["to all"]))
        #expect(await b.waitFor(["to all"]))
        #expect(await acks.waitFor(count: 1, seconds: 10))
        #expect(acks.received.first?.properties["id"] == "m-1")
        #expect(acks.received.first?.properties["centrals"] == "2")

        await publish(port: broker.port, topic: "fleet/gw1/down", "to b", id: "m-2", peer: "unix:\(path)#2")
        #expect(await b.waitFor(["to all", "to b"]))
        #expect(await acks.waitFor(count: 2, seconds: 10))
        #expect(acks.received.last?.properties["centrals"] == "1")

        // For a central not connected yet: it waits in the journal, unacknowledged, until that central comes.
        await publish(port: broker.port, topic: "fleet/gw1/down", "to c", id: "m-3", peer: "unix:\(path)#3")
        try await Task.sleep(for: .seconds(1))
        #expect(journalFiles(journal).count == 1)
        #expect(acks.received.count == 2)
        let c = try await Inbox(MessagePipe.connect(to: "unix:\(path)"))
        #expect(await c.waitFor(["to c"]))
        #expect(await acks.waitFor(count: 3, seconds: 10))
        #expect(acks.received.last?.properties["id"] == "m-3")
        #expect(journalFiles(journal).isEmpty)

        await publish(port: broker.port, topic: "fleet/gw1/down", "last", id: "m-4")
        #expect(await a.waitFor(["to all", "last"]))
        #expect(await b.waitFor(["to all", "to b", "last"]))
        #expect(await c.waitFor(["to c", "last"]))
        #expect(await acks.waitFor(count: 4, seconds: 10))
        #expect(acks.received.last?.properties["centrals"] == "3")
        gateway.terminate()
        #expect(await exited(gateway) == 0)
        for inbox in [a, b, c] { await inbox.close() }
        acks.stop()
    }
}

extension DownlinkTests {
    @Test func theDownlinkMetricsCountMessagesAndTheRetransmissionsOfAStalledCentral() async throws {
        let broker = try await Mosquitto.started()
        let metrics = try Consumer(port: broker.port, topic: "fleet/+/metrics")
        let acks = try Consumer(port: broker.port, topic: "fleet/+/ack")
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("gw.sock").path
        let gateway = Process()
        gateway.executableURL = ListenMQTTCLITests.binary
        gateway.arguments = [
            "send", "--link", "unix:\(path)", "--role", "peripheral", "--mqtt", broker.url, "--gateway", "gw1",
            "--state", dir.appendingPathComponent("state").path, "--metrics-interval", "1",
        ]
        gateway.standardError = FileHandle.nullDevice
        try gateway.run()
        defer { gateway.terminate() }
        let deadline = Date(timeIntervalSinceNow: 10)
        while !FileManager.default.fileExists(atPath: path), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let central = Process()
        central.executableURL = ListenMQTTCLITests.binary
        central.arguments = ["listen", "--link", "unix:\(path)", "--role", "central"]
        central.standardOutput = FileHandle.nullDevice
        central.standardError = FileHandle.nullDevice
        try central.run()
        defer { central.terminate() }
        func latest() -> [String: Int] {
            guard let line = metrics.received.last?.payload,
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Int]
            else { return [:] }
            return object
        }
        // Stopped only once the gateway counts it as connected (its metrics come every second): a central
        // stopped before it connected would see no message and cause no retransmission.
        let connected = Date(timeIntervalSinceNow: 20)
        while latest()["centrals"] != 1, Date() < connected { try await Task.sleep(for: .milliseconds(50)) }
        #expect(latest()["centrals"] == 1, "the gateway never counted the central")
        // The central stops reading: the gateway's retransmission timer fires until it runs again.
        kill(central.processIdentifier, SIGSTOP)
        await publish(port: broker.port, topic: "fleet/gw1/down", String(repeating: "x", count: 20_000), id: "big")
        try await Task.sleep(for: .seconds(2))
        kill(central.processIdentifier, SIGCONT)
        #expect(await acks.waitFor(count: 1, seconds: 20))
        let until = Date(timeIntervalSinceNow: 10)
        while latest()["messages_down"] != 1, Date() < until { try await Task.sleep(for: .milliseconds(100)) }
        let line = latest()
        #expect(line["messages_down"] == 1)
        #expect(line["bytes_down"] == 20_000)
        #expect(line["centrals"] == 1)
        #expect((line["retransmissions"] ?? 0) > 0)
        gateway.terminate()
        #expect(await exited(gateway) == 0)
        metrics.stop()
        acks.stop()
    }
}

/// A central's messages as text, collected as they arrive.
final class Inbox: Sendable {
    private let pipe: MessagePipe
    private final class Texts: Sendable { let value = Mutex<[String]>([]) }
    private let texts = Texts()
    private let task: Task<Void, Never>

    init(_ pipe: MessagePipe) {
        self.pipe = pipe
        let texts = self.texts
        task = Task {
            for await message in pipe.messages {
                texts.value.withLock { $0.append(String(decoding: message.bytes, as: UTF8.self)) }
            }
        }
    }

    var received: [String] { texts.value.withLock { $0 } }

    /// True once exactly `expected` arrived (within `seconds`).
    func waitFor(_ expected: [String], seconds: Double = 10) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while received.count < expected.count, Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        try? await Task.sleep(for: .milliseconds(100))  // nothing more than expected
        return received == expected
    }

    func close() async {
        await pipe.close()
        task.cancel()
    }
}

/// A `unix:` acceptor whose close ends a while after the socket's, as a close through bluetoothd ends only once
/// the advertisement is unregistered; ``closed`` says whether it ended.
final class SlowClosingAcceptor: LinkAcceptor {
    private let base: PipeAcceptor
    private let ended = Atomic<Bool>(false)

    init(path: String) { base = PipeAcceptor(at: .unix(path: path), options: .patientForTests) }

    var closed: Bool { ended.load(ordering: .relaxed) }
    var options: MessagePipe.Options { base.options }
    var endsOnCancellation: Bool { base.endsOnCancellation }

    func acceptLinks(
        info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int, centralsAtOnce: Int, unnumbered: Bool,
        onReady: (String) -> Void, handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        try await base.acceptLinks(
            info: info, connections: connections, maximumConcurrent: maximumConcurrent, centralsAtOnce: centralsAtOnce,
            unnumbered: unnumbered, onReady: onReady, handle: handle)
    }

    func stop() { base.stop() }

    /// Longer than the downlink's own close (paho's 500 ms grace), so a stop that does not wait for it returns first.
    func close() async {
        await base.close()
        try? await Task.sleep(for: .seconds(2))
        ended.store(true, ordering: .relaxed)
    }
}

extension DownlinkTests {
    @Test func startServingDeliversToTheCentralsUntilStopped() async throws {
        let broker = try await Mosquitto.started()
        let acks = try Consumer(port: broker.port, topic: "fleet/+/ack")
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("gw.sock").path
        let downlink = try await MQTTDownlink.connect(
            to: MQTTBrokerURL(broker.url), gatewayID: "gw1", journal: dir.appendingPathComponent("state").path)
        let acceptor = SlowClosingAcceptor(path: path)
        let delivery = try await downlink.start(serving: acceptor)
        let server = try #require(delivery.server)
        let central = try await Inbox(MessagePipe.connect(to: "unix:\(path)"))
        try await Task.sleep(for: .milliseconds(300))
        await publish(port: broker.port, topic: "fleet/gw1/down", "served", id: "s-1")
        #expect(await central.waitFor(["served"]))
        #expect(await acks.waitFor(count: 1, seconds: 10))
        #expect(acks.received.first?.properties["id"] == "s-1")
        #expect(server.connectedCentrals == 1)
        await delivery.stop()
        // Stopped: the server's close has ended, so a process that exits now leaves nothing behind.
        #expect(acceptor.closed, "stop() returned before the server's close ended")
        #expect(server.connectedCentrals == 0)
        #expect(!FileManager.default.fileExists(atPath: path), "the socket file is removed")
        #expect(throws: (any Error).self, "the socket refuses connections") { _ = Glibc.close(try SeqPacketSocket.connect(path: path)) }
        // Stopped: the downlink is closed, so its messages end.
        var messages = downlink.messages.makeAsyncIterator()
        #expect(await messages.next() == nil)
        await central.close()
        acks.stop()
    }

    @Test func startConnectingDeliversToThePeripheralAndAConnectFailureLeavesTheDownlinkOpen() async throws {
        let broker = try await Mosquitto.started()
        let acks = try Consumer(port: broker.port, topic: "fleet/+/ack")
        let dir = try scratchDirectory()
        let path = dir.appendingPathComponent("phone.sock").path
        let downlink = try await MQTTDownlink.connect(
            to: MQTTBrokerURL(broker.url), gatewayID: "gw1", journal: dir.appendingPathComponent("state").path)
        var options = MessagePipe.Options()
        options.reconnect.attempts = 1
        await #expect(throws: (any Error).self) {
            _ = try await downlink.start(connectingTo: "unix:\(dir.appendingPathComponent("absent.sock").path)", options: options)
        }
        let phone = try await MessagePipe.listen(path: path, options: .patientForTests)
        let delivery = try await downlink.start(connectingTo: "unix:\(path)", options: MessagePipe.Options())
        #expect(delivery.server == nil)
        var centrals = phone.centrals.makeAsyncIterator()
        let gateway = try #require(await centrals.next())
        try await Task.sleep(for: .milliseconds(300))
        await publish(port: broker.port, topic: "fleet/gw1/down", "to the phone", id: "c-1")
        var received = gateway.messages.makeAsyncIterator()
        #expect(await received.next()?.bytes == Array("to the phone".utf8))
        #expect(await acks.waitFor(count: 1, seconds: 10))
        #expect(acks.received.first?.properties["id"] == "c-1")
        await delivery.stop()
        await phone.close()
        acks.stop()
    }
}
