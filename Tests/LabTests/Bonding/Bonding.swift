import Foundation
import Glibc
import TestSupport
import Testing

extension Lab {
    /// A phone that pairs with bonding against `msgpipe listen --security medium --bonds DIR` (kernel backend,
    /// bluetoothd not running): Google's Bumble as the phone (Tests/lab/bumble_bond.py) on hci3 (hci1 in a lab
    /// with two controllers) through the HCI user channel, hci0 the peripheral. Each test is a `BondingLab`.
    @Suite(.tags(.bonding, .kernel, .hci0), .enabled(if: LabBumble.python != nil, "no Bumble in BLELAB_DIR/bumble (Scripts/blelab.sh --setup-bumble)"))
    struct Bonding {}
}

/// What `bumble_bond.py --json` reports on its last line.
struct PhoneReport: Decodable {
    let exit: Int
    /// Whether its key store held keys for the peripheral when it connected.
    let hadKeys: Bool?
    /// Why encrypting with the stored key failed (nil: it did not fail, or was not tried).
    let storedKeyError: String?
    /// The ATT error a write before pairing got (0: the write was accepted; nil: no such write).
    let writeBeforePairing: Int?
    /// "stored key" or "paired" once the link was encrypted.
    let how: String?
    let keys: [String]
    let encryptedSeconds: Double?
    let bytes: Int?

    enum CodingKeys: String, CodingKey {
        case exit, keys, how, bytes
        case hadKeys = "had_keys", storedKeyError = "stored_key_error", writeBeforePairing = "write_before_pairing"
        case encryptedSeconds = "encrypted_seconds"
    }
}

/// One `msgpipe bonds list --json` line.
struct BondLine: Decodable, Equatable {
    let adapter: String
    let address: String
    let type: String
    let keys: [String]
}

/// A bonding test's fixture, inside `LabCheck.run`: the lab's own mgmt pairing agent stopped (every confirmation
/// must come from msgpipe's agent) and started again afterwards; the phone's controller powered off for Bumble's
/// user channel and powered on (LE) afterwards; a fresh bond directory on the guest's tmpfs (file modes and
/// renames as on a box's disk; the log directory is a 9p share) and a fresh key store for the phone, whose
/// address is the test's own; afterwards the phone's bond is removed from the kernel too.
struct BondingLab {
    let lab: LabCheck
    /// The phone's random static address (its identity).
    let phone: String
    let bonds: String
    let keystore: URL
    /// The text the phone writes (lines format: no newline in it); listen delivers it as one message.
    let text: [UInt8]

    /// Runs `body` as a lab test with this fixture; `phone` is the phone's address, one per test (a key another
    /// test left in the kernel then names another peer).
    static func run(phone: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: (BondingLab) throws -> Void) {
        LabCheck.run(sourceLocation: sourceLocation) { lab in try within(lab, phone: phone, body) }
    }

    /// The fixture of `run(phone:_:)` inside a lab test that is already running (one beside bluetoothd, say).
    static func within(_ lab: LabCheck, phone: String, _ body: (BondingLab) throws -> Void) throws {
        let agent = stopPairingAgent()
        defer { if let agent { startPairingAgent(agent, log: lab.directory.appendingPathComponent("mgmt_autoconfirm.log")) } }
        let slug = lab.directory.lastPathComponent
        let bonds = "/run/msgpipe-lab/\(slug)/bonds"
        try? FileManager.default.removeItem(atPath: "/run/msgpipe-lab/\(slug)")
        let setup = BondingLab(lab: lab, phone: phone, bonds: bonds, keystore: lab.directory.appendingPathComponent("bumble_keys.json"),
            text: Array(Data(LabCheck.randomBytes(3072)).base64EncodedString().utf8))
        defer {
            // The kernel keeps a key loaded from the bond file until Unpair Device: remove it with the file.
            labShell([lab.environment.msgpipe, "bonds", "remove", phone, "--bonds", bonds, "--adapter", "hci0"])
            try? FileManager.default.removeItem(atPath: "/run/msgpipe-lab/\(slug)")
        }
        try LabBumble.withControllers([LabBumble.phoneIndex], lab) { try body(setup) }
    }

