import Foundation
import Testing

extension Lab.Core {
    /// Check 19: `msgpipe listen --max-centrals 2` on hci0 (the concurrent accept loop on
    /// BLEPeripheral.connections(maximumConcurrent:)). gatttool on hci1, interactive, connects and discovers the
    /// services, and holds its link while gatttool on hci2 discovers them too: the second exits 0 and finds the
    /// msgpipe service, hci0 has two LE links at that moment, and the first is answered again afterwards (2-9
    /// answers in all). Each command of the first waits for what it needs, bounded: its link, then the second's end.
    @Test("two gatttool centrals connected at once to msgpipe listen --max-centrals 2 are both answered",
        .tags(.hci0, .hci1, .hci2), .enabled(if: Lab.Core.severalCentrals, "needs hci2 and listen --max-centrals"))
    func twoGatttoolsOnListen() {
        LabCheck.run { lab in
            let env = lab.environment
            let listen = try lab.startListen(["--adapter", "hci0", "--name", "msgpipe-many", "--max-centrals", "2", "--format", "lines", "--json"])
            let first = try lab.start("gatttool-1", "/usr/bin/gatttool", ["-i", "hci1", "-b", env.addressA, "-t", "public", "-I"], interactive: true)
            first.type("connect")
            lab.expect(first.waitForStdout(containing: "Connection successful", seconds: 30), "the first gatttool never connected")
            first.type("primary")
            lab.expect(first.waitForStdout(containing: Self.msgpipeService), "the first gatttool never found the msgpipe service")
            let second = try lab.run("gatttool-2", "/usr/bin/gatttool", ["-i", "hci2", "-b", env.addressA, "-t", "public", "--primary"], seconds: 60)
            let links = LabControllers.leLinks(index: 0).count
            first.type("primary")
            for _ in 0..<100 {
                if Self.answers(first) >= 2 { break }
                Thread.sleep(forTimeInterval: 0.2)
            }
            first.type("disconnect")
            Thread.sleep(forTimeInterval: 1)
            first.type("exit")
            first.wait(seconds: 30)
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            listen.stop(seconds: 30)
            lab.expectExit(second)
            lab.expect((second.stdoutText + second.stderr).contains("uuid: \(Self.msgpipeService)"), "the second gatttool did not find the msgpipe service")
            lab.expect(links == 2, "\(links) LE links on hci0 while the second gatttool was answered, expected 2")
            lab.expect((2...9).contains(Self.answers(first)), "the first gatttool was answered \(Self.answers(first)) times, expected 2-9")
            lab.expectExit(listen)
        }
    }

    /// How often gatttool's output names the msgpipe service.
    static func answers(_ gatttool: LabProcess) -> Int {
        gatttool.stdoutText.components(separatedBy: msgpipeService).count - 1
    }
}
