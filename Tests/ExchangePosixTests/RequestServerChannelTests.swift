@testable import Exchange
@testable import ExchangePosix
import MemoryLinks
import Secure
import TestSupport
import Testing
import Transport

/// RequestServer and ExchangeClient over a SecureChannel on an in-memory link.
@Suite("request server over a secure channel")
struct RequestServerChannelTests {
    static let credentials = SecureCredentials.preSharedKey(PreSharedKey())

    @Test("requests are answered in order over the channel; an idle connection is closed, ending serve")
    func serveAndIdle() async throws {
        let directory = temporaryDirectory()
        let server = try RequestServer(stateDirectory: directory, runner: CommandRunner(command: "printf ok:; cat"))
        let (a, b) = MemoryLink.pair()
        let clientTransport = Transport(link: a)
        let serverTransport = Transport(link: b)
        async let accepted = SecureChannel.accept(over: serverTransport, credentials: Self.credentials)
        let client = try await SecureChannel.initiate(
            over: clientTransport, credentials: Self.credentials, timeout: hangGuard)
        let channel = try await accepted
        // The idle timeout must not pass between two requests of this test, which a loaded host can hold back
        // for seconds (5 s seen): 5 s, and serve returning at all is what is checked, not how soon.
        let serving = Task { await server.serve(channel, idleTimeout: .seconds(5)) }
        for index in 0..<3 {
            let response = try await ExchangeClient.request(
                Array("\(index)".utf8), id: try RequestID("r\(index)"), over: client, timeout: hangGuard)
            #expect(response == ResponseEnvelope(id: try RequestID("r\(index)"), status: .ok, body: Array("ok:\(index)".utf8)))
        }
        // No more requests: serve returns by itself once the idle timeout closed the channel.
        await serving.value
        await client.close()
    }
}
