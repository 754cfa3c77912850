import Foundation
import Testing
import BLELink
import TestSupport

/// `msgpipe serve --mqtt`: each request's outcome line reaches `PREFIX/ID/served`.
@Suite(.enabled(if: Mosquitto.isInstalled, "needs Debian's mosquitto"), .serialized)
struct ServeMQTTCLITests {
    /// Runs `msgpipe arguments` to its end on a thread of its own; the exit status.
    private func run(_ arguments: [String], input: String = "") async -> Int32 {
        try! await BlockingCall.run { () -> Int32 in
            let process = Process()
            process.executableURL = ListenMQTTCLITests.binary
            process.arguments = arguments
            let stdin = Pipe()
            process.standardInput = stdin
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return -1 }
            feed(input.utf8, to: stdin)
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    @Test func eachRequestsOutcomeIsPublishedToServed() async throws {
        let broker = try await Mosquitto.started()
        let served = try Consumer(port: broker.port, topic: "fleet/+/served")
        let dir = try scratchDirectory()
        let key = dir.appendingPathComponent("key").path
        let socket = dir.appendingPathComponent("s.sock").path
        #expect(await run(["keygen", "--out", key]) == 0)
        let serve = Process()
        serve.executableURL = ListenMQTTCLITests.binary
        serve.arguments = [
            "serve", "--link", "unix:\(socket)", "--key-file", key, "--exec", "cat", "--state",
            dir.appendingPathComponent("state").path, "--mqtt", broker.url, "--gateway", "till1",
        ]
        serve.standardOutput = FileHandle.nullDevice
        serve.standardError = FileHandle.nullDevice
        try serve.run()
        while !FileManager.default.fileExists(atPath: socket) { try await Task.sleep(for: .milliseconds(50)) }
        let status = await run(
            ["request", "--link", "unix:\(socket)", "--key-file", key, "--timeout", "10", "--id", "pay-1"], input: "9.99 EUR")
        #expect(status == 0)
        #expect(await served.waitFor(count: 1, seconds: 10))
        let line = try #require(served.received.first)
        #expect(line.topic == "fleet/till1/served")
        #expect(line.payload.contains("\"id\":\"pay-1\""))
        #expect(line.payload.contains("\"status\":\"ok\""))
        #expect(!line.payload.contains("9.99"))
        serve.terminate()
        _ = await exited(serve)
        served.stop()
    }
}
