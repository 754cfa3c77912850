@testable import GATT
import PropertyBased
import Testing
import TestSupport

/// A hostile or broken client against the real server over an in-memory bearer pair: every malformed PDU gets the
/// right Error Response (requests) or nothing (commands), the server stays up, answers the next request,
/// and holds no more than its limits.
@Suite struct GATTServerHostileTests {
    /// Smallest well-formed PDU of every request the server implements.
    static let requests = ["02 17 00", "04 01 00 ff ff", "06 01 00 ff ff 00 28", "08 01 00 ff ff 03 28", "0a 03 00",
                           "0c 03 00 00 00", "0e 03 00 0c 00", "10 01 00 ff ff 00 28", "12 07 00", "16 07 00 00 00", "18 00"]
    /// Responses and pushes (only a server sends them) and the confirmation: the server answers none.
    static let pushesAndResponses: Set<UInt8> = [0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19,
                                                 0x1B, 0x1D, 0x1E]

    /// Whether the server owes an answer to a PDU starting with `opcode`.
    static func isAnswered(_ opcode: UInt8) -> Bool { !ATTOpcode.isCommand(opcode) && !pushesAndResponses.contains(opcode) }

    @Test(arguments: requests)
    func everyTruncationOfARequestIsAnInvalidPDU(_ request: String) async throws {
        let raw = try RawATTPeer()
        let pdu = bytes(request)
        for length in 1..<pdu.count {
            #expect(try await raw.exchange(Array(pdu.prefix(length))) == [0x01, pdu[0], 0x00, 0x00, 0x04], "\(length) bytes")
        }
        #expect(try await raw.answersProbeNext())
        _ = await raw.close()
    }

    @Test func unknownRequestsAreRefusedAndUnknownCommandsIgnored() async throws {
        let raw = try RawATTPeer()
        for opcode: UInt8 in [0x00, 0x14, 0x1A, 0x1C, 0x1F, 0x20, 0x3F, 0x80, 0x92, 0xBF] {
            #expect(try await raw.exchange([opcode, 0x01, 0x00]) == [0x01, opcode, 0x00, 0x00, 0x06], "0x\(hex(opcode))")
        }
        for opcode: UInt8 in [0x40, 0x41, 0x52 | 0x80, 0x60, 0x7F, 0xC0, 0xFF] {
            try await raw.send([opcode, 0x07, 0x00, 0x01])
            #expect(try await raw.answersProbeNext(), "command 0x\(hex(opcode)) gets no answer")
        }
        #expect(await raw.close().count == 1, "only the disconnect: no command was taken")
    }

