import Foundation
import MsgPipe
import MsgPipeMQTT
import Testing

/// `PREFIX/ID/down` through the journal to a central and the acknowledgement on `PREFIX/ID/ack`.
@Suite(.enabled(if: Mosquitto.isInstalled, "needs Debian's mosquitto"), .serialized)
struct DownlinkTests {
    private func publish(port: Int, topic: String, _ payload: String, id: String?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
                var arguments = ["-V", "mqttv5", "-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-m", payload]
                if let id { arguments += ["-D", "publish", "user-property", "id", id] }
                process.arguments = arguments
                try? process.run()
                process.waitUntilExit()
                continuation.resume()
            }.start()
        }
    }

    private func journalFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".down") }
    }

    @Test func aMessageIsJournaledHandedOutAndAcknowledgedWithItsID() async throws {
        let broker = try Mosquitto()
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

    @Test func sendMQTTDeliversToTheCentralAndReportsTheAcknowledgement() async throws {
        let broker = try Mosquitto()
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
}
