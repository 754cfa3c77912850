import Foundation
import Testing

extension Lab.NewBluez {
    /// bluetoothd 5.78 to at least 5.87 clears an unbonded central's subscription, when it disconnects, with a
    /// NULL ATT that matches the first client in the characteristic's notify list, and closes that one's socket:
    /// another central's. hci1 subscribes first and sends 1 MiB; hci2 subscribes, sends 1 MiB too, and its link
    /// is cut from hci2's controller (HCI Disconnect, a phone that walks away). hci2's send reconnects and resumes.
    @Test("newer bluetoothd: a second central's link is cut during a 1 MiB send: both exit 0, every file once")
    func cutSecondCentral() {
        let first = LabCheck.randomBytes(Self.mebibyte), second = LabCheck.randomBytes(Self.mebibyte)
        Self.run({ lab, _ in
            let b = try Self.send(lab, "send-hci1", adapter: "hci1", try lab.file("mib.bin", first))
            lab.expect(b.waitForStderr(containing: "link connected"), "hci1's send never connected")
            let c = try Self.send(lab, "send-hci2", adapter: "hci2", try lab.file("mib2.bin", second))
            lab.expect(c.waitForStderr(containing: "link connected"), "hci2's send never connected")
            Thread.sleep(forTimeInterval: 1)
            let handle = LabControllers.leLinks(index: 2).first?.handle
            lab.expect(handle != nil, "hci2 had no LE link to cut")
            let cut = Date()
            if let handle { labShell(["hcitool", "-i", "hci2", "ledc", "\(handle)"]) }
            c.wait(seconds: 300)
            b.wait(seconds: 300)
            lab.expectExit(c)
            lab.expectExit(b)
            lab.note("newer bluetoothd, a second central cut: both done \(Int(Date().timeIntervalSince(cut))) s after the cut")
        }, verdict: { lab, lines in
            lab.expectEachOnce([("hci1's 1 MiB", first), ("hci2's 1 MiB", second)], in: lines)
        })
    }
}
