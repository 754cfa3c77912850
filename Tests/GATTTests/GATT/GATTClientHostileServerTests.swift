@testable import GATT
import Testing
import TestSupport

/// The client against a hand-driven (raw PDU) server: broken answers become typed errors, the server's own
/// requests are refused, stray PDUs are ignored, and indications are confirmed.
@Suite struct GATTClientHostileServerTests {
    /// A client and the raw bearer that plays the server.
    struct Pair {
        let client: GATTClient
        let server: MemoryATTConnection

        init() throws {
            let (a, b) = bearerPair()
            client = GATTClient(bearer: a)
            server = b
        }

        /// Waits for the client's next PDU and answers it with `answer`.
        func answerNext(with answer: String) async throws -> [UInt8]? {
            guard case let .pdu(request)? = await server.receive() else { return nil }
            try await server.send(bytes(answer)[...])
            return request
        }

        func close() {
            client.close()
            server.close()
        }
    }

    @Test(arguments: [
        ("0b", nil as ATTError?),
        ("01 0a 03", .malformed(.truncated(opcode: 0x01, needed: 4, found: 3))),
        ("13", .unexpectedResponse(request: 0x0A, response: 0x13)),
        ("01 0a 03 00 02", .errorResponse(request: 0x0A, handle: 3, code: .readNotPermitted)),
        ("01 12 03 00 02", .unexpectedResponse(request: 0x0A, response: 0x01)),
    ])
    func brokenAnswersToAReadAreTypedErrors(answer: String, expected: ATTError?) async throws {
        let pair = try Pair()
        let reading = Task { try await pair.client.read(3) }
        #expect(try await pair.answerNext(with: answer) == bytes("0a 03 00"))
        if let expected {
            await #expect(throws: expected) { try await reading.value }
        } else {
            #expect(try await reading.value == [])
        }
        pair.close()
    }

    @Test func serverMTUBelowTheMinimumCountsAs23() async throws {
        let pair = try Pair()
        async let exchanged = pair.client.exchangeMTU(517)
        #expect(try await pair.answerNext(with: "03 05 00") == bytes("02 05 02"))
        #expect(try await exchanged == 23)
        #expect(pair.client.maximumWriteCommandLength == 20)
        pair.close()
    }

    @Test func serverRequestsAreRefusedAndStrayPDUsIgnored() async throws {
        let pair = try Pair()
        try await pair.server.send(bytes("0a 01 00")[...])
        #expect(await pair.server.receive() == .pdu(bytes("01 0a 00 00 06")), "the client hosts no attributes")
        for stray in ["0b 01 02", "13", "52 01 00 01", "1b 09", "1d"] { try await pair.server.send(bytes(stray)[...]) }
        try await pair.server.send(bytes("1b 09 00 2a")[...])
        #expect(await pair.client.notifications.next() == GATTNotification(handle: 9, value: [0x2A], isIndication: false),
                "malformed pushes are skipped, the next one arrives")
        async let reading = pair.client.read(3)
        #expect(try await pair.answerNext(with: "0b 07") == bytes("0a 03 00"), "unsolicited responses did not answer it")
        #expect(try await reading == [7])
        pair.close()
    }

    @Test func indicationsAreConfirmedAndDeliveredInOrderWithNotifications() async throws {
        let pair = try Pair()
        try await pair.server.send(bytes("1d 09 00 01")[...])
        #expect(await pair.server.receive() == .pdu(bytes("1e")))
        try await pair.server.send(bytes("1b 09 00 02")[...])
        try await pair.server.send(bytes("1d 09 00 03")[...])
        #expect(await pair.server.receive() == .pdu(bytes("1e")))
        let values = [await pair.client.notifications.next(), await pair.client.notifications.next(),
                      await pair.client.notifications.next()].map { $0.map { [$0.value[0], $0.isIndication ? 1 : 0] } }
        #expect(values == [[1, 1], [2, 0], [3, 1]])
        pair.close()
    }

    @Test func requestCancelledWhileAnotherIsOutstandingThrowsCancelledAndIsNeverSent() async throws {
        let pair = try Pair()
        let first = Task { try await pair.client.read(3) }
        guard case let .pdu(request)? = await pair.server.receive() else {
            Issue.record("no request")
            return
        }
        #expect(request == bytes("0a 03 00"))
        let second = Task { try await pair.client.read(12) }  // waits for the one transaction credit
        second.cancel()
        await #expect(throws: ATTError.cancelled) { try await second.value }
        try await pair.server.send(bytes("0b 01")[...])
        #expect(try await first.value == [1])
        async let third = pair.client.read(7)
        #expect(try await pair.answerNext(with: "0b 02") == bytes("0a 07 00"), "the cancelled read never went out")
        #expect(try await third == [2])
        pair.close()
    }

    @Test func serverDisconnectFailsThePendingRequestAndEveryLaterOne() async throws {
        let pair = try Pair()
        let reading = Task { try await pair.client.read(3) }
        _ = await pair.server.receive()
        pair.server.close()
        await #expect(throws: ATTError.self) { try await reading.value }
        guard case .disconnected? = pair.client.failure else {
            Issue.record("expected a disconnect, got \(String(describing: pair.client.failure))")
            return
        }
        await #expect(throws: ATTError.self) { try await pair.client.write([1], to: 7) }
        pair.close()
    }
}
