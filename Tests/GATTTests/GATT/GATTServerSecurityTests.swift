@testable import GATT
import Testing
import TestSupport

/// A server that requires an encrypted link: discovery stays open, values and descriptors are refused with
/// Insufficient Authentication (0x05) until the driver reports the link secured.
@Suite struct GATTServerSecurityTests {
    static func server(requiring level: ATTLinkSecurity = .encrypted) -> GATTServer {
        GATTServer(database: TestDatabase.database, configuration: .init(requiredSecurity: level))
    }

    @Test func discoveryAnswersOnAnOpenLink() {
        var server = Self.server()
        #expect(server.exchange("10 01 00 ff ff 00 28").response == bytes("11 06 01 00 04 00 0f 18"))
        #expect(server.exchange("08 01 00 04 00 03 28").response == bytes("09 07 02 00 12 03 00 19 2a"))
        #expect(server.exchange("04 01 00 ff ff").response?.first == 0x05, "Find Information")
    }

    @Test func valuesAndDescriptorsNeedTheLinkSecured() {
        var server = Self.server()
        #expect(server.awaitsSecurity)
        #expect(server.exchange("12 07 00 68 69").response == bytes("01 12 07 00 05"), "write RX")
        #expect(server.exchange("0a 03 00").response == bytes("01 0a 03 00 05"), "read a value")
        #expect(server.exchange("12 0a 00 01 00").response == bytes("01 12 0a 00 05"), "subscribe")
        #expect(server.exchange("0c 0c 00 00 00").response == bytes("01 0c 0c 00 05"), "read blob")
        #expect(server.exchange("08 01 00 ff ff 19 2a").response == bytes("01 08 03 00 05"), "read by type of a value")
        #expect(server.exchange("16 07 00 00 00 68 69").response == bytes("01 16 07 00 05"), "prepare write")
    }

    @Test func writeCommandOnAnOpenLinkIsDropped() {
        var server = Self.server()
        let (response, event) = server.exchange("52 07 00 68 69")
        #expect(response == nil)
        #expect(event == nil)
    }

    @Test func onceSecuredTheSameRequestsAreServed() {
        var server = Self.server()
        #expect(server.exchange("12 07 00 68 69").response == bytes("01 12 07 00 05"))
        server.linkSecured(.encrypted)
        #expect(!server.awaitsSecurity)
        let (response, event) = server.exchange("12 07 00 68 69")
        #expect(response == bytes("13"))
        #expect(event == .write(handle: 7, value: bytes("68 69"), withResponse: true))
        #expect(server.exchange("52 07 00 6a").event == .write(handle: 7, value: bytes("6a"), withResponse: false))
    }

    @Test(arguments: [ATTLinkSecurity.open, .encrypted])
    func anAuthenticatedRequirementRefusesLessThanAuthenticated(link: ATTLinkSecurity) {
        var server = Self.server(requiring: .authenticated)
        server.linkSecured(link)
        #expect(server.exchange("12 07 00 68 69").response == bytes("01 12 07 00 05"))
        server.linkSecured(.secureConnections)
        #expect(server.exchange("12 07 00 68 69").response == bytes("13"))
    }

    @Test func securityNeverFallsOnOneLink() {
        var server = Self.server()
        server.linkSecured(.encrypted)
        server.linkSecured(.open)
        #expect(server.linkSecurity == .encrypted)
    }

    @Test func noRequirementServesAnOpenLink() {
        var server = TestDatabase.server()
        #expect(!server.awaitsSecurity)
        #expect(server.exchange("12 07 00 68 69").response == bytes("13"))
    }

    @Test func theDriverAsksTheBearerBeforeEachRequestUntilSecured() async throws {
        let pair = try ClientServerPair(server: Self.server())
        let bearer = try #require(pair.server.bearer as? MemoryATTConnection)
        await #expect(throws: ATTError.errorResponse(request: 0x12, handle: 7, code: .insufficientAuthentication)) {
            try await pair.client.write([0x68, 0x69], to: 7)
        }
        bearer.reportedSecurity.withLock { $0 = .encrypted }  // the phone paired
        try await pair.client.write([0x68, 0x69], to: 7)
        #expect(await pair.nextEvent() == .server(.write(handle: 7, value: [0x68, 0x69], withResponse: true)))
        await pair.close()
    }
}
