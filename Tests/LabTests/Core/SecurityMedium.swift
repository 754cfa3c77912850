import Foundation
import Testing

extension Lab.Core {
    /// Whether the lab's mgmt pairing agent runs (BLELAB_AUTOCONFIRM=1, which Scripts/lab.sh sets): it accepts
    /// Just Works pairing where msgpipe's own agent does not run (the raw probes).
    static var pairingAgent: Bool {
        guard let out = LabEnvironment.current?.outDirectory else { return false }
        return FileManager.default.fileExists(atPath: out.appendingPathComponent(".blelab/autoconfirm.log").path)
    }

    /// Check 7: BT_SECURITY medium on both probes (serve on hci1, connect on hci0): SMP Just Works pairs, btmon
    /// shows the link encrypted with AES-CCM, and the ATT exchange works over it.
    @Test("security medium: the link pairs and the ATT exchange works encrypted", .tags(.hci0, .hci1),
        .enabled(if: Lab.Core.pairingAgent, "no pairing agent (BLELAB_AUTOCONFIRM=1)"))
    func securityMedium() {
        LabCheck.run { lab in
            let env = lab.environment
            let probe = try lab.startProbe(adapter: "hci1", name: "msgpipe-sec", connections: 1, ["--security", "medium"])
            let connect = try lab.probeConnect(adapter: "hci0", to: env.addressB, ["--security", "medium"])
            probe.wait(seconds: 60)
            lab.expectExchange(connect, peer: env.addressB, read: Self.probeValue)
            lab.expectExit(probe)
            // btmon is the only witness of the encryption.
            lab.expect(lab.btmonSinceStart().contains("Encryption: Enabled with AES-CCM"), "btmon shows no link encrypted with AES-CCM")
        }
    }
}
