import Foundation
import Testing

/// The gateway's unit file passes `systemd-analyze verify` (with ExecStart pointing at the built binary).
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "needs systemd-analyze"))
struct SystemdUnitTests {
    @Test func theGatewayUnitVerifies() async throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/systemd/msgpipe-gateway.service")
        let binary = ListenMQTTCLITests.binary.path
        let unit = try String(contentsOf: source, encoding: .utf8)
            .replacingOccurrences(of: "/usr/bin/msgpipe", with: binary)
        let directory = try scratchDirectory()
        let file = directory.appendingPathComponent("msgpipe-gateway.service")
        try unit.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        process.arguments = ["verify", "--man=no", file.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = errors
        try process.run()
        let status = await exited(process)
        let text = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
        #expect(status == 0, "\(text)")
        #expect(!text.contains("msgpipe-gateway.service:"), "\(text)")
    }
}
