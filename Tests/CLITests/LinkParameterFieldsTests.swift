import Foundation
import GATT
import MsgPipe
import Testing
@testable import MsgPipeCLI

/// The `--json` fields that say what a link runs on: present where known, absent (not null) otherwise.
struct LinkParameterFieldsTests {
    static func keys(_ line: some Encodable, _ fields: LinkParameterFields) throws -> [String: Any] {
        let data = Data(JSONLine.text(line, adding: fields).utf8)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func requestedParametersAndTheMTUArePrintedWhereKnown() throws {
        let requested = try ConnectionParameters(minimumInterval: 6, maximumInterval: 12, latency: 2, supervisionTimeout: 200)
        let fields = LinkParameterFields(LinkParameters(requested: requested, mtu: 247, unknown: ["the PHY"]))
        let line = SendResults.Line(index: 1, file: "a", bytes: 3, seconds: 0.1, peer: nil, link: "gatt")
        let object = try Self.keys(line, fields)
        #expect(object["file"] as? String == "a" && object["link"] as? String == "gatt", "the line's own keys stay")
        #expect(object["interval_ms"] as? [Double] == [7.5, 15])
        #expect(object["latency"] as? Int == 2)
        #expect(object["supervision_timeout_ms"] as? Int == 2000)
        #expect(object["mtu"] as? Int == 247)
        #expect(object["phy"] == nil, "the PHY was not known: no key")
    }

    @Test func nothingKnownPrintsNoneOfTheKeys() throws {
        let fields = LinkParameterFields(LinkParameters(unknown: [LinkParameters.liveParametersUnknown]))
        #expect(fields == LinkParameterFields(nil))
        let line = MessageLine(
            index: 1, connection: 1, peer: nil, link: nil, id: OrNull(nil), bytes: 0, crc32: "00000000", data: "",
            peerKey: nil, peerName: nil)
        let object = try Self.keys(line, fields)
        #expect(object["crc32"] as? String == "00000000" && object.keys.contains("id"), "the line's own keys stay")
        for key in ["interval_ms", "latency", "supervision_timeout_ms", "changed_by_peer", "phy", "mtu"] {
            #expect(object[key] == nil, "\(key) printed though unknown")
        }
    }

    @Test func thePeersAcceptedRequestIsPrintedAsInForceAndSaysSo() throws {
        let requested = try ConnectionParameters(minimumInterval: 40, maximumInterval: 40, latency: 2, supervisionTimeout: 200)
        let peers = try ConnectionParameters(minimumInterval: 80, maximumInterval: 120, latency: 0, supervisionTimeout: 42)
        let fields = LinkParameterFields(LinkParameters(requested: requested, acceptedPeerRequest: peers, seesPeerUpdates: true))
        let line = SendResults.Line(index: 1, file: "a", bytes: 3, seconds: 0.1, peer: nil, link: "gatt")
        let object = try Self.keys(line, fields)
        #expect(object["interval_ms"] as? [Double] == [100, 150])
        #expect(object["latency"] as? Int == 0)
        #expect(object["supervision_timeout_ms"] as? Int == 420)
        #expect(object["changed_by_peer"] as? Bool == true)
        let unchanged = LinkParameterFields(LinkParameters(requested: requested, seesPeerUpdates: true))
        #expect(unchanged.changedByPeer == false && unchanged.intervalMilliseconds == [50, 50])
        let unseen = LinkParameterFields(LinkParameters(requested: requested, unknown: [LinkParameters.peerUpdatesUnseen]))
        #expect(unseen.changedByPeer == nil, "without the capability the key is absent: nobody knows")
    }

    @Test func thePHYIsItsCLISpelling() throws {
        let fields = LinkParameterFields(LinkParameters(phy: .init(transmit: .le2M, receive: .le1M)))
        #expect(fields.phy == "tx 2m / rx 1m")
        #expect(LinkParameterFields(LinkParameters(phy: .init(transmit: .coded, receive: .coded))).phy == "coded")
    }
}

/// A real link's bench report: the air-time limit at the interval asked for, when one was.
@Suite struct BenchRealLimitTests {
    @Test func theLimitTakesTheLargestRequestedIntervalAndSaysSo() {
        let start = ContinuousClock.now
        var result = PipeBenchmark.Result(index: 0)
        (result.peer, result.mtu) = ("kiosk", 247)
        result.messagesDelivered = 1
        result.payloadBytes = 100_000
        result.span = start ..< start + .seconds(1)
        func row(_ units: UInt16?) -> [String: String] {
            let rows = BenchReportFormat.real(
                PipeBenchmark.Report(results: [result], seconds: 1, messages: 1), link: "kiosk", role: .central, size: 100_000,
                requestedIntervalUnits: units)
            return Dictionary(uniqueKeysWithValues: rows[0].map { ($0.0, "\($0.1)") })
        }
        let best = row(nil)
        let slow = row(320)  // 400 ms
        #expect(best["limit_assumes"]?.contains("interval 7.5 ms") == true, "\(best)")
        #expect(slow["limit_assumes"]?.contains("interval 400 ms (requested)") == true, "\(slow)")
        #expect(best["limit_kbps"] != slow["limit_kbps"], "the interval changes the modelled limit")
    }
}
