import Foundation
import Testing

extension Lab.Bumble {
    /// bumble 5: msgpipe send is the notifying peripheral (`send --name --profile custom:FFF0:FFF2:FFF1`); the
    /// Bumble central (MTU 517) subscribes to FFF1 and decodes the notifications: the message is the file.
    @Test("bumble central subscribes to msgpipe send --name (legacy, custom:FFF0:FFF2:FFF1): the message byte-identical", .tags(.hci3))
    func centralSubscribesLegacy() {
        BumbleLab.run { bumble in try Self.centralSubscribes(bumble, format: "legacy", LabCheck.randomBytes(65_536)) }
    }

    @Test("bumble central subscribes to msgpipe send --name (lines, custom:FFF0:FFF2:FFF1): the message byte-identical", .tags(.hci3))
    func centralSubscribesLines() {
        BumbleLab.run { bumble in try Self.centralSubscribes(bumble, format: "lines", BumbleLab.text()) }
    }

    private static func centralSubscribes(_ bumble: BumbleLab, format: String, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let lab = bumble.lab
        let file = try lab.file("message.bin", bytes)
        let got = lab.directory.appendingPathComponent("bumble_got.bin")
        let send = try bumble.advertising("send", [
            "send", "--adapter", "hci0", "--name", "msgpipe-bbs\(format)", "--format", format, "--profile", BumbleLab.profile(BumbleLab.legacy),
            "--json", file.path])
        let (phone, report) = try bumble.peer("bumble", "bumble_central.py", [
            "--to", "msgpipe-bbs\(format)", "--mtu", "517", "--service", "FFF0", "--write", "FFF2", "--notify", "FFF1", "--format", format,
            "--receive", got.path, "--timeout", "120"])
        send.wait(seconds: 30)
        lab.expectExit(phone, sourceLocation: sourceLocation)
        lab.expectExit(send, sourceLocation: sourceLocation)
        lab.expectSent(send, count: 1, link: nil, sourceLocation: sourceLocation)
        let received = (try? [UInt8](Data(contentsOf: got))) ?? []
        lab.expect(received == bytes, "Bumble decoded \(received.count) bytes, not the \(bytes.count) sent byte-identical", sourceLocation: sourceLocation)
        lab.note("bumble: send --name -> central, \(format), asked MTU 517: \(report?.numbers ?? "no numbers")")
    }
}
