import Foundation
import Glibc
import Testing

extension Tag {
    /// The power cut (Tests/LabTests/PowerCut, booted by Scripts/lab-powercut.sh).
    @Tag static var powerCut: Self
}

extension Lab {
    /// A power cut (docs/LAB.md "A power cut"): `listen --out-dir` writes into ext4 on the VM's virtio disk while
    /// `send --spool --json` (its spool on the same disk) records each acknowledgement on the host (9p); at a cut
    /// point the VM resets itself without a sync, and the next boot judges what the disk kept. Scripts/lab-powercut.sh
    /// boots the VM for each step, mounts the disk and says which step a boot is (`PowerCutBoot`); everywhere else
    /// these tests are skipped. In one boot they run in this order (the suite is serialized: source order): the
    /// verdicts on the run before (`afterTheCut`, then `afterGoingOn`), then `fileSystemClean` in the last boot or
    /// the next run (`cut`), which ends in the reset. hci0 runs listen, hci1 send.
    @Suite(.tags(.powerCut, .hci0, .hci1),
        .enabled(if: PowerCutBoot.current != nil, "only in a boot of Scripts/lab-powercut.sh (LAB_POWERCUT_DISK: the disk's mount point)"))
    struct PowerCut {
        @Test("power cut (VM reset once send --spool recorded the cut point's acknowledgements from listen --out-dir on ext4): every acknowledged message there once, byte-identical, no partial file")
        func afterTheCut() {
            LabCheck.run { lab in try PowerCutBoot.required(lab)?.judgeTheCut(lab) }
        }

        @Test("power cut, then listen again on the same directory and send --spool going on (same session): all 40 messages there once, byte-identical, the spool empty")
        func afterGoingOn() {
            LabCheck.run { lab in try PowerCutBoot.required(lab)?.goOnAndJudge(lab) }
        }

        @Test("power cut: ext4 clean after the cuts (e2fsck -fn)")
        func fileSystemClean() {
            LabCheck.run { lab in try PowerCutBoot.required(lab)?.checkFileSystem(lab) }
        }

        /// Reports only when it fails (no cut): a cut resets the VM before the test ends. The next boot's
        /// `afterTheCut` judges that the cut happened (blelab.sh's exit 125 and the marker `runK/cut`).
        @Test("power cut: send --spool into listen --out-dir on the disk reaches the cut point, then the VM resets without a sync")
        func cut() {
            LabCheck.run { lab in try PowerCutBoot.required(lab)?.runAndCut(lab) }
        }
    }
}

/// What Scripts/lab-powercut.sh tells a boot of the power cut, from its environment: `LAB_POWERCUT_DISK` (the
/// mounted disk, set only there), `BLELAB_DISK` (its device), `LAB_POWERCUT_VERIFY` (the run K to judge, 0: none),
/// `LAB_POWERCUT_CUT_EXIT` (blelab.sh's exit of the boot that ran K: 125 after the reset), `LAB_POWERCUT_RUN` (the
/// run to start, 0: none, the last boot) and `LAB_POWERCUT_CUT` (its cut point, in acknowledgement lines). Run K's
/// records are in `OUT/runK` on the host (send's JSON lines `send.out`, the marker `cut`), its output directory and
/// spool on the disk (`inboxK`, `spoolK`).
struct PowerCutBoot {
    let disk: URL
    let device: String
    let out: URL
    let verify: Int
    let cutExit: Int?
    let run: Int
    let cutPoint: Int

    /// Messages a run sends.
    static let count = 40
    /// The bound on a send (a run's, until the cut point, and going on's): a hang guard. At load 15 on the 2-core
    /// host the first acknowledgement came 108 s after send started (the rest within a second of it).
    static let sendSeconds = 300.0

    static let current: PowerCutBoot? = {
        let env = ProcessInfo.processInfo.environment
        guard let disk = env["LAB_POWERCUT_DISK"], !disk.isEmpty, let out = env["BLELAB_OUT"] else { return nil }
        return PowerCutBoot(disk: URL(fileURLWithPath: disk), device: env["BLELAB_DISK"] ?? "/dev/vda", out: URL(fileURLWithPath: out),
            verify: env["LAB_POWERCUT_VERIFY"].flatMap { Int($0) } ?? 0, cutExit: env["LAB_POWERCUT_CUT_EXIT"].flatMap { Int($0) },
            run: env["LAB_POWERCUT_RUN"].flatMap { Int($0) } ?? 0, cutPoint: env["LAB_POWERCUT_CUT"].flatMap { Int($0) } ?? 0)
    }()

