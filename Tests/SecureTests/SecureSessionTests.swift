import PropertyBased
import Testing
@testable import Secure

@Suite("secure session: sealing, replay window, limits")
struct SecureSessionTests {
    @Test("changing any byte of a sealed record is rejected and counted; the intact record still opens")
    func tamperEveryByte() throws {
        var (client, server) = try establishedSessions(client: .psk, server: .psk)
        let record = try client.seal(Array("pay 12.50 EUR to shop 7".utf8))
        for index in record.indices {
            var damaged = record
            damaged[index] ^= 0x01
            #expect(throws: SecureError.self) { try server.open(damaged) }
        }
        // Only the version byte is refused before authentication; a changed type (an alert), counter
        // (another nonce), ciphertext or tag fails the tag as tampered.
        #expect(server.statistics.rejectedTampered == record.count - 1)
        #expect(server.statistics.rejected == record.count)
        #expect(try server.open(record) == .data(Array("pay 12.50 EUR to shop 7".utf8)))
    }

    @Test("each region of a record fails with its own error", arguments: [
        (0, "version"), (1, "type"), (5, "counter"), (12, "ciphertext"), (-1, "tag"),
    ])
    func regions(offset: Int, region: String) throws {
        var (client, server) = try establishedSessions(client: .psk, server: .psk)
        var record = try client.seal(Array("hello".utf8))
        let index = offset >= 0 ? offset : record.count - 1
        record[index] ^= 0x01
        let error = #expect(throws: SecureError.self) { try server.open(record) }
        switch region {
        case "version": #expect(error == .unsupportedVersion(0))
        case "type": #expect(error == .tampered(counter: 0))  // 0x10 -> 0x11: an alert type, tag fails
        case "counter": #expect(error == .tampered(counter: 1 << 32))
        default: #expect(error == .tampered(counter: 0))
        }
    }

    @Test("a replayed record is rejected and counted")
    func replay() throws {
        var (client, server) = try establishedSessions(client: .psk, server: .psk)
        let record = try client.seal([42])
        #expect(try server.open(record) == .data([42]))
        #expect(throws: SecureError.replayed(counter: 0)) { try server.open(record) }
        #expect(server.statistics.rejectedReplays == 1)
    }

    @Test("reordered records inside the window open once each; replaying one of them is rejected")
    func reorderInsideWindow() throws {
        var (client, server) = try establishedSessions(client: .psk, server: .psk)
        let records = try (0..<10).map { try client.seal([UInt8($0)]) }
        for index in [3, 0, 9, 1, 2, 8, 4, 7, 5, 6] {
            #expect(try server.open(records[index]) == .data([UInt8(index)]))
        }
        #expect(throws: SecureError.replayed(counter: 4)) { try server.open(records[4]) }
    }

    @Test("a record older than the 64-message window is rejected even if never seen")
    func outsideWindow() throws {
        var (client, server) = try establishedSessions(client: .psk, server: .psk)
        let records = try (0..<70).map { try client.seal([UInt8($0)]) }
        _ = try server.open(records[69])
        #expect(try server.open(records[6]) == .data([6]))
        #expect(throws: SecureError.outsideReplayWindow(counter: 5, highest: 69)) { try server.open(records[5]) }
    }

    @Test("a record from the other direction (reflection) does not open")
    func reflection() throws {
        var (client, _) = try establishedSessions(client: .psk, server: .psk)
        var (_, otherServer) = try establishedSessions(client: .psk, server: .psk)
        let record = try client.seal([1])
        #expect(throws: SecureError.tampered(counter: 0)) { try client.open(record) }
        #expect(throws: SecureError.tampered(counter: 0)) { try otherServer.open(record) }
    }

    @Test("sealing stops at the counter limit instead of reusing a nonce")
    func counterExhaustion() throws {
        var (client, server) = try establishedSessions(client: .psk, server: .psk)
        client.sendCounter = SecureSession.maximumCounter
        let last = try client.seal([7])
        #expect(throws: SecureError.counterExhausted) { try client.seal([8]) }
        #expect(throws: SecureError.counterExhausted) { try client.sealAlert(.unexpected) }
        #expect(try server.open(last) == .data([7]))
    }

