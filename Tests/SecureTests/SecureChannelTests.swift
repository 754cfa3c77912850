import MemoryLinks
@testable import Secure
import TestSupport
import Testing
import Transport

/// SecureChannel over two Transports on an in-memory link.
@Suite("secure channel over Transport")
struct SecureChannelTests {
    static func transports() -> (client: Transport, server: Transport) {
        let (a, b) = MemoryLink.pair()
        return (Transport(link: a), Transport(link: b))
    }

    @Test("requests are sealed end to end and answered in order")
    func requestResponse() async throws {
        let (clientTransport, serverTransport) = Self.transports()
        async let accepted = SecureChannel.accept(over: serverTransport, credentials: .serverPinned)
        let client = try await SecureChannel.initiate(
            over: clientTransport, credentials: .clientPinned, timeout: hangGuard)
        let server = try await accepted
        let serving = Task {
            while let message = try await server.receive() {
                try await server.respond(to: message, with: message.plaintext.reversed())
            }
        }
        for size in [0, 1, 1000, 70_000] {
            let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            #expect(try await client.request(body, timeout: hangGuard) == body.reversed())
        }
        #expect(await server.statistics.opened == 4)
        await client.close()
        await server.close()
        _ = await serving.result
    }

    @Test("a wrong key fails both sides as not authenticated and no message is delivered")
    func wrongKey() async throws {
        let (clientTransport, serverTransport) = Self.transports()
        async let accepted: Void = {
            await #expect(throws: SecureError.notAuthenticated("the client does not accept our key")) {
                _ = try await SecureChannel.accept(over: serverTransport, credentials: .psk)
            }
        }()
        await #expect(throws: SecureError.self) {
            _ = try await SecureChannel.initiate(
                over: clientTransport, credentials: .preSharedKey(PreSharedKey()), timeout: hangGuard)
        }
        await accepted
        await clientTransport.close()
        await serverTransport.close()
    }

    @Test("a replayed sealed request is answered with a sealed alert and counted, not delivered twice")
    func replayedRequest() async throws {
        let (clientTransport, serverTransport) = Self.transports()
        async let accepted = SecureChannel.accept(over: serverTransport, credentials: .psk)
        // The client side by hand, to replay a record at the transport level.
        let handshake = ClientHandshake(credentials: .psk)
        let (finish, session) = try handshake.finish(
            serverHello: try await clientTransport.request(handshake.hello, timeout: hangGuard))
        var client = session
        try await clientTransport.send(finish)
        let server = try await accepted

        let serving = Task { () -> [[UInt8]] in
            var delivered: [[UInt8]] = []
            while true {
                do {
                    guard let message = try await server.receive() else { return delivered }
                    delivered.append(message.plaintext)
                    try await server.respond(to: message, with: [0xAA])
                } catch is SecureError {
                    continue
                }
            }
        }
        let record = try client.seal(Array("pay 5".utf8))
        #expect(try client.open(try await clientTransport.request(record, timeout: hangGuard)) == .data([0xAA]))
        #expect(try client.open(try await clientTransport.request(record, timeout: hangGuard)) == .alert(.replayed))
        var tampered = try client.seal(Array("pay 6".utf8))
        tampered[12] ^= 1
        #expect(try client.open(try await clientTransport.request(tampered, timeout: hangGuard)) == .alert(.tampered))
        #expect(await server.statistics.rejectedReplays == 1)
        #expect(await server.statistics.rejectedTampered == 1)
        await clientTransport.close()
        await server.close()
        #expect(try await serving.value == [Array("pay 5".utf8)])
    }
}
