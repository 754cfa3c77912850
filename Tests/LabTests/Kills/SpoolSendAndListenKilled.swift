import Testing

extension Lab.Kills {
    /// Kills 4: as kills 3 (`spoolSendKilled`) over GATT, with listen SIGKILLed together with each send and started
    /// again first; in the "kept" round listen kills itself once it kept a message and send is killed at that
    /// moment, so it never got that acknowledgement. Also: listen died by SIGKILL `LAB_KILLS_N` times.
    @Test("send --spool and listen --out-dir both killed mid-transfer (GATT): every message kept once")
    func spoolSendAndListenKilled() {
        LabCheck.run { lab in
            try SpoolKills.kernel(lab, name: "msgpipe-kill4", linkMode: ["--link-mode", "gatt"], listenKilled: true).run("kills4")
        }
    }
}
