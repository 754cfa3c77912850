import Testing

extension Lab.Kills {
    /// Kills 3: the batch queued with `send --spool --queue-only` (exit 0), then `send --spool` (link mode auto:
    /// the channel the listener publishes) killed `LAB_KILLS_N` times and run again on its spool (`SpoolKills`)
    /// while one listen keeps running. Every kill a SIGKILL; the last send exits 0, listen exits 0 on SIGTERM;
    /// every message in the directory exactly once and byte-identical; the spool is empty.
    @Test("send --spool killed mid-transfer (L2CAP channel) and run again on its spool: every message kept once")
    func spoolSendKilled() {
        LabCheck.run { lab in
            try SpoolKills.kernel(lab, name: "msgpipe-kill3", linkMode: [], listenKilled: false).run("kills3")
        }
    }
}