    /// Starts `listen` on hci0 with security medium and the bond directory, as a phone app's peer (Nordic UART
    /// Service, lines format), until one message arrived; returns once it advertises.
    func listen(_ label: String) throws -> LabProcess {
        let listen = try lab.start(label, lab.environment.msgpipe, [
            "listen", "--backend", "kernel", "--adapter", "hci0", "--name", "msgpipe-bond", "--security", "medium",
            "--bonds", bonds, "--profile", "nus", "--format", "lines", "--count", "1", "--json", "--verbose"])
        lab.expect(listen.waitForStderr(containing: "advertising"), "\(label) never advertised")
        return listen
    }

    /// The Bumble phone connects to listen, secures the link and writes the text (`arguments`: --repair,
    /// --write-first); at most 150 s. Its report, when it printed one.
    func phone(_ label: String, _ arguments: [String] = []) throws -> (LabProcess, PhoneReport?) {
        let textFile = try lab.file("text.txt", text)
        let phone = try lab.run(label, LabBumble.python ?? "python3", [
            LabBumble.script("bumble_bond.py"), "--transport", "hci-socket:\(LabBumble.phoneIndex)", "--to", "msgpipe-bond",
            "--keystore", keystore.path, "--address", self.phone, "--send", textFile.path, "--json"] + arguments, seconds: 150)
        let report = phone.jsonLines(PhoneReport.self).last
        lab.expect(report != nil, "\(label) printed no JSON report")
        return (phone, report)
    }

    /// listen's end (at most 30 s after the phone's) and its one message: the text.
    func expectDelivered(_ listen: LabProcess, sourceLocation: SourceLocation = #_sourceLocation) {
        listen.wait(seconds: 30)
        lab.expectExit(listen, sourceLocation: sourceLocation)
        lab.expectOneMessage(listen, text, link: "gatt", linkRequired: false, sourceLocation: sourceLocation)
    }

    /// Phone `label` ended with `exit` and secured its link `how` ("paired", "stored key").
    func expectPhone(_ phone: LabProcess, _ report: PhoneReport?, exit: Int32 = 0, how: String?, sourceLocation: SourceLocation = #_sourceLocation) {
        lab.expectExit(phone, .status(exit), sourceLocation: sourceLocation)
        lab.expect(report?.how == how, "\(phone.label): secured \(report?.how ?? "never"), expected \(how ?? "never")", sourceLocation: sourceLocation)
        if exit == 0 {
            lab.expect(report?.bytes == text.count, "\(phone.label): wrote \(report?.bytes.map(String.init) ?? "nothing"), expected \(text.count) bytes", sourceLocation: sourceLocation)
        }
    }

    /// The phone bonds first (a listen of its own, labels `listen-1` and `phone-1`): afterwards both sides hold
    /// keys, and no link is up.
    func bondFirst(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let listen = try self.listen("listen-1")
        let (phone, report) = try self.phone("phone-1")
        expectDelivered(listen, sourceLocation: sourceLocation)
        expectPhone(phone, report, how: "paired", sourceLocation: sourceLocation)
        _ = lab.waitForNoLinks(seconds: 20, endingThem: false)
    }

    /// `msgpipe bonds list --json` of the bond directory.
    func bondsList() throws -> [BondLine] {
        let list = try lab.run("bonds-list", lab.environment.msgpipe, ["bonds", "list", "--bonds", bonds, "--json"], seconds: 30)
        lab.expectExit(list)
        return list.jsonLines(BondLine.self)
    }

    /// The phone's time to an encrypted link, as a note.
    func noteTime(_ what: String, _ report: PhoneReport?) {
        lab.note("bonding: \(what): encrypted in \(report?.encryptedSeconds.map { "\($0) s" } ?? "? s") (\(report?.how ?? "not encrypted"))")
    }

    /// Stops the lab's mgmt agent (SIGTERM, at most 5 s); its executable, to start it again, when it ran.
    static func stopPairingAgent() -> String? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var executable: String?
        for entry in entries {
            guard let pid = Int32(entry),
                (try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == "mgmt_autoconfirm"
            else { continue }
            executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/exe")
            kill(pid, SIGTERM)
            for _ in 0..<50 where FileManager.default.fileExists(atPath: "/proc/\(entry)") { Thread.sleep(forTimeInterval: 0.1) }
        }
        return executable
    }

    /// Starts the lab's mgmt agent again, detached from the test (it outlives the fixture, as it did before).
    static func startPairingAgent(_ executable: String, log: URL) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try? FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        try? process.runWithNoSignalBlocked()
    }
}