    /// The boot, or nil with a failure recorded (the suite is enabled only with it).
    static func required(_ lab: LabCheck) -> PowerCutBoot? {
        if current == nil { lab.fail("not a boot of Scripts/lab-powercut.sh (no LAB_POWERCUT_DISK)") }
        return current
    }

    /// The 40 messages, the same bytes in every boot, all different: 1 B to 1 MiB (2,256,960 bytes). Message N
    /// (send's input N, its `spool_id` N in a fresh spool) is `messages[N - 1]`: 1 MiB for N = 17, else the Nth of
    /// a cycle of ten sizes; one repeated byte N below 4 bytes, else SplitMix64 seeded with N.
    static let messages: [[UInt8]] = (1...count).map { n in
        let sizes = [1, 100, 2000, 30000, 7, 65536, 512, 250_000, 4095, 12345]
        let size = n == 17 ? 1_048_576 : sizes[n % sizes.count]
        guard size >= 4 else { return [UInt8](repeating: UInt8(n), count: size) }
        var generator = SplitMix64(seed: UInt64(n))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size + 8)
        while bytes.count < size { withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) } }
        return Array(bytes.prefix(size))
    }

    func records(_ k: Int) -> URL { out.appendingPathComponent("run\(k)") }
    func inbox(_ k: Int) -> URL { disk.appendingPathComponent("inbox\(k)") }
    func spool(_ k: Int) -> URL { disk.appendingPathComponent("spool\(k)") }

    /// The batch to judge a directory by (no files), after checking that no two messages are alike.
    private static func batch(_ lab: LabCheck) throws -> KillsBatch {
        lab.expect(Set(messages).count == count, "the \(count) messages are not all different")
        return try KillsBatch(messages: messages, in: nil)
    }

    // MARK: A run and its cut

    /// Run `run`: listen on hci0 into `inboxK`, send the messages from hci1 through `spoolK`, its JSON lines into
    /// `OUT/runK/send.out`; once that file holds the cut point's lines, the marker `runK/cut`, then `sysrq b` (a
    /// reset without a sync: the guest's page cache dies as on a power loss). Fails only when it gets no cut.
    func runAndCut(_ lab: LabCheck) throws {
        let k = run
        guard k > 0, cutPoint > 0 else { return lab.fail("no run to start (LAB_POWERCUT_RUN \(run), LAB_POWERCUT_CUT \(cutPoint))") }
        let records = records(k)
        try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
        let inputs = try KillsBatch(messages: Self.messages, in: URL(fileURLWithPath: "/tmp/powercut/run\(k)"))
        let name = "msgpipe-cut\(k)"
        let listen = try lab.start("listen", lab.environment.msgpipe,
            ["listen", "--backend", "kernel", "--adapter", "hci0", "--name", name, "--out-dir", inbox(k).path], logs: records)
        if !listen.waitForStderr(containing: "advertising", seconds: 60) { lab.note("run \(k): listen did not say advertising within 60 s") }
        let started = Self.uptime()
        let send = try lab.start("send", lab.environment.msgpipe,
            ["send", "--backend", "kernel", "--adapter", "hci1", "--to", name, "--spool", spool(k).path, "--json"] + inputs.files.map(\.path),
            logs: records)
        // send's lines land on the host as it prints them (OUT is 9p with cache=none); 50 ms polls.
        var lines = 0
        let deadline = Date(timeIntervalSinceNow: Self.sendSeconds)
        while Date() < deadline && send.isRunning {
            lines = send.stdout.count(where: { $0 == UInt8(ascii: "\n") })
            if lines >= cutPoint { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        lines = send.stdout.count(where: { $0 == UInt8(ascii: "\n") })
        if lines >= cutPoint {
            // The marker tells the next boot that the reset was ours; then the reset, with nothing started in between.
            let text = String(format: "%d acknowledgements recorded when the cut was ordered, send started at %.2f s, cut at %.2f s\n",
                lines, started, Self.uptime())
            try Data(text.utf8).write(to: records.appendingPathComponent("cut"))
            Self.writeProc("/proc/sys/kernel/sysrq", "1")
            Self.writeProc("/proc/sysrq-trigger", "b")
            Thread.sleep(forTimeInterval: 30)
            lab.fail("the VM did not reset within 30 s of sysrq b")
        } else {
            lab.fail("run \(k): only \(lines) of \(cutPoint) acknowledgements after \(Int(Self.uptime() - started)) s (send "
                + "\(send.isRunning ? "running" : "exited")); no cut")
        }
        send.stop(seconds: 10)
        listen.stop(signal: SIGINT, seconds: 10)
    }

    /// Seconds since the guest booted (/proc/uptime).
    static func uptime() -> Double {
        let text = (try? String(contentsOfFile: "/proc/uptime", encoding: .utf8)) ?? ""
        return Double(text.split(separator: " ").first ?? "") ?? 0
    }

    /// Writes `text` to a /proc file (no new file, no truncation: the kernel's control files).
    private static func writeProc(_ path: String, _ text: String) {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { return }
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    // MARK: The verdicts

    /// Run `verify`'s verdict after the cut: the boot that ran it ended in the reset (blelab.sh's 125 and the
    /// marker); at least one acknowledgement recorded, each line that is JSON a `spool_id` of the batch with that
    /// message's `bytes` (a line cut by the power, not JSON, is no acknowledgement); every acknowledged message
    /// among the `*.msg` files, none twice, none that is not a whole message sent. Hidden `.part` files are
    /// counted, not judged.
    func judgeTheCut(_ lab: LabCheck) throws {
        let k = verify
        guard k > 0 else { return lab.fail("no run to judge (LAB_POWERCUT_VERIFY \(verify))") }
        let batch = try Self.batch(lab)
        let marker = (try? String(contentsOf: records(k).appendingPathComponent("cut"), encoding: .utf8)) ?? ""
        lab.expect(cutExit == 125 && !marker.isEmpty,
            "run \(k): its boot did not end in the cut (blelab.sh exit \(cutExit.map { "\($0)" } ?? "?"), want 125 with the marker run\(k)/cut; "
                + "marker \(marker.isEmpty ? "missing" : "there"))")
        let acks = Self.acknowledgements([records(k).appendingPathComponent("send.out")], lab)
        let look = Self.look(at: inbox(k), batch, lab)
        let lost = acks.acked.filter { look.found[$0, default: 0] == 0 }.sorted()
        lab.expect(!acks.acked.isEmpty, "run \(k): no acknowledgement recorded")
        lab.expect(lost.isEmpty, "run \(k): lost \(lost.count) acknowledged: spool_id \(lost)")
        let cutAt = marker.split(separator: " ").first.map(String.init) ?? "?"
        let notAcknowledged = look.found.keys.filter { !acks.acked.contains($0) }.count
        lab.note("power cut \(k): \(acks.acked.count) acknowledgements recorded (the cut ordered at \(cutAt)"
            + "\(acks.torn > 0 ? ", a torn last line" : "")), \(look.messages) messages found (\(notAcknowledged) not acknowledged), "
            + "lost \(lost.count), \(look.summary)")
    }

    /// Goes on as a rebooted gateway would: listen again on run `verify`'s directory, `send --spool` on its spool
    /// (no FILE: what the spool still holds, in the same Transport session; listen's journal drops what it kept),
    /// until send exits. Then: send exited 0, every line of both records that is JSON an acknowledgement of the
    /// batch (at least one), all 40 messages there once and whole, no `*.msg` left in the spool.
    func goOnAndJudge(_ lab: LabCheck) throws {
        let k = verify
        guard k > 0 else { return lab.fail("no run to go on with (LAB_POWERCUT_VERIFY \(verify))") }
        let batch = try Self.batch(lab)
        let records = records(k)
        let name = "msgpipe-again\(k)"
        let listen = try lab.start("listen_again", lab.environment.msgpipe,
            ["listen", "--backend", "kernel", "--adapter", "hci0", "--name", name, "--out-dir", inbox(k).path], logs: records)
        if !listen.waitForStderr(containing: "advertising", seconds: 60) { lab.note("run \(k) again: listen did not say advertising within 60 s") }
        let send = try lab.run("send_again", lab.environment.msgpipe,
            ["send", "--backend", "kernel", "--adapter", "hci1", "--to", name, "--spool", spool(k).path, "--json"], logs: records,
            seconds: Self.sendSeconds)
        listen.stop(signal: SIGINT, seconds: 10)
        lab.expect(send.exit == .status(0), "run \(k) again: send --spool \(send.exit.map(String.init(describing:)) ?? "running"), want exit 0")
        let acks = Self.acknowledgements(["send.out", "send_again.out"].map { records.appendingPathComponent($0) }, lab)
        let look = Self.look(at: inbox(k), batch, lab)
        let lost = (1...Self.count).filter { look.found[$0, default: 0] == 0 }
        lab.expect(!acks.acked.isEmpty, "run \(k) again: no acknowledgement recorded")
        lab.expect(lost.isEmpty, "run \(k) again: lost \(lost.count) of \(Self.count): spool_id \(lost)")
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: spool(k).path)) ?? []).filter { $0.hasSuffix(".msg") }.count
        lab.expect(left == 0, "run \(k) again: \(left) messages left in the spool")
        lab.note("power cut \(k) again: \(acks.acked.count) of \(Self.count) acknowledged in all, \(look.messages) messages found, "
            + "lost \(lost.count), \(look.summary); send --spool \(send.exit.map(String.init(describing:)) ?? "running"), \(left) left in the spool")
    }

    /// The file system after the cuts' journal replays and this boot's clean unmount: `e2fsck -fn` finds nothing
    /// to fix (exit 0). Unmounts the disk itself: the last test of the last boot.
    func checkFileSystem(_ lab: LabCheck) throws {
        let umount = labShell(["umount", disk.path])
        lab.expect(umount.status == 0, "umount \(disk.path): exit \(umount.status) \(umount.output)")
        let check = try lab.run("e2fsck", "/sbin/e2fsck", ["-fn", device], seconds: 300)
        lab.expect(check.exit == .status(0), "e2fsck -fn \(device): \(check.exit.map(String.init(describing:)) ?? "running"), want exit 0")
    }

    /// The acknowledgements in `files` (send's JSON lines): the spool ids, and how many lines were not JSON (cut by
    /// the power). A JSON line without a `spool_id` of the batch and that message's `bytes` fails the test.
    static func acknowledgements(_ files: [URL], _ lab: LabCheck) -> (acked: Set<Int>, torn: Int) {
        var acked = Set<Int>()
        var torn = 0
        for file in files {
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                let data = Data(line.utf8)
                guard (try? JSONSerialization.jsonObject(with: data)) != nil else {
                    torn += 1
                    continue
                }
                guard let ack = try? JSONDecoder().decode(PowerCutAck.self, from: data), (1...count).contains(ack.spoolID),
                    ack.bytes == messages[ack.spoolID - 1].count
                else {
                    lab.fail("\(file.lastPathComponent): not an acknowledgement of a message sent (spool_id 1-\(count), its bytes): \(line)")
                    continue
                }
                acked.insert(ack.spoolID)
            }
        }
        return (acked, torn)
    }

    /// What `directory` holds, judged: no message twice, no `*.msg` (nor other visible file) that is not a whole
    /// message (`KillsBatch.census`, by bytes). `found` counts copies by spool id; `summary` is for the note.
    static func look(at directory: URL, _ batch: KillsBatch, _ lab: LabCheck) -> (found: [Int: Int], messages: Int, summary: String) {
        let exists = FileManager.default.fileExists(atPath: directory.path)
        lab.expect(exists, "no \(directory.path)")
        let census = batch.census(of: directory)
        var found: [Int: Int] = [:]
        let lost = Set(census.lost)
        for index in batch.messages.indices where !lost.contains(index) { found[index + 1] = 1 }
        for (index, copies) in census.duplicated { found[index + 1] = copies }
        let duplicated = census.duplicated.map { $0.index + 1 }
        lab.expect(duplicated.isEmpty, "\(directory.lastPathComponent): duplicated spool_id \(duplicated)")
        lab.expect(census.foreign.isEmpty, "\(directory.lastPathComponent): not a whole message: \(census.foreign)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let parts = names.filter { $0.hasSuffix(".part") }.count
        let other = names.filter { $0.hasPrefix(".") && !$0.hasSuffix(".part") }.sorted()
        return (found, found.values.reduce(0, +),
            "duplicated \(duplicated.count), not a whole message \(census.foreign.count), hidden .part \(parts), "
                + "other files \(other.isEmpty ? "none" : other.joined(separator: " "))")
    }
}

/// One `send --spool --json` line as the power cut judges it.
struct PowerCutAck: Decodable {
    /// N: the Nth input of a fresh spool.
    let spoolID: Int
    let bytes: Int

    enum CodingKeys: String, CodingKey {
        case spoolID = "spool_id"
        case bytes
    }
}
