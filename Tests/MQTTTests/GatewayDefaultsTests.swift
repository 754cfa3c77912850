import Foundation
import MsgPipeMQTT
import Testing

/// What a gateway takes when its caller gives nothing (no broker needed).
@Suite struct GatewayDefaultsTests {
    @Test func theDefaultGatewayIDIsTheHostName() throws {
        let kernel = try String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(MQTTGateway.defaultGatewayID == (kernel.isEmpty ? "msgpipe" : kernel))
        #expect(!MQTTGateway.defaultGatewayID.contains { "/+#".contains($0) })
    }

    @Test func optionsKeepWhatIsGivenAndDefaultTheRest() {
        let given = MQTTGateway.Options(trustedCAFile: "/etc/ca.pem", metricsInterval: nil)
        #expect(given.trustedCAFile == "/etc/ca.pem" && given.metricsInterval == nil)
        #expect(given.connectTimeout == MQTTGateway.Options().connectTimeout)
        let defaults = MQTTGateway.Options()
        #expect(defaults.trustedCAFile == nil && defaults.metricsInterval == .seconds(60))
    }

    @Test("the CA file goes with mqtts:// and must be readable; none: nothing to check")
    func theTrustedCAFileIsChecked() throws {
        let tls = try MQTTBrokerURL("mqtts://broker/fleet")
        try MQTTGateway.Options().checkTrustedCAFile(for: tls)
        try MQTTGateway.Options(trustedCAFile: "/etc/hostname").checkTrustedCAFile(for: tls)
        #expect(throws: MQTTGatewayError.badTrustedCAFile("/etc/hostname", reason: "it goes with an mqtts:// broker URL")) {
            try MQTTGateway.Options(trustedCAFile: "/etc/hostname").checkTrustedCAFile(for: MQTTBrokerURL("mqtt://broker/fleet"))
        }
        #expect(throws: MQTTGatewayError.badTrustedCAFile("/nonexistent/ca.pem", reason: "cannot be read")) {
            try MQTTGateway.Options(trustedCAFile: "/nonexistent/ca.pem").checkTrustedCAFile(for: tls)
        }
    }

    @Test("the CA file against a broker URL as text: none given fails as mqtt:// does; no file checks nothing")
    func theTrustedCAFileIsCheckedAgainstText() throws {
        try MQTTGateway.Options().checkTrustedCAFile(forBroker: nil)
        try MQTTGateway.Options().checkTrustedCAFile(forBroker: "not a url")
        try MQTTGateway.Options(trustedCAFile: "/etc/hostname").checkTrustedCAFile(forBroker: "mqtts://broker/fleet")
        let withoutTLS = MQTTGatewayError.badTrustedCAFile("/etc/hostname", reason: "it goes with an mqtts:// broker URL")
        #expect(throws: withoutTLS) { try MQTTGateway.Options(trustedCAFile: "/etc/hostname").checkTrustedCAFile(forBroker: nil) }
        #expect(throws: withoutTLS) {
            try MQTTGateway.Options(trustedCAFile: "/etc/hostname").checkTrustedCAFile(forBroker: "mqtt://broker/fleet")
        }
        #expect(throws: MQTTGatewayError.badURL("http://broker/fleet", reason: "it must start with mqtt:// or mqtts://")) {
            try MQTTGateway.Options(trustedCAFile: "/etc/hostname").checkTrustedCAFile(forBroker: "http://broker/fleet")
        }
    }

    @Test("connecting from settings as text: a bad URL, CA file or gateway id fails typed before any connection")
    func connectingFromSettingsFailsTyped() async {
        await #expect(throws: MQTTGatewayError.badURL("http://broker/fleet", reason: "it must start with mqtt:// or mqtts://")) {
            try await MQTTGateway.connect(broker: "http://broker/fleet")
        }
        await #expect(throws: MQTTGatewayError.badTrustedCAFile("/nonexistent/ca.pem", reason: "cannot be read")) {
            try await MQTTGateway.connect(broker: "mqtts://127.0.0.1/fleet", options: .init(trustedCAFile: "/nonexistent/ca.pem"))
        }
        await #expect(throws: MQTTGatewayError.badGatewayID("a/b")) {
            try await MQTTDownlink.connect(broker: "mqtt://127.0.0.1/fleet", gatewayID: "a/b", journal: "/nonexistent/down")
        }
    }

    @Test("each failure has the category its caller acts on")
    func categories() {
        let cases: [(MQTTGatewayError, MQTTGatewayError.Category)] = [
            (.badURL("x", reason: "r"), .configuration), (.badTrustedCAFile("f", reason: "r"), .configuration),
            (.badGatewayID("a/b"), .configuration), (.unreachable(broker: "b", detail: "d"), .unavailable),
            (.client("c"), .unavailable), (.closed, .unavailable), (.journal("j"), .storage),
            (.connectionRefused(broker: "b", reasonCode: 0x86, reason: "r"), .refused),
            (.untrustedBroker(broker: "b", detail: "d"), .refused),
            (.publishRefused(topic: "t", reasonCode: 0x87, reason: "r"), .refused),
            (.subscribeRefused(topic: "t", reasonCode: 0x87, reason: "r"), .refused),
        ]
        for (error, category) in cases { #expect(error.category == category, "\(error)") }
        #expect("\(MQTTGatewayError.badTrustedCAFile("ca.pem", reason: "cannot be read"))".contains("ca.pem"))
    }
}
