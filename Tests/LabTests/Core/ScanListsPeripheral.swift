import Foundation
import Testing

/// One peer of `msgpipe scan --json`'s array (the fields the lab judges).
struct ScannedPeerLine: Decodable {
    let address: String
    let name: String?
    let rssi: Int
    let distanceMetres: Double?
    let services: [String]
}

extension Lab.Core {
    /// Check 3: `lab-probe serve` on hci0 advertises its name (scan response) and a 128-bit service (advertising
    /// data); `msgpipe scan --json` on hci1 lists it with both, an RSSI and a distance. A scan response can be
    /// missed (emulated CPU, the controller's duplicate filter): one more scan.
    @Test("msgpipe scan on hci1 lists hci0's advertised name, service, RSSI and distance", .tags(.hci0, .hci1))
    func scanListsPeripheral() {
        LabCheck.run { lab in
            let env = lab.environment
            let probe = try lab.startProbe(adapter: "hci0", name: "msgpipe-lab", connections: 1, ["--service", Self.service])
            var scan = try lab.run("scan", env.msgpipe, ["scan", "--adapter", "hci1", "--name", "msgpipe-lab", "--timeout", "8", "--json"], seconds: 60)
            if scan.exit != .status(0) {
                scan = try lab.run("scan-again", env.msgpipe, ["scan", "--adapter", "hci1", "--name", "msgpipe-lab", "--timeout", "8", "--json"], seconds: 60)
            }
            lab.stopProbe(probe, index: 0)
            lab.expectExit(scan)
            let peers = scan.jsonLines([ScannedPeerLine].self).flatMap { $0 }
            let found = peers.first { $0.address == env.addressA }
            lab.expect(found != nil, "scan --json lists no peer at \(env.addressA) (\(peers.count) peers)")
            guard let found else { return }
            lab.expect(found.name == "msgpipe-lab", "scan: name \(found.name ?? "null"), expected msgpipe-lab")
            lab.expect(found.services == [Self.service.uppercased()], "scan: services \(found.services), expected [\(Self.service.uppercased())]")
            lab.expect((-127...20).contains(found.rssi), "scan: RSSI \(found.rssi) out of range")
            lab.expect(found.distanceMetres != nil, "scan: no distance estimate")
        }
    }
}