    @Test func handleZeroAndReversedRangesAreInvalidHandle() async throws {
        let raw = try RawATTPeer()
        let cases = [("0a 00 00", "01 0a 00 00 01"), ("0c 00 00 00 00", "01 0c 00 00 01"), ("12 00 00 01", "01 12 00 00 01"),
                     ("16 00 00 00 00 01", "01 16 00 00 01"), ("04 05 00 04 00", "01 04 05 00 01"),
                     ("08 ff ff 01 00 03 28", "01 08 ff ff 01"), ("10 00 00 ff ff 00 28", "01 10 00 00 01"),
                     ("06 0d 00 0c 00 00 28", "01 06 0d 00 01")]
        for (request, answer) in cases { #expect(try await raw.exchange(request) == bytes(answer), "\(request)") }
        #expect(try await raw.answersProbeNext())
        _ = await raw.close()
    }

    @Test func oversizedValuesAndPacketsAreRefusedOrIgnored() async throws {
        let raw = try RawATTPeer()
        let rxLimit = 64
        #expect(try await raw.exchange("02 05 02") == bytes("03 05 02"))
        #expect(try await raw.exchange(ATTWriteRequest(handle: 7, value: Array(repeating: 1, count: rxLimit + 1)).bytes)
            == bytes("01 12 07 00 0d"))
        #expect(try await raw.exchange(ATTWriteRequest(handle: 7, value: Array(repeating: 1, count: 515)).bytes)
            == bytes("01 12 00 00 04"), "518 bytes: one over the MTU")
        #expect(try await raw.exchange([0x12, 0x07, 0x00] + Array(repeating: 1, count: 4000)) == bytes("01 12 00 00 04"))
        try await raw.send(ATTWriteCommand(handle: 7, value: Array(repeating: 1, count: rxLimit + 1)).bytes)
        try await raw.send([0x52, 0x07, 0x00] + Array(repeating: 1, count: 4000))
        #expect(try await raw.answersProbeNext())
        #expect(await raw.close().count == 2, "the MTU exchange and the disconnect: no oversized write was taken")
    }

    @Test(arguments: [(0, 23), (22, 23), (23, 23), (65535, 517)])
    func mtuRequestsAreClampedAndBoundTheRequestSize(clientMTU: Int, effective: Int) async throws {
        let raw = try RawATTPeer(server: TestDatabase.server(maximumMTU: 517, prepareQueueLimit: 4))
        let request = [0x02, UInt8(clientMTU & 0xFF), UInt8(clientMTU >> 8)]
        #expect(try await raw.exchange(request) == bytes("03 05 02"))
        let fits = ATTWriteRequest(handle: 7, value: Array(repeating: 2, count: min(effective - 3, 64))).bytes
        #expect(try await raw.exchange(fits) == bytes("13"))
        let over = ATTWriteRequest(handle: 7, value: Array(repeating: 2, count: effective - 2)).bytes
        #expect(try await raw.exchange(over) == bytes("01 12 00 00 04"))
        _ = await raw.close()
    }

    @Test func writesBeforeTheMTUExchangeAreBoundByTheDefaultMTU() async throws {
        let raw = try RawATTPeer()
        let twentyOne = ATTWriteRequest(handle: 7, value: Array(repeating: 3, count: 21)).bytes
        #expect(try await raw.exchange(ATTWriteRequest(handle: 7, value: Array(repeating: 3, count: 20)).bytes) == bytes("13"))
        #expect(try await raw.exchange(twentyOne) == bytes("01 12 00 00 04"))
        #expect(try await raw.exchange("02 f7 00") == bytes("03 05 02"))
        #expect(try await raw.exchange(twentyOne) == bytes("13"))
        _ = await raw.close()
    }

    @Test func prepareQueueOverflowIsRefusedAndTheQueueStaysAtItsLimit() async throws {
        let limit = 4
        let raw = try RawATTPeer(server: TestDatabase.server(prepareQueueLimit: limit))
        for index in 0..<200 {
            let prepare = ATTPrepareWriteRequest(handle: 7, offset: UInt16(index), value: [UInt8(index)])
            let answer = try await raw.exchange(prepare.bytes)
            #expect(answer == (index < limit ? ATTPrepareWriteResponse(handle: 7, offset: UInt16(index), value: [UInt8(index)]).bytes
                                             : bytes("01 16 07 00 09")))
        }
        #expect(try await raw.exchange("18 01") == bytes("19"))
        #expect(try await raw.answersProbeNext())
        let events = await raw.close()
        #expect(events.first == .server(.preparedWritesExecuted([GATTWrite(handle: 7, value: [0, 1, 2, 3])])))
    }

    @Test func floodOfRequestsWithoutReadingStallsTheClientAndEveryRequestIsAnsweredInOrder() async throws {
        let raw = try RawATTPeer(receiveCapacity: 4)
        var sent = 0
        let ceiling = 100_000
        // Never reading: the answers back up, the server stops reading, the client's socket fills. The server
        // may still take a request or two after the first refusal (it runs beside this loop): the sends stall
        // once refusals persist.
        var refusals = 0
        while sent < ceiling, refusals < 20 {
            if try raw.peer.trySend(bytes("0a \(hex(sent % 2 == 0 ? 3 : 12)) 00")[...]) {
                sent += 1
                refusals = 0
            } else {
                refusals += 1
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        #expect(sent < ceiling, "the client's sends stall: nothing grows without bound")
        for index in 0..<sent {
            let expected = index % 2 == 0 ? RawATTPeer.probeAnswer : [ATTOpcode.readResponse] + TestDatabase.infoValue[0..<22]
            #expect(await raw.next() == expected, "answer \(index)")
        }
        #expect(try await raw.answersProbeNext())
        _ = await raw.close()
    }

    @Test func neverConfirmedIndicationTimesOutButTheServerAnswersUntilThen() async throws {
        let time = ManualTime()
        let raw = try RawATTPeer(clock: time.clock)
        #expect(try await raw.exchange("12 0a 00 02 00") == bytes("13"))
        let first = Task { try await raw.server.indicate(valueHandle: 9, value: [1][...]) }
        #expect(await raw.next() == bytes("1d 09 00 01"))
        let second = Task { try await raw.server.indicate(valueHandle: 9, value: [2][...]) }
        #expect(try await raw.answersProbeNext(), "requests are served while the indication waits")
        while time.sleeperCount == 0 { await Task.yield() }
        time.advance(to: .seconds(29))
        #expect(try await raw.answersProbeNext(), "29 s: still up, and the second indication was not sent")
        time.advance(to: .seconds(30))
        await #expect(throws: ATTError.transactionTimeout(request: ATTOpcode.handleValueIndication)) { try await first.value }
        await #expect(throws: ATTError.self) { try await second.value }
        #expect(await raw.next() == nil, "the bearer is closed after the timeout")
        _ = await raw.close()
    }

    @Test func cancelledIndicationFreesTheSlotForTheNext() async throws {
        let (bearer, peer) = bearerPair(receiveCapacity: 4)
        let server = GATTServerConnection(bearer: bearer, server: TestDatabase.server(), clock: ManualTime().clock)
        let running = Task { await server.run() }
        // The peer reads nothing yet: once its inbox is full, it stays full.
        try await peer.send(bytes("12 0a 00 03 00")[...])
        #expect(await peer.receive() == .pdu([0x13]), "the Write Response")
        for await event in server.events { if case .server(.subscriptionChanged) = event { break } }
        var filled = 0
        while try server.bearer.trySend(bytes("1b 09 00 00")[...]) { filled += 1 }
        #expect(filled == 4)
        let blocked = Task { try await server.indicate(valueHandle: 9, value: [1][...]) }
        blocked.cancel()
        await #expect(throws: ATTError.cancelled) { try await blocked.value }
        for _ in 0..<filled { #expect(await peer.receive() == .pdu(bytes("1b 09 00 00"))) }
        let next = Task { try await server.indicate(valueHandle: 9, value: [2][...]) }
        #expect(await peer.receive() == .pdu(bytes("1d 09 00 02")), "the withdrawn indication never went out")
        try await peer.send(bytes("1e")[...])
        try await next.value
        peer.close()
        await running.value
    }

    /// Random PDUs, requests of every kind among them, one at a time: each request gets exactly one answer
    /// of the right kind within the MTU, anything else gets none, and the server keeps answering.
    @Test func randomPDUsGetAnAnswerOfTheRightKindOrNone() async {
        let knownRequests = Self.requests.map { bytes($0)[0] }
        let pdus = Gen.uint8().array(of: 1...40).array(of: 1...12)
        await propertyCheck(count: 60, input: pdus) { pdus in
            let raw = try RawATTPeer()
            var mtu = 23
            for var pdu in pdus {
                if pdu[0] & 0x80 == 0 { pdu[0] = knownRequests[Int(pdu[0]) % knownRequests.count] }
                let opcode = pdu[0]
                guard Self.isAnswered(opcode) else {
                    try await raw.send(pdu)
                    #expect(try await raw.answersProbeNext(), "\(pdu)")
                    continue
                }
                guard let answer = try await raw.exchange(pdu) else {
                    Issue.record("the server disconnected on \(pdu)")
                    return
                }
                let rightKind = answer[0] == opcode + 1 || (answer[0] == ATTOpcode.errorResponse && answer.count == 5
                    && answer[1] == opcode)
                #expect(rightKind, "\(pdu) -> \(answer)")
                #expect(answer.count <= mtu)
                if answer[0] == ATTOpcode.exchangeMTUResponse { mtu = raw.server.mtu }
            }
            #expect(try await raw.answersProbeNext())
            _ = await raw.close()
        }
    }
}
