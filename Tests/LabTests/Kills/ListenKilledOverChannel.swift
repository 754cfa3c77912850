import Testing

extension Lab.Kills {
    /// Kills 2: as kills 1 (`listenKilledOverGATT`) over the LE credit-based channel (`--link-mode l2cap`): each
    /// of send's JSON lines `"link":"l2cap"`.
    @Test("listen --out-dir killed mid-transfer over the L2CAP channel (kernel backend): every message kept once")
    func listenKilledOverChannel() {
        LabCheck.run { lab in
            try ListenKills.kernel(lab, name: "msgpipe-kill2", link: "l2cap").run("kills2")
        }
    }
}
