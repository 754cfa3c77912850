import Foundation
import Glibc
import Testing

extension Lab.Bumble {
    /// bumble 7: a phone app opens msgpipe's L2CAP channel, as iOS's openL2CAPChannel and Android's
    /// createInsecureL2capChannel do: it reads the PSM characteristic, opens the LE credit-based channel and
    /// writes 64 KiB of text and its newline into `listen --format lines` (link mode auto publishes the channel).
    @Test("bumble central reads the PSM characteristic, opens the L2CAP channel and writes a line into listen: byte-identical", .tags(.hci3))
    func phoneOpensChannel() {
        BumbleLab.run { bumble in
            let lab = bumble.lab
            let text = BumbleLab.text()
            let listen = try bumble.listen("msgpipe-bbcoc", ["--format", "lines"])
            let (phone, report) = try bumble.peer("bumble", "bumble_coc.py", ["--to", "msgpipe-bbcoc", "--send", try lab.file("text.txt", text).path])
            Self.expectLine(bumble, listen, phone, report, text)
            lab.note("bumble: phone opens the L2CAP channel -> listen, lines: \(report?.numbers ?? "no numbers")")
        }
    }

    /// bumble 7b: the phone opens the channel while listen does not run (SIGSTOP after the PSM read, 5 s) and
    /// writes at once, as a phone app does: nothing may be lost. Linux 6.1 drops, silently, an SDU that does not
    /// fit a channel nobody accepted yet; listen answers a channel only once it accepted and sized it, so the
    /// phone's open waits until listen runs again. The 5 s only make the overlap certain; nothing is judged by time.
    @Test("bumble central opens the L2CAP channel while listen is stopped and writes at once: nothing lost, byte-identical", .tags(.hci3))
    func channelWhileListenStopped() {
        BumbleLab.run { bumble in
            let lab = bumble.lab
            let text = BumbleLab.text()
            let listen = try bumble.listen("msgpipe-bbcocb", ["--format", "lines"])
            let phone = try bumble.startPeer("bumble", "bumble_coc.py", ["--to", "msgpipe-bbcocb", "--send", try lab.file("text.txt", text).path, "--hold", "1"])
            let holding = phone.waitForStdout(containing: "holding", seconds: 120)
            lab.expect(holding, "Bumble never held before opening the channel")
            if holding {
                lab.expect(kill(listen.pid, SIGSTOP) == 0, "could not stop listen")
                Thread.sleep(forTimeInterval: 5)
                kill(listen.pid, SIGCONT)
            }
            phone.wait(seconds: 180)
            let report = bumble.report(phone)
            Self.expectLine(bumble, listen, phone, report, text)
            lab.note("bumble: phone writes on a channel opened while listen was stopped, lines: \(report?.numbers ?? "no numbers")")
        }
    }

    /// bumble 8: the other way: `send --name --format lines` writes the line to the phone that opened its channel.
    @Test("bumble central opens the L2CAP channel of send --name and receives the line: byte-identical", .tags(.hci3))
    func phoneReceivesOverChannel() {
        BumbleLab.run { bumble in
            let lab = bumble.lab
            let text = BumbleLab.text()
            let got = lab.directory.appendingPathComponent("bumble_got.txt")
            let send = try bumble.advertising("send", ["send", "--adapter", "hci0", "--name", "msgpipe-bbcocs", "--format", "lines", "--json",
                try lab.file("text.txt", text).path])
            let (phone, report) = try bumble.peer("bumble", "bumble_coc.py", ["--to", "msgpipe-bbcocs", "--receive", got.path, "--timeout", "120"])
            send.wait(seconds: 30)
            lab.expectExit(phone)
            lab.expectExit(send)
            lab.expectSent(send, count: 1, link: nil)
            let received = (try? [UInt8](Data(contentsOf: got))) ?? []
            lab.expect(received == text, "Bumble received \(received.count) bytes, not the \(text.count) sent byte-identical")
            lab.expect(report?.psm != nil, "Bumble read no PSM")
            lab.note("bumble: send --name -> phone over the L2CAP channel, lines: \(report?.numbers ?? "no numbers")")
        }
    }

    /// Both exit 0, listen's one message is `text` over the channel, Bumble read the PSM and opened the channel.
    private static func expectLine(_ bumble: BumbleLab, _ listen: LabProcess, _ phone: LabProcess, _ report: BumbleReport?, _ text: [UInt8],
        sourceLocation: SourceLocation = #_sourceLocation) {
        let lab = bumble.lab
        listen.wait(seconds: 30)
        lab.expectExit(phone, sourceLocation: sourceLocation)
        lab.expectExit(listen, sourceLocation: sourceLocation)
        lab.expectOneMessage(listen, text, link: "l2cap", linkRequired: false, sourceLocation: sourceLocation)
        lab.expect(report?.psm != nil, "Bumble read no PSM", sourceLocation: sourceLocation)
        lab.expect(report?.channelMTU != nil, "Bumble never opened the channel", sourceLocation: sourceLocation)
    }
}