    @Test("messages over the limit are refused before sealing and before opening")
    func sizeLimits() throws {
        let small = SecureLimits(maximumPlaintextSize: 100)
        var (client, server) = try establishedSessions(client: .psk, server: .psk, limits: small)
        #expect(throws: SecureError.messageTooLarge(size: 101, limit: 100)) { try client.seal(.init(repeating: 0, count: 101)) }
        var (bigClient, _) = try establishedSessions(client: .psk, server: .psk)
        let big = try bigClient.seal(.init(repeating: 0, count: 101))
        #expect(throws: SecureError.messageTooLarge(size: 101, limit: 100)) { try server.open(big) }
        #expect(server.statistics.rejectedMalformed == 1)
    }

    @Test("every truncation of a record is refused")
    func truncations() throws {
        var (client, server) = try establishedSessions(client: .psk, server: .psk)
        let record = try client.seal(Array("abc".utf8))
        for count in 0..<record.count {
            #expect(throws: SecureError.self) { try server.open(Array(record.prefix(count))) }
        }
    }

    @Test("property: any plaintext round-trips in both directions, in order")
    func roundTrip() async {
        await propertyCheck(count: 50, input: Gen<UInt8>.value(in: 0...255).array(of: 0...4096), Gen.int(in: 1...5)) {
            plaintext, repeats in
            guard var (client, server) = try? establishedSessions(client: .clientPinned, server: .serverPinned) else {
                Issue.record("handshake failed")
                return
            }
            for _ in 0..<repeats {
                #expect((try? server.open(client.seal(plaintext))) == .data(plaintext))
                #expect((try? client.open(server.seal(plaintext))) == .data(plaintext))
            }
        }
    }

    @Test("property: a body sealed with its origin opens to both, in either direction")
    func originRoundTrip() async {
        await propertyCheck(
            count: 50, input: Gen<UInt8>.value(in: 0...255).array(of: 0...2048), Gen<UInt64>.value(in: 1...UInt64.max),
            Gen<UInt32>.value(in: 0...UInt32.max)
        ) { body, session, id in
            guard var (client, server) = try? establishedSessions(client: .psk, server: .psk) else {
                Issue.record("handshake failed")
                return
            }
            let origin = MessageOrigin(session: session, id: id)
            #expect((try? server.open(client.seal(body, origin: origin))) == .originated(body, origin: origin))
            #expect((try? client.open(server.seal(body, origin: origin))) == .originated(body, origin: origin))
        }
    }

    @Test("a record with an origin too short or naming session 0 is malformed and changes nothing", arguments: [
        [UInt8](repeating: 1, count: 11), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 42],
    ])
    func malformedOrigin(plaintext: [UInt8]) throws {
        var (client, server) = try establishedSessions(client: .psk, server: .psk)
        let forged = try client.seal(plaintext, type: .sealedWithOrigin)
        #expect(throws: SecureError.self) { try server.open(forged) }
        #expect(server.statistics.rejectedMalformed == 1)
        // The counter was not taken: the sealed record after it still opens, and so would the forged one's counter.
        #expect(try server.open(try client.seal([7])) == .data([7]))
    }

    @Test("a body that fills the limit leaves no room for the origin: too large, nothing sealed")
    func originCountsAgainstLimit() throws {
        var (client, _) = try establishedSessions(client: .psk, server: .psk)
        let limit = client.limits.maximumPlaintextSize
        #expect(throws: SecureError.messageTooLarge(size: limit + 12, limit: limit)) {
            try client.seal([UInt8](repeating: 0, count: limit), origin: MessageOrigin(session: 1, id: 1))
        }
        #expect(client.sendCounter == 0)
    }

    @Test("property: random bytes never open and never trap")
    func garbage() async {
        await propertyCheck(count: 200, input: Gen<UInt8>.value(in: 0...255).array(of: 0...200)) { bytes in
            guard var (_, server) = try? establishedSessions(client: .psk, server: .psk) else { return }
            #expect(throws: SecureError.self) { try server.open(bytes) }
        }
    }
}
