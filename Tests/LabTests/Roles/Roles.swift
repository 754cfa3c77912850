import Foundation
import Testing

extension Tag {
    /// The roles section: the peripheral sends, the central receives, several centrals at once.
    @Tag static var roles: Self
}

extension Lab {
    /// Checks 25-28: the peripheral sends, the central receives, several centrals at once. Kernel backend, bluetoothd
    /// not running; every command names the backend (the CLI picks bluez by itself when bluetoothd runs). hci0 is
    /// "A" (the peripheral unless a test says otherwise), hci1-hci3 "B"-"D". A test whose time another's note
    /// compares against copies its `--json` output to `OUT/t25*.json`; a note reads it when that test ran before
    /// (Swift Testing runs a serialized suite in file and line order), else prints "?". No verdict depends on it.
    @Suite(.tags(.roles, .kernel)) struct Roles {
        static let kernel = ["--backend", "kernel"]
        static let mebibyte = 1 << 20
        static var hasC: Bool { LabEnvironment.current?.addressC != nil }
        static var hasD: Bool { LabEnvironment.current?.addressD != nil }
    }
}

extension Lab.Roles {
    /// A central of a push: its adapter and its public address (what send --json names it by).
    typealias Central = (adapter: String, address: String)

    /// One central on several peripherals: `send --name NAME FILE` on hci1, hci2, ... (one per peripheral), then
    /// `listen --to NAME ... --count N --json` (plus `options`) on hci0 until it has every message (`seconds` at
    /// most). Judges that all exit 0; returns listen.
    static func listenToPeripherals(_ lab: LabCheck, _ peripherals: [(name: String, file: URL)], _ options: [String], seconds: Double) throws -> LabProcess {
        let env = lab.environment
        let sends = try zip(1..., peripherals).map { h, peripheral in
            let send = try lab.start("send-\(peripheral.name)", env.msgpipe, ["send"] + kernel + ["--adapter", "hci\(h)", "--name", peripheral.name,
                peripheral.file.path])
            lab.expect(send.waitForStderr(containing: "advertising"), "send --name \(peripheral.name) on hci\(h) never advertised")
            return send
        }
        let listen = try lab.run("listen-\(peripherals.count)", env.msgpipe, ["listen"] + kernel + ["--adapter", "hci0"]
            + peripherals.flatMap { ["--to", $0.name] } + options + ["--count", "\(peripherals.count)", "--json"], seconds: seconds)
        for send in sends { send.wait(seconds: 60) }
        lab.expectExit(listen)
        for send in sends { lab.expectExit(send) }
        return listen
    }

    /// Starts `listen --to NAME` (plus `options`) on each of `centrals`, labelled "listen-ADAPTER" (and `suffix`),
    /// each once the one before it said it connected (at most 60 s: a central that never connects fails on its
    /// exit). Started together, two Create Connections once hung in the emulator; a peripheral pushes only once all
    /// subscribed, so the transfer times are those of centrals served at once.
    static func startCentrals(_ lab: LabCheck, to name: String, _ centrals: [Central], _ options: [String], suffix: String = "") throws -> [LabProcess] {
        var listens: [LabProcess] = []
        for central in centrals {
            if let previous = listens.last { _ = previous.waitForStderr(containing: "connected to") }
            listens.append(try lab.start("listen-\(central.adapter)\(suffix)", lab.environment.msgpipe, ["listen"] + kernel + [
                "--adapter", central.adapter, "--to", name] + options))
        }
        return listens
    }

    /// Polls `condition` every 0.2 s until it holds (true) or `seconds` passed (false).
    @discardableResult
    static func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !condition() {
            if Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return true
    }

    /// Whether a JSON line's `peer` names the central at `address` (msgpipe adds its address type: "ADDRESS (public)").
    static func names(_ peer: String?, _ address: String) -> Bool { peer?.hasPrefix(address) ?? false }

    /// For notes: `bytes` per second over `seconds` as an integer, "?" when a number is missing.
    static func bps(_ bytes: Int, _ seconds: Double?) -> String {
        guard let seconds, seconds > 0 else { return "?" }
        return "\(Int(Double(bytes) / seconds))"
    }

    /// For notes: `a / b` with two decimals, "?" when a number is missing.
    static func ratio(_ a: Double?, _ b: Double?) -> String {
        guard let a, let b, b > 0 else { return "?" }
        return String(format: "%.2f", a / b)
    }

    /// For notes: a number of seconds as send --json printed it, "?" when missing.
    static func text(_ seconds: Double?) -> String { seconds.map { "\($0)" } ?? "?" }
}

/// One `msgpipe bench --json` row of a real link (the fields the lab judges): one per central, and with several
/// centrals the aggregate (`central` "all"). Linux does not tell every value: "unknown" decodes as nil.
struct BenchLine: Decodable {
    /// The central's index, or "all".
    let central: String
    let direction: String?
    let peer: String?
    let phy: String?
    let mtu: Int?
    let messagesDelivered: Int?
    let goodputKbps: Double?
    let limitKbps: Double?
    let completed: Bool?

    private enum Keys: String, CodingKey {
        case central, direction, peer, phy, mtu, completed
        case messagesDelivered = "messages_delivered"
        case goodputKbps = "goodput_kbps"
        case limitKbps = "limit_kbps"
    }

    init(from decoder: any Decoder) throws {
        let row = try decoder.container(keyedBy: Keys.self)
        if let index = try? row.decode(Int.self, forKey: .central) { central = "\(index)" } else { central = try row.decode(String.self, forKey: .central) }
        direction = try? row.decode(String.self, forKey: .direction)
        peer = try? row.decode(String.self, forKey: .peer)
        phy = try? row.decode(String.self, forKey: .phy)
        mtu = try? row.decode(Int.self, forKey: .mtu)
        messagesDelivered = try? row.decode(Int.self, forKey: .messagesDelivered)
        goodputKbps = try? row.decode(Double.self, forKey: .goodputKbps)
        limitKbps = try? row.decode(Double.self, forKey: .limitKbps)
        completed = try? row.decode(Bool.self, forKey: .completed)
    }

    /// Whether `phy` is a PHY as msgpipe names one: "1m", "2m", "coded", "tx X / rx Y" (each a word), or "unknown"
    /// (the kernel knows the PHY only from an LE PHY Update Complete).
    var phyIsNamed: Bool {
        guard let phy else { return false }
        if ["1m", "2m", "coded", "unknown"].contains(phy) { return true }
        let word = { (part: Substring) in !part.isEmpty && part.allSatisfy { $0.isLowercase || $0.isNumber } }
        let parts = phy.split(separator: " ", omittingEmptySubsequences: false)
        return parts.count == 5 && parts[0] == "tx" && word(parts[1]) && parts[2] == "/" && parts[3] == "rx" && word(parts[4])
    }
}
