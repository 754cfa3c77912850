import Foundation
import Testing

extension Lab.NewBluez {
    /// One 1 MiB send through the newer bluetoothd (EATT off by default since 5.67); listen sees a bluetoothd that
    /// serves several centrals at once. The note compares its time with the kernel backend's (check 12's
    /// `t12.json` in the same run, when there is one).
    @Test("newer bluetoothd: send (hci1) -> listen (hci0) through it, 1 MiB byte-identical; listen serves several centrals at once")
    func oneCentral() {
        let message = LabCheck.randomBytes(Self.mebibyte)
        Self.run({ lab, listen in
            let send = try Self.send(lab, "send", adapter: "hci1", try lab.file("mib.bin", message))
            send.wait(seconds: 300)
            lab.expectExit(send)
            let sent = lab.expectSent(send, count: 1, link: nil)
            lab.expect(!listen.stderr.contains("one central at a time"), "listen serves one central at a time through this bluetoothd")
            let kernel = (try? Data(contentsOf: lab.environment.outDirectory.appendingPathComponent("t12.json")))
                .flatMap { try? JSONDecoder().decode(SendLine.self, from: $0) }
            lab.note("newer bluetoothd: 1 MiB in \(sent.first.map { "\($0.seconds)" } ?? "?") s; kernel backend (check 12) \(kernel.map { "\($0.seconds)" } ?? "?") s")
        }, verdict: { lab, lines in
            lab.expectEachOnce([("the 1 MiB", message)], in: lines)
        })
    }
}
