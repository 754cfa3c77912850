import Foundation
import Testing

extension Lab.Bonding {
    /// No keys on either side: Bumble pairs (LE Secure Connections, Just Works, bonding requested), msgpipe's own
    /// agent accepts, the message arrives, and the bond is kept: the file 0600 in a 0700 directory, listed with
    /// the phone's address and an LTK.
    @Test("a Bumble phone pairs with bonding (LE SC, Just Works) with listen --security medium --bonds; msgpipe's agent accepts, the message arrives, the bond is kept 0600 in a 0700 directory",
        .tags(.hci3))
    func firstPairing() {
        BondingLab.run(phone: "C0:5B:0D:00:00:01") { bond in
            let lab = bond.lab
            let listen = try bond.listen("listen")
            let (phone, report) = try bond.phone("phone")
            bond.expectDelivered(listen)
            bond.expectPhone(phone, report, how: "paired")
            lab.expect(report?.hadKeys == false, "the phone had keys before its first pairing")
            lab.expect(report?.keys.contains("ltk") == true, "the phone stored no LTK: \(report?.keys ?? [])")
            // msgpipe's pairing agent has no JSON: its notes on stderr are the only witness that it answered.
            lab.expect(listen.stderr.contains("pairs with hci0 (Just Works): accepted"), "listen's agent never accepted the pairing")
            lab.expect(listen.stderr.contains("bonded with hci0: its LTK"), "listen never kept the phone's LTK")
            let attributes = { (path: String) in (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int }
            let file = "\(bond.bonds)/\(lab.environment.addressA).bonds"
            lab.expect(attributes(bond.bonds) == 0o700, "the bond directory's mode is \(attributes(bond.bonds).map { String($0, radix: 8) } ?? "absent"), expected 700")
            lab.expect(attributes(file) == 0o600, "the bond file's mode is \(attributes(file).map { String($0, radix: 8) } ?? "absent"), expected 600")
            let bonds = try bond.bondsList()
            lab.expect(bonds.count == 1 && bonds.first.map {
                $0.adapter == lab.environment.addressA && $0.address == bond.phone && $0.type == "random" && $0.keys.contains { $0.hasPrefix("ltk") }
            } == true, "bonds list: \(bonds), expected hci0's bond with \(bond.phone) (random) holding an LTK")
            bond.noteTime("first pairing (Just Works, bonding)", report)
        }
    }
}
