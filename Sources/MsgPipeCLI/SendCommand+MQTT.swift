import ArgumentParser
import MsgPipe
import MsgPipeMQTT

/// `msgpipe send --mqtt`: the downlink of a gateway. Each message published to `PREFIX/ID/down` is journaled,
/// sent to the central (as central: the peer; as peripheral: every connected central, or the one its `peer`
/// property names), and reported on `PREFIX/ID/ack` once all of them acknowledged it. Runs until
/// SIGINT/SIGTERM (exit 0).
extension SendCommand {
    func runDownlink(url text: String, journal: String) async throws {
        let signals = await ShutdownSignals()
        defer { withExtendedLifetime(signals) {} }
        let brokerOptions = ListenCommand.mqttOptions(ca: mqttCA, metricsInterval: metricsInterval)
        let downlink = try await ListenCommand.connectBroker { () async throws(MQTTGatewayError) in
            try await MQTTDownlink.connect(broker: text, gatewayID: gateway, journal: journal, options: brokerOptions)
        }
        for name in downlink.unreadableJournalFiles { printError("cannot read journal file \(name); left in place") }
        var options = try link.pipeOptions(format: .msgpipe, verbose: verbose, connection: connection)
        options.reconnect = ReconnectBackoff(initial: .milliseconds(250), maximum: .seconds(8), attempts: .max)
        // Key files are checked before anything connects or advertises.
        let asPeripheral = try link.role(role, default: .central) == .peripheral
        options.keys = asPeripheral ? try secure.serverKeys() : try secure.centralKeys()
        await options.keys?.reloadOnHangup()
        let delivery: MQTTDownlink.Delivery
        do {
            delivery = asPeripheral ? try await downlink.start(serving: link.acceptor(options))
                : try await downlink.start(connectingTo: try link.peerAddress(), options: options)
        } catch {
            await downlink.close()
            printError(asPeripheral ? "cannot serve on \(link.displayName): \(cli: error)" : link.connectFailure(error))
            throw ExitCode(SendExitCode.linkFailure.rawValue)
        }
        if let server = delivery.server { printError(server.description) }
        printError("sending what arrives on \(downlink.downTopic); acknowledgements on \(downlink.ackTopic)")
        SystemdNotify.ready()
        // SIGINT/SIGTERM, also one during start: the socket file goes, advertising stops.
        await signals.wait()
        await delivery.stop()
    }
}
