import Testing

extension Lab.Kills {
    /// Kills 1: kernel backend, `send --link-mode gatt --reconnects 50`; listen killed `LAB_KILLS_N` times
    /// (`ListenKills`). send exits 0, the last listen exits 0 on SIGTERM, every kill was a SIGKILL; every message
    /// in the directory exactly once and byte-identical, nothing else there; send's 32 JSON lines acknowledge
    /// each message once, each `"link":"gatt"`.
    @Test("listen --out-dir killed mid-transfer over GATT (kernel backend): every message kept once")
    func listenKilledOverGATT() {
        LabCheck.run { lab in
            try ListenKills.kernel(lab, name: "msgpipe-kill1", link: "gatt").run("kills1")
        }
    }
}
