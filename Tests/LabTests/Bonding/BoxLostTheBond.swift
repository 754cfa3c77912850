import Testing

extension Lab.Bonding {
    /// The phone bonds, then `msgpipe bonds remove` forgets it (file and kernel): the phone's stored key fails and
    /// it leaves; listen says it left without pairing; the phone connects again, pairs again on the link (as
    /// Android does) and the message arrives. Linux 6.1 oopses in close(2) of the ATT socket after the failed
    /// encryption (docs/LAB.md), so the full run leaves this test out unless LAB_BONDING_LOST=1.
    @Test("after msgpipe bonds remove the phone's stored key fails, listen warns (left without pairing, no bond here), and the phone that pairs again delivers",
        .tags(.hci3))
    func boxLostTheBond() {
        BondingLab.run(phone: "C0:5B:0D:00:00:03") { bond in
            let lab = bond.lab
            try bond.bondFirst()

            let remove = try lab.run("bonds-remove", lab.environment.msgpipe, [
                "bonds", "remove", bond.phone, "--bonds", bond.bonds, "--adapter", "hci0"], seconds: 30)
            lab.expectExit(remove)
            lab.expect(remove.stderr.contains("removed the bond of \(bond.phone)"), "bonds remove never said it removed \(bond.phone)")
            lab.expect(try bond.bondsList().isEmpty, "bonds list still shows a bond after bonds remove")
            let listen = try bond.listen("listen-2")
            let (refused, failed) = try bond.phone("phone-2")
            bond.expectPhone(refused, failed, exit: 1, how: nil)
            lab.expect(failed?.storedKeyError != nil, "the phone's stored key did not fail")
            lab.expect(listen.waitForStderr(containing: "left hci0 without pairing", seconds: 30), "listen never warned that the phone left without pairing")
            let (phone, report) = try bond.phone("phone-3", ["--repair"])
            bond.expectDelivered(listen)
            bond.expectPhone(phone, report, how: "paired")
            lab.expect(report?.hadKeys == true && report?.storedKeyError != nil, "phone-3 did not pair again after its stored key failed")
            bond.noteTime("pairing again after the box lost the bond", report)
        }
    }
}
