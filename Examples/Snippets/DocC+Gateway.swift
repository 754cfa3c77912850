import MsgPipe
import MsgPipeMQTT

/// MsgPipeMQTT.docc, Gateway on MQTT.
func doccGateway() async throws {
    let gateway = try await MQTTGateway.connect(to: MQTTBrokerURL("mqtt://broker/fleet"), gatewayID: "door")
    var options = MessagePipe.Options()
    options.holdsAcknowledgements = true
    let server = try await MessagePipe.serve(at: "door", options: options)
    try await gateway.uplink(from: server)      // until the server ends; throws if the broker refuses
    await gateway.close()
}

/// MsgPipeMQTT.docc, Gateway on MQTT: connected from its settings as text.
func doccGatewayFromSettings() async {
    let options = MQTTGateway.Options(trustedCAFile: "/etc/msgpipe/ca.pem")
    do throws(MQTTGatewayError) {
        let gateway = try await MQTTGateway.connect(broker: "mqtts://broker/fleet", options: options)
        await gateway.close()
    } catch {
        print(error.category == .unavailable ? "the broker is away, try later: \(error)" : "\(error)")
    }
}
