import Foundation
import Testing

extension Lab.Bumble {
    /// bumble 5b: one central, peers of different hosts: `send --to` x3 (nus, lines) on hci0 to `listen` on hci1
    /// and hci2 and to `bumble_peripheral.py --receive` on hci3 (random static address, found by name). Three
    /// messages of text (10 B, 4 KiB, 100 KiB): every peer has them byte-identical (listen: three messages;
    /// Bumble: the bytes written, each message and its newline), send acknowledges 3 of 3 to each peer and
    /// reached Bumble at the random static address it advertised.
    @Test("bumble: send --to x3 (nus lines: 10 B, 4 KiB, 100 KiB) to two msgpipe listens and a Bumble peripheral (random address): all byte-identical",
        .tags(.hci1, .hci2, .hci3))
    func fanOut() {
        BumbleLab.run(needsFour: true) { bumble in
            let lab = bumble.lab
            let messages = [10, 4096, 102_400].map { BumbleLab.text($0) }
            let files = try messages.enumerated().map { try lab.file("fan\($0.offset + 1).txt", $0.element) }
            let listens = try [1, 2].map { index in
                try lab.start("listen-hci\(index)", lab.environment.msgpipe, ["listen"] + BumbleLab.kernel + [
                    "--adapter", "hci\(index)", "--name", "msgpipe-bbfan\(index)", "--profile", "nus", "--format", "lines", "--count", "3", "--json"])
            }
            let got = lab.directory.appendingPathComponent("bumble_got.txt")
            let phone = try bumble.startPeer("bumble", "bumble_peripheral.py", [
                "--name", "bumble-fan", "--service", BumbleLab.nus[0], "--write", BumbleLab.nus[1], "--notify", BumbleLab.nus[2],
                "--receive", got.path, "--timeout", "120"])
            for listen in listens { lab.expect(listen.waitForStderr(containing: "advertising"), "\(listen.label) never advertised") }
            lab.expect(phone.waitForStdout(containing: "advertising"), "Bumble never advertised")
            let started = Date()
            let peers = ["msgpipe-bbfan1", "msgpipe-bbfan2", "bumble-fan"]
            let send = try lab.run("send", lab.environment.msgpipe, ["send"] + BumbleLab.kernel + [
                "--adapter", "hci0", "--to", peers[0], "--to", peers[1], "--to", peers[2], "--profile", "nus", "--format", "lines",
                "--json", "--verbose"] + files.map(\.path), seconds: 180)
            let wall = Date().timeIntervalSince(started)
            for listen in listens { listen.wait(seconds: 30) }
            phone.wait(seconds: 30)
            let report = bumble.report(phone)
            lab.expectExit(send)
            for listen in listens {
                lab.expectExit(listen)
                let lines = listen.jsonLines(ListenLine.self)
                lab.expect(lines.map { $0.body ?? [] } == messages,
                    "\(listen.label): \(lines.count) messages (\(lines.map(\.bytes))), expected the three (10, 4096, 102400 B) byte-identical")
            }
            lab.expectExit(phone)
            let written = (try? [UInt8](Data(contentsOf: got))) ?? []
            let lines = messages.flatMap { $0 + [UInt8(ascii: "\n")] }
            lab.expect(written == lines, "Bumble got \(written.count) bytes, not the three lines (\(lines.count) bytes) byte-identical")
            let sent = send.jsonLines(SendLine.self)
            for peer in peers {
                let acknowledged = sent.filter { $0.peer == peer }
                lab.expect(acknowledged.map(\.bytes) == messages.map(\.count),
                    "send --json: \(peer) acknowledged \(acknowledged.map(\.bytes)), expected 3 of 3 (10, 4096, 102400 B)")
                lab.note("bumble: fan-out \(peer): " + acknowledged.map { "\($0.bytes) B \($0.seconds) s" }.joined(separator: ", "))
            }
            lab.expect(LabBumble.isRandomStatic(report?.ownAddress) && BumbleLab.connected(send, to: report?.ownAddress, random: false),
                "send never said it connected to bumble-fan at its random static address \(report?.ownAddress ?? "unknown")")
            lab.expect(report?.connectedFrom?.uppercased() == lab.environment.addressA.uppercased(),
                "Bumble's central was \(report?.connectedFrom ?? "nobody"), expected hci0 (\(lab.environment.addressA))")
            lab.note("bumble: fan-out nus lines (10 B, 4 KiB, 100 KiB) to two listens and Bumble: \(String(format: "%.1f", wall)) s wall clock")
            lab.note("bumble: fan-out, Bumble's side: \(report?.numbers ?? "no numbers")")
        }
    }
}
