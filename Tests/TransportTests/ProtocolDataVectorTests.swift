import Testing
@testable import Transport
import TestSupport

/// PROTOCOL.md 3.2-3.3: the packets a sender writes for small messages, pinned to bytes.
@Suite struct ProtocolDataVectorTests {
    private func packets(of body: [UInt8], packetSize: Int, checks: PacketCheckPolicy = .never) -> [String] {
        var configuration = EndpointConfiguration()
        configuration.packetChecks = checks
        var endpoint = TransportEndpoint(configuration: configuration, session: 1)
        endpoint.linkConnected(maximumPacketSize: packetSize, now: .zero)
        _ = try? endpoint.submit(body, now: .zero)
        var buffer: [UInt8] = []
        var result: [String] = []
        // The session's hello (3.9) comes first on the connection; the data packets follow.
        #expect(endpoint.writeNextPacket(into: &buffer, now: .zero))
        #expect(TransportControl(decoding: buffer[...]) == .hello(session: 1, firstMessageID: 1))
        while endpoint.writeNextPacket(into: &buffer, now: .zero) {
            result.append(hex(buffer, separator: " "))
        }
        return result
    }

    @Test func oneSegmentMessageIsOneStartPacketWithItsCheck() {
        // S|E ch 0 | v1 data | reliable | id 1 | length 2 | "hi" | CRC-32 | check
        #expect(packets(of: Array("hi".utf8), packetSize: 20) == ["c0 10 04 01 02 68 69 ac 2a 93 d8 ab da"])
    }

    @Test func twoSegmentMessageUsesAnImplicitlyIndexedSecondPacket() {
        let body = Array("abcdefghijklmnopqrst".utf8)
        #expect(
            packets(of: body, packetSize: 20) == [
                "80 10 04 01 14 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 61 6b",
                "41 6e 6f 70 71 72 73 74 e5 6a 59 1a",
            ])
    }

    @Test func checkedMessageCarriesTheCheckOnEveryPacket() {
        let body = Array("abcdefghijklmnopqrst".utf8)
        #expect(
            packets(of: body, packetSize: 20, checks: .always) == [
                "80 10 24 01 14 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 1c 10",
                "41 6e 6f 70 71 72 73 74 e5 6a 59 1a ec b1",
            ])
    }

}
