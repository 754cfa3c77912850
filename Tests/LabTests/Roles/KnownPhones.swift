import Foundation
import Testing

extension Lab.Roles {
    /// Check 28k: only known phones, over Bluetooth. `listen --identity --authorized-keys --json --count 3` on
    /// hci0 with the keys of "till-b", "till-c" and "till-d"; hci1 sends sealed over the L2CAP channel, hci2 over
    /// GATT (--link-mode gatt), then a stranger (an unknown key, hci3) and a keyless phone (hci1) are refused
    /// (exit 77), then hci2 sends with till-d's key (hci3's failed handshake would make listen refuse that address
    /// for a while). Judged on listen's JSON: three lines, each known key's message named by its `peer_name`
    /// with its CRC-32, nothing of the refused two; each refusal logged naming its central; send --json names both
    /// links.
    @Test("only known phones over Bluetooth: three keys accepted (channel and GATT), a stranger and a keyless phone refused",
        .tags(.hci0, .hci1, .hci2, .hci3))
    func knownPhones() {
        LabCheck.run { lab in
            let env = lab.environment
            guard env.addressC != nil, env.addressD != nil else { return lab.skip("the lab has no fourth controller") }
            let keys = try PhoneKeys(lab, phones: ["b", "c", "d"])
            defer { keys.remove() }
            let bodies = Dictionary(uniqueKeysWithValues: ["b", "c", "d", "s"].map { ($0, LabCheck.randomBytes(20_000 + Int.random(in: 0..<32_768))) })
            var files: [String: URL] = [:]
            for (name, body) in bodies { files[name] = try lab.file("key_\(name).bin", body) }
            let listen = try lab.startListen(Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-keys"] + keys.listenArguments + ["--json", "--count", "3"])
            var sends: [String: LabProcess] = [:]
            for (label, adapter, file, extra) in [
                ("b", "hci1", "b", keys.sendArguments("b")),
                ("c", "hci2", "c", keys.sendArguments("c") + ["--link-mode", "gatt"]),
                ("stranger", "hci3", "s", keys.sendArguments("stranger")),
                ("keyless", "hci1", "s", ["--reconnects", "1"]),
                ("d", "hci2", "d", keys.sendArguments("d")),
            ] {
                sends[label] = try lab.run("send-\(label)", env.msgpipe, ["send"] + Self.kernel + ["--adapter", adapter, "--to", "msgpipe-keys",
                    "--json"] + extra + [files[file]!.path], seconds: 120)
            }
            listen.wait(seconds: 60)
            for label in ["b", "c", "d"] { lab.expectExit(sends[label]!) }
            for label in ["stranger", "keyless"] { lab.expectExit(sends[label]!, .status(77)) }
            lab.expectExit(listen)
            let lines = listen.jsonLines(ListenLine.self)
            for phone in ["b", "c", "d"] {
                lab.expect(lines.contains { $0.peerName == "till-\(phone)" && $0.crc32 == crc32Hex(bodies[phone]!) && $0.body == bodies[phone] },
                    "listen --json has no message of till-\(phone) with its CRC-32")
            }
            lab.expect(!lines.contains { $0.crc32 == crc32Hex(bodies["s"]!) }, "listen wrote the stranger's or the keyless phone's message")
            let written = String(decoding: listen.stdout, as: UTF8.self).split(separator: "\n").count
            lab.expect(written == 3, "listen --json wrote \(written) lines, expected 3")
            // A channel central's GATT connection, which never greets, is logged "refused ADDRESS: it sent nothing
            // within 10 s" too: the two refusals judged are the handshakes', each naming its central.
            let refusals = listen.stderr.split(separator: "\n").filter { $0.contains("refused ") && !$0.contains("sent nothing within") }
            for (who, address) in [("the stranger", env.addressD!), ("the keyless phone", env.addressB)] {
                lab.expect(refusals.contains { $0.contains("refused \(address)") }, "listen logged no refusal of \(who) (\(address)): \(refusals)")
            }
            let links = Set(["b", "c", "d"].compactMap { sends[$0]!.jsonLines(SendLine.self).first?.link })
            lab.expect(links.isSuperset(of: ["l2cap", "gatt"]), "send --json of b, c, d named the links \(links.sorted()), expected l2cap and gatt")
        }
    }

    /// Check 28s: the cost of sealing on this link. 256 KiB from hci1 into a plain `listen --count 1` on hci0, then
    /// into one with `--identity --authorized-keys` (send with till-b's key): both exit 0, both outputs intact.
    /// The note has each send's whole run (connect and handshake included) and its message's seconds.
    @Test("256 KiB sealed and plain over the same link: both intact", .tags(.hci0, .hci1))
    func sealedAndPlain() {
        LabCheck.run { lab in
            let env = lab.environment
            let keys = try PhoneKeys(lab, phones: ["b"])
            defer { keys.remove() }
            let message = LabCheck.randomBytes(262_144)
            let file = try lab.file("kib256.bin", message)
            var times: [String] = []
            for sealed in [false, true] {
                let mode = sealed ? "sealed" : "plain"
                let listen = try lab.startListen(Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-seal"] + (sealed ? keys.listenArguments : [])
                    + ["--count", "1"], label: "listen-\(mode)")
                let started = Date()
                let send = try lab.run("send-\(mode)", env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci1", "--to", "msgpipe-seal"]
                    + (sealed ? keys.sendArguments("b") : []) + ["--json", file.path], seconds: 120)
                let whole = Date().timeIntervalSince(started)
                listen.wait(seconds: 60)
                lab.expectExit(send)
                lab.expectExit(listen)
                lab.expect(listen.stdout == message, "the \(mode) listen wrote \(listen.stdout.count) bytes, not the 256 KiB message")
                times.append("\(mode) whole run " + String(format: "%.2f", whole) + " s message \(Self.text(send.jsonLines(SendLine.self).first?.seconds)) s")
                _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            }
            lab.note("sealing on the air, 256 KiB hci1 -> hci0: \(times.joined(separator: "; "))")
        }
    }
}

/// X25519 keys for the keyed checks, in a fresh directory of the guest's own /tmp (key files must not be
/// world-writable; OUT is the host's share): listen's identity, one identity per phone (its public key in
/// `authorized_keys` as "till-PHONE"), and a stranger's that is in no list.
struct PhoneKeys {
    let directory: URL
    let serverPublic: String

    init(_ lab: LabCheck, phones: [String]) throws {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("keys-\(UUID().uuidString.prefix(8))")
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keygen = { (name: String) throws -> String in
            let run = try lab.run("keygen-\(name)", lab.environment.msgpipe, ["keygen", "--x25519", "--out", directory.appendingPathComponent("\(name).id").path],
                seconds: 30)
            lab.expectExit(run)
            return run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        serverPublic = try keygen("server")
        let authorized = try phones.map { "\(try keygen($0)) till-\($0)\n" }.joined()
        _ = try keygen("stranger")
        let file = directory.appendingPathComponent("authorized_keys")
        try authorized.write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }

    /// listen's `--identity` and `--authorized-keys`.
    var listenArguments: [String] {
        ["--identity", directory.appendingPathComponent("server.id").path, "--authorized-keys", directory.appendingPathComponent("authorized_keys").path]
    }

    /// A phone's (or the stranger's) `--identity` and `--peer-key` of listen.
    func sendArguments(_ phone: String) -> [String] {
        ["--identity", directory.appendingPathComponent("\(phone).id").path, "--peer-key", serverPublic]
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
