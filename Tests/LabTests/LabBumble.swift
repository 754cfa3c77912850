import Foundation
import Testing

/// Google's Bumble as the lab's phone: its venv interpreter, the peers in Tests/lab, and the controllers it takes
/// from the kernel. Bumble opens a controller with the HCI user channel (`hci-socket:N`), which binds only a
/// controller the kernel has down; `withControllers` takes them and gives them back (powered on, LE) afterwards.
enum LabBumble {
    /// Bumble's venv interpreter (BLELAB_DIR/bumble, a venv of Debian's python3), when it can import bumble.
    static let python: String? = {
        guard LabEnvironment.current != nil else { return nil }
        let path = (ProcessInfo.processInfo.environment["BLELAB_DIR"] ?? "/tmp/blelab") + "/bumble/bin/python"
        return labShell([path, "-c", "import bumble"]).status == 0 ? path : nil
    }()
    /// Why the Bumble tests skip when `python` is nil.
    static let missing = "no Bumble in BLELAB_DIR/bumble (Scripts/blelab.sh --setup-bumble)"
    /// The controller Bumble takes: hci3 when the lab has four, else hci1.
    static let phoneIndex = LabEnvironment.current?.addressD == nil ? 1 : 3

    /// The path of peer `name` (e.g. "bumble_central.py") in Tests/lab.
    static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../lab/\(name)").standardized.path
    }

    /// Takes controllers `indexes` from the kernel (mgmt power off, then down), runs `body`, and gives them back
    /// (LE on, powered on), also when `body` throws; a controller still not up 10 s later fails the test.
    static func withControllers<T>(_ indexes: [Int], _ lab: LabCheck, _ body: () throws -> T) rethrows -> T {
        for index in indexes {
            labShell(["btmgmt", "--index", "\(index)", "power", "off"])
            for _ in 0..<50 where !labShell(["hciconfig", "hci\(index)"]).output.contains("DOWN") { Thread.sleep(forTimeInterval: 0.1) }
            labShell(["hciconfig", "hci\(index)", "down"])
        }
        defer {
            for index in indexes {
                labShell(["btmgmt", "--index", "\(index)", "le", "on"])
                labShell(["btmgmt", "--index", "\(index)", "power", "on"])
                var up = false
                for _ in 0..<50 {
                    up = labShell(["hciconfig", "hci\(index)"]).output.contains("UP RUNNING")
                    if up { break }
                    Thread.sleep(forTimeInterval: 0.2)
                }
                lab.expect(up, "hci\(index) did not come back up after Bumble: \(labShell(["hciconfig", "hci\(index)"]).output)")
            }
        }
        return try body()
    }

    /// Takes the phone's controller from the kernel's host again inside `withControllers`: a bluetoothd powers it
    /// once Bumble let it go, so a test beside bluetoothd takes it again before each phone.
    static func takePhoneController() {
        labShell(["btmgmt", "--index", "\(phoneIndex)", "power", "off"])
        for _ in 0..<50 where !labShell(["hciconfig", "hci\(phoneIndex)"]).output.contains("DOWN") { Thread.sleep(forTimeInterval: 0.1) }
        labShell(["hciconfig", "hci\(phoneIndex)", "down"])
    }

    /// Whether `address` ("XX:XX:...", most significant byte first) is a random static address (top bits 11).
    static func isRandomStatic(_ address: String?) -> Bool {
        guard let address, address.count == 17, let top = UInt8(address.prefix(2), radix: 16) else { return false }
        return top & 0xC0 == 0xC0
    }
}

/// What a Bumble peer (`bumble_central.py`, `bumble_peripheral.py`, `bumble_coc.py` with `--json`) reports on its
/// last line; a field is nil when the peer did not get that far.
struct BumbleReport: Decodable {
    let ownAddress: String?
    let connectedTo: String?
    let connectedFrom: String?
    let subscribedBy: String?
    let mtu: Int?
    let askedMTU: Int?
    let values: Int?
    let bytes: Int?
    let seconds: Double?
    let psm: Int?
    let channelMTU: Int?

    enum CodingKeys: String, CodingKey {
        case mtu, values, bytes, seconds, psm
        case ownAddress = "own_address", connectedTo = "connected_to", connectedFrom = "connected_from"
        case subscribedBy = "subscribed_by", askedMTU = "asked_mtu", channelMTU = "channel_mtu"
    }

    /// The numbers for a note: "MTU M, B bytes, S s" (or "PSM P, ..." over a channel).
    var numbers: String {
        let head = psm.map { "PSM \($0)" } ?? "MTU \(mtu.map(String.init) ?? "?")"
        return "\(head), \(bytes.map(String.init) ?? "?") bytes, \(seconds.map { "\($0)" } ?? "?") s"
    }
}
