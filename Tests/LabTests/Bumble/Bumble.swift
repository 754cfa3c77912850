import Foundation
import Testing

extension Lab {
    /// Google's Bumble as the phone (Tests/lab/bumble_*.py): a whole BLE host that is not Linux's, on one
    /// controller taken from the kernel (hci3, hci1 in a lab with two), msgpipe the box on hci0 (kernel backend,
    /// bluetoothd not running). Each test is a `BumbleLab`; without Bumble each skips with the reason.
    @Suite(.tags(.bumble, .kernel, .hci0)) struct Bumble {}
}

/// A Bumble test's fixture, inside `LabCheck.run`: Bumble's controllers taken from the kernel and given back
/// (`LabBumble.withControllers`), and the files the peers send.
struct BumbleLab {
    let lab: LabCheck

    static let kernel = ["--backend", "kernel"]
    /// Seed 000's layout: service FFF0, the central writes FFF2, subscribes to FFF1.
    static let legacy = ["FFF0", "FFF2", "FFF1"]
    /// Nordic UART Service: the service, RX (the central writes), TX (notify).
    static let nus = ["6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "6E400002-B5A3-F393-E0A9-E50E24DCCA9E", "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"]
    /// Seed 003's 128-bit QX layout (QXMacro.h): the service, the characteristic the central writes, the one it subscribes to.
    static let qx = ["68753a44-4d6f-1226-9c60-0050e4c00000", "68753a44-4d6f-1226-9c60-0050e4c22222", "68753a44-4d6f-1226-9c60-0050e4c11111"]

    /// `custom:SERVICE:WRITE:NOTIFY` of a layout, as `--profile` takes it.
    static func profile(_ layout: [String]) -> String { "custom:" + layout.joined(separator: ":") }

    /// Runs `body` as a lab test with Bumble on `controllers` (the phone's, unless told). It skips when Bumble is
    /// not installed, and with `needsFour` when the lab lacks hci1-hci3 with Bumble on hci3.
    static func run(controllers: [Int] = [LabBumble.phoneIndex], needsFour: Bool = false, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (BumbleLab) throws -> Void) {
        LabCheck.run(sourceLocation: sourceLocation) { lab in
            guard LabBumble.python != nil else { return lab.skip(LabBumble.missing) }
            guard !needsFour || (LabBumble.phoneIndex == 3 && lab.environment.addressC != nil) else {
                return lab.skip("needs hci1, hci2 and hci3 (btvirt -l4)")
            }
            try LabBumble.withControllers(controllers, lab) { try body(BumbleLab(lab: lab)) }
        }
    }

    /// 64 KiB of text without a newline (base64 of random bytes), what the lines format carries as one message.
    static func text(_ count: Int = 65_536) -> [UInt8] {
        Array(Data(LabCheck.randomBytes(count)).base64EncodedString().utf8.prefix(count))
    }

    /// Starts Bumble peer `script` (Tests/lab) on controller `index` with `--json`.
    func startPeer(_ label: String, _ script: String, index: Int = LabBumble.phoneIndex, _ arguments: [String]) throws -> LabProcess {
        try lab.start(label, LabBumble.python ?? "python3", [LabBumble.script(script), "--transport", "hci-socket:\(index)"] + arguments + ["--json"])
    }

    /// Runs Bumble peer `script` to its end (at most `seconds`): the process and its JSON report.
    func peer(_ label: String, _ script: String, index: Int = LabBumble.phoneIndex, _ arguments: [String], seconds: Double = 180) throws
        -> (LabProcess, BumbleReport?) {
        let phone = try startPeer(label, script, index: index, arguments)
        phone.wait(seconds: seconds)
        return (phone, report(phone))
    }

    /// A peer's report (its last JSON line); its absence fails the test.
    func report(_ phone: LabProcess) -> BumbleReport? {
        let report = phone.jsonLines(BumbleReport.self).last
        lab.expect(report != nil, "\(phone.label) printed no JSON report")
        return report
    }

    /// Starts msgpipe (`listen` or `send`, kernel backend) with `arguments`; returns once it advertises.
    func advertising(_ label: String, _ arguments: [String]) throws -> LabProcess {
        let process = try lab.start(label, lab.environment.msgpipe, [arguments[0]] + Self.kernel + Array(arguments.dropFirst()))
        lab.expect(process.waitForStderr(containing: "advertising"), "\(label) never advertised")
        return process
    }

    /// `listen --adapter hci0 --name NAME --count 1 --json` with `arguments` (profile, format), advertising.
    func listen(_ name: String, _ arguments: [String]) throws -> LabProcess {
        try advertising("listen", ["listen", "--adapter", "hci0", "--name", name, "--count", "1", "--json"] + arguments)
    }

    /// Bumble's `bumble_central.py --send` into `listen` (profile `layout` or nus, `format`) at ATT MTU `mtu`:
    /// both exit 0, listen's one message is `bytes`, Bumble connected from a random static address and got the
    /// MTU it asked for. Its numbers go into a note.
    func centralIntoListen(_ tag: String, profile: String, layout: [String], format: String, mtu: Int, _ bytes: [UInt8], what: String,
        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = try lab.file("\(tag).bin", bytes)
        let listen = try lab.start("listen", lab.environment.msgpipe, ["listen"] + Self.kernel + [
            "--adapter", "hci0", "--name", "msgpipe-bb\(tag)", "--count", "1", "--json", "--profile", profile, "--format", format])
        // Bumble starts beside listen: its start-up (Python's imports, tens of seconds in the TCG guest) overlaps
        // listen's, and its active scan finds the name once listen advertises.
        let phone = try startPeer("bumble", "bumble_central.py", [
            "--to", "msgpipe-bb\(tag)", "--mtu", "\(mtu)", "--service", layout[0], "--write", layout[1], "--notify", layout[2],
            "--format", format, "--send", file.path])
        lab.expect(listen.waitForStderr(containing: "advertising"), "listen never advertised", sourceLocation: sourceLocation)
        phone.wait(seconds: 180)
        let report = report(phone)
        listen.wait(seconds: 30)
        lab.expectExit(phone, sourceLocation: sourceLocation)
        lab.expectExit(listen, sourceLocation: sourceLocation)
        lab.expectOneMessage(listen, bytes, link: "gatt", linkRequired: false, sourceLocation: sourceLocation)
        lab.expect(LabBumble.isRandomStatic(report?.ownAddress), "Bumble's own address \(report?.ownAddress ?? "unknown") is not random static",
            sourceLocation: sourceLocation)
        lab.expect(report?.mtu == mtu && report?.askedMTU == mtu, "ATT_MTU \(report?.mtu.map(String.init) ?? "unknown"), asked for \(mtu)",
            sourceLocation: sourceLocation)
        lab.note("bumble: \(what): \(report?.numbers ?? "no numbers")")
    }

    /// Whether `process`'s standard error has a line saying it connected to `address` (a random one).
    static func connected(_ process: LabProcess, to address: String?, random: Bool) -> Bool {
        guard let address else { return false }
        return process.stderr.split(separator: "\n").contains {
            $0.contains("connected to") && $0.uppercased().contains(address.uppercased()) && (!random || $0.contains("(random)"))
        }
    }
}
