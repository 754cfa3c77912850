import Foundation
import Framing
import PropertyBased
import Testing
@testable import Exchange

@Suite("request and response envelopes")
struct EnvelopeTests {
    @Test("envelopes encode to the pinned bytes of PROTOCOL.md 6.5")
    func vectors() throws {
        let request = RequestEnvelope(id: try RequestID("pay-1"), body: Array("12.50".utf8))
        #expect(Hex.string(request.encoded()) == "0151057061792d3131322e3530")
        let response = ResponseEnvelope(id: try RequestID("pay-1"), status: .commandFailed, exitCode: 3, body: [0x6e, 0x6f])
        #expect(Hex.string(response.encoded()) == "01520103057061792d316e6f")
        #expect(try RequestEnvelope(decoding: request.encoded()) == request)
        #expect(try ResponseEnvelope(decoding: response.encoded()) == response)
    }

    @Test("every truncation of an envelope header is refused")
    func truncations() throws {
        let request = RequestEnvelope(id: try RequestID("abc"), body: [])
        let bytes = request.encoded()
        for count in 0..<bytes.count {
            #expect(throws: ExchangeError.self) { try RequestEnvelope(decoding: Array(bytes.prefix(count))) }
        }
        let response = ResponseEnvelope(id: try RequestID("abc"), status: .ok, body: []).encoded()
        for count in 0..<response.count {
            #expect(throws: ExchangeError.self) { try ResponseEnvelope(decoding: response.prefix(count)) }
        }
    }

    @Test("invalid ids are refused", arguments: ["", "a b", String(repeating: "x", count: 65), "naïve", "a/b"])
    func invalidIDs(id: String) {
        #expect(throws: ExchangeError.self) { try RequestID(id) }
    }

    @Test("random ids are 32 hex digits and differ")
    func randomIDs() {
        let first = RequestID.random()
        #expect(first.value.count == 32)
        #expect(first != RequestID.random())
    }

    @Test("property: envelopes round-trip; garbage never traps")
    func roundTrip() async {
        await propertyCheck(
            count: 100, input: Gen<UInt8>.value(in: 0...255).array(of: 0...300), Gen.int(in: 1...64),
            Gen<UInt8>.value(in: 0...4)
        ) { body, idLength, status in
            let id = try! RequestID(String(repeating: "k", count: idLength))
            let response = ResponseEnvelope(id: id, status: ResponseStatus(rawValue: status)!, exitCode: status, body: body)
            #expect((try? ResponseEnvelope(decoding: response.encoded())) == response)
            #expect((try? RequestEnvelope(decoding: RequestEnvelope(id: id, body: body).encoded()))?.body == body)
            _ = try? RequestEnvelope(decoding: body)
            _ = try? ResponseEnvelope(decoding: body)
        }
    }
}
