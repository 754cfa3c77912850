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
}
