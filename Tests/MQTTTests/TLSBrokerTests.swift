import Foundation
import MsgPipe
import MsgPipeMQTT
import Testing

/// `mqtts://` against mosquitto's TLS listener, with a CA and server certificate made for the test by openssl.
@Suite(
    .enabled(if: Mosquitto.isInstalled && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "needs mosquitto and openssl"),
    .serialized)
struct TLSBrokerTests {
    /// A throwaway CA, a server certificate for IP 127.0.0.1 signed by it, and a second CA that signed nothing.
    struct Certificates {
        let ca: String
        let otherCA: String
        let certificate: String
        let key: String

        init() throws {
            let dir = try scratchDirectory()
            _ = chmod(dir.path, 0o755)  // mosquitto, as its own user, reads the server's files
            func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
            let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            try Self.openssl(["req", "-x509"] + ec + ["-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=msgpipe test CA"])
            try Self.openssl(["req", "-x509"] + ec + ["-keyout", path("other.key"), "-out", path("other.pem"), "-days", "2", "-subj", "/CN=another CA"])
            try Self.openssl(["req"] + ec + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"])
            try "subjectAltName=IP:127.0.0.1\n".write(toFile: path("san.cnf"), atomically: true, encoding: .utf8)
            try Self.openssl([
                "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                "-CAcreateserial", "-out", path("server.pem"), "-days", "2", "-extfile", path("san.cnf"),
            ])
            _ = chmod(path("server.key"), 0o644)
            (ca, otherCA, certificate, key) = (path("ca.pem"), path("other.pem"), path("server.pem"), path("server.key"))
        }

        private static func openssl(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw Mosquitto.BrokerError.didNotStart("openssl \(arguments[0]) failed") }
        }
    }

    @Test func aBrokerWhoseCertificateChainsToTheGivenCAIsTrusted() async throws {
        let certificates = try Certificates()
        let broker = try await Mosquitto.started(tls: (certificates.certificate, certificates.key))
        let served = try Consumer(port: broker.port, topic: "fleet/+/served")
        try await Task.sleep(for: .milliseconds(300))
        let options = MQTTGateway.Options(trustedCAFile: certificates.ca, metricsInterval: nil)
        let url = try MQTTBrokerURL("mqtts://127.0.0.1:\(try #require(broker.tlsPort))/fleet")
        let gateway = try await MQTTGateway.connect(to: url, gatewayID: "gw1", options: options)
        try await gateway.publishServed("over TLS")
        #expect(await served.waitFor(count: 1, seconds: 10))
        #expect(served.received.first?.payload == "over TLS")
        await gateway.close()
        served.stop()
    }

    @Test func aCertificateFromAnotherCAIsRefusedWithExit77() async throws {
        let certificates = try Certificates()
        let broker = try await Mosquitto.started(tls: (certificates.certificate, certificates.key))
        let url = "mqtts://127.0.0.1:\(try #require(broker.tlsPort))/fleet"
        // The library: a typed error.
        var options = MQTTGateway.Options()
        options.trustedCAFile = certificates.otherCA
        options.connectTimeout = .seconds(5)
        var caught: MQTTGatewayError?
        do throws(MQTTGatewayError) {
            let gateway = try await MQTTGateway.connect(to: MQTTBrokerURL(url), gatewayID: "gw1", options: options)
            await gateway.close()
        } catch {
            caught = error
        }
        guard case let .untrustedBroker(_, detail) = caught else {
            Issue.record("expected untrustedBroker, got \(String(describing: caught))")
            return
        }
        #expect(detail.contains("certificate verify failed"), "\(detail)")
        // The CLI: the other CA, and the system's CAs (which do not hold the test CA), both exit 77.
        for extra in [["--mqtt-ca", certificates.otherCA], []] {
            let dir = try scratchDirectory()
            let process = Process()
            process.executableURL = ListenMQTTCLITests.binary
            process.arguments = ["listen", "--link", "unix:\(dir.path)/gw.sock", "--mqtt", url, "--gateway", "gw1"] + extra
            let stderr = Pipe()
            process.standardError = stderr
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let code = await exited(process, seconds: 20)
            let text = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(code == 77, "\(text)")
            #expect(text.contains("TLS handshake with the broker"), "\(text)")
            #expect(text.contains("certificate verify failed"), "\(text)")
        }
    }

    @Test func mqttCAWithoutMqttsIsAUsageError() async throws {
        let process = Process()
        process.executableURL = ListenMQTTCLITests.binary
        process.arguments = ["listen", "--link", "unix:/tmp/x.sock", "--mqtt", "mqtt://127.0.0.1/fleet", "--mqtt-ca", "/etc/hostname"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(await exited(process) == 64)
    }
}
