import Testing

extension Lab.Bonding {
    /// The phone bonds with one listen, then a new listen loads the keys from the bond file: the phone encrypts
    /// with its stored LTK, neither side pairs again, and the message arrives.
    @Test("after listen restarted (keys loaded from the bond file) the phone encrypts with its stored key, without pairing again, and the message arrives",
        .tags(.hci3))
    func restartedListener() {
        BondingLab.run(phone: "C0:5B:0D:00:00:02") { bond in
            let lab = bond.lab
            try bond.bondFirst()

            let listen = try bond.listen("listen-2")
            let (phone, report) = try bond.phone("phone-2")
            bond.expectDelivered(listen)
            bond.expectPhone(phone, report, how: "stored key")
            lab.expect(report?.hadKeys == true, "the phone had no keys after bonding")
            lab.expect(listen.stderr.contains("bonded, it encrypts with the stored key"), "listen never recognised the bonded phone")
            lab.expect(!listen.stderr.contains("pairs with hci0"), "the restarted listen paired again")
            bond.noteTime("reconnect after a restart", report)
        }
    }
}
