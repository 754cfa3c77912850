import Foundation
import Testing

extension Lab.Core {
    /// What the goodput checks move: 128 KiB.
    static let blastBytes = 131_072

    /// The number N of a "goodput N bytes/s" line (att_blast's and lab-probe gatt-send's).
    static func goodput(_ output: String) -> Int? {
        guard let range = output.range(of: "goodput ") else { return nil }
        return Int(output[range.upperBound...].prefix { $0.isNumber })
    }

    /// The raw baseline: `att_blast send` on hci1 writes `blastBytes` of Write Commands at ATT_MTU 247 into
    /// `att_blast sink` on hci0 (hci0's own advertising on for it, off after). Judges that every byte arrived;
    /// returns the sender's goodput in bytes per second.
    static func rawBaseline(_ lab: LabCheck) throws -> Int? {
        let env = lab.environment
        lab.controllerAdvertising(true)
        defer { lab.controllerAdvertising(false) }
        let sink = try lab.start("blast-sink", lab.peer("att_blast"), ["sink", env.addressA])
        lab.expect(sink.waitForStdout(containing: "listening"), "att_blast sink never listened")
        let send = try lab.run("blast-send", lab.peer("att_blast"), ["send", env.addressB, env.addressA, "\(blastBytes)"], seconds: 300)
        sink.wait(seconds: 60)
        lab.expectExit(send)
        lab.expectExit(sink)
        let rate = goodput(send.stdoutText)
        lab.expect(rate != nil, "att_blast send printed no goodput")
        lab.expect(sink.stdoutText.contains("sink got \(blastBytes) bytes"), "att_blast sink did not get all \(blastBytes) bytes")
        return rate
    }

    /// Check 9: the least any sender can do on this link, for the goodput notes to compare against. Its goodput
    /// also goes to OUT/t9.log for check 15's note (send's goodput against it).
    @Test("raw ATT baseline: 131072 bytes of Write Commands arrive", .tags(.hci0, .hci1))
    func rawGoodput() {
        LabCheck.run { lab in
            let raw = try Self.rawBaseline(lab)
            try? "goodput \(raw ?? 0) bytes/s\n".write(to: lab.environment.outDirectory.appendingPathComponent("t9.log"), atomically: true, encoding: .utf8)
            lab.note("goodput: raw C \(raw.map(String.init) ?? "?") B/s")
        }
    }

    /// Check 11: `lab-probe gatt-send` (GATTClient, Write Commands to RX at ATT_MTU 247) on hci1 into
    /// `lab-probe gatt-serve` (GATTLink's server) on hci0: every byte arrives, the first writes show up as RX
    /// packets, and both end (serve after its one central). The note compares the goodput with the raw baseline,
    /// which this test measures first over the same link.
    @Test("the GATT stack moves 131072 bytes through GATTLink; the writes showed up as RX packets", .tags(.hci0, .hci1))
    func gattStackGoodput() {
        LabCheck.run { lab in
            let raw = try Self.rawBaseline(lab)
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            let env = lab.environment
            let serve = try lab.start("gatt-serve", env.msgpipeLab, ["lab-probe", "gatt-serve", "--adapter", "hci0", "--name", "msgpipe-gatt", "--connections", "1"])
            lab.expect(serve.waitForStdout(containing: "advertising"), "lab-probe gatt-serve never advertised")
            let send = try lab.run("gatt-send", env.msgpipeLab, [
                "lab-probe", "gatt-send", "--adapter", "hci1", "--to", "msgpipe-gatt", "--bytes", "\(Self.blastBytes)"], seconds: 300)
            serve.wait(seconds: 60)
            lab.expectExit(send)
            lab.expectExit(serve)
            let ours = Self.goodput(send.stdoutText)
            lab.expect(ours != nil, "gatt-send printed no goodput")
            lab.expect(serve.stdoutText.contains("RX packet 6d 6d"), "gatt-serve showed no RX packet of the writes")
            lab.expect(serve.stdoutText.contains("received \(Self.blastBytes) bytes"), "gatt-serve did not receive all \(Self.blastBytes) bytes")
            let ratio = raw.flatMap { raw in ours.map { String(format: "%.2f", Double($0) / Double(raw)) } } ?? "?"
            lab.note("goodput: raw C \(raw.map(String.init) ?? "?") B/s, msgpipe GATT stack \(ours.map(String.init) ?? "?") B/s, ratio \(ratio)")
        }
    }
}
