import Testing

extension Lab.Bonding {
    /// A phone that writes before it pairs (as iOS does): msgpipe's GATT server refuses the write with ATT
    /// Insufficient Authentication (0x05) or Insufficient Encryption (0x0F); the phone pairs with bonding, writes
    /// again, and the message arrives.
    @Test("a phone that writes before pairing gets ATT Insufficient Authentication/Encryption, pairs with bonding, writes again, and the message arrives",
        .tags(.hci3))
    func writeBeforePairing() {
        BondingLab.run(phone: "C0:5B:0D:00:00:04") { bond in
            let lab = bond.lab
            let listen = try bond.listen("listen")
            let (phone, report) = try bond.phone("phone", ["--write-first"])
            bond.expectDelivered(listen)
            bond.expectPhone(phone, report, how: "paired")
            lab.expect(report?.writeBeforePairing == 0x05 || report?.writeBeforePairing == 0x0F,
                "the write before pairing got \(report?.writeBeforePairing.map { "ATT error \($0)" } ?? "no answer"), expected ATT error 0x05 or 0x0F")
            lab.note("bonding: write before pairing: ATT error \(report?.writeBeforePairing.map { String($0, radix: 16) } ?? "?")")
            bond.noteTime("pairing after a write refused before pairing", report)
        }
    }
}
