import BLELink
import CBluetooth
import Foundation
import Glibc
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
    /// (LE on, powered on), also when `body` throws; a controller still not up 10 s later fails the test. All
    /// in-process (mgmt and HCI ioctls): a btmgmt or hciconfig run cost 0.3-1 s in the TCG guest.
    static func withControllers<T>(_ indexes: [Int], _ lab: LabCheck, _ body: () throws -> T) rethrows -> T {
        for index in indexes { take(index) }
        defer {
            // A link to Bumble's controller ends first (the kernel's idle disconnect, about 2 s): powered on meanwhile,
            // btvirt forgets the link on its side, and the other controller's Disconnect then never completes.
            _ = lab.waitForNoLinks(seconds: 20, endingThem: false)
            for index in indexes {
                lab.expect(giveBack(index), "hci\(index) did not come back up after Bumble: \(labShell(["hciconfig", "hci\(index)"]).output)")
            }
        }
        return try body()
    }

    /// Takes the phone's controller from the kernel's host again inside `withControllers`: a bluetoothd powers it
    /// once Bumble let it go, so a test beside bluetoothd takes it again before each phone.
    static func takePhoneController() { take(phoneIndex) }

    /// Controller `index` powered off through mgmt, then down (HCIDEVDOWN, what `hciconfig down` does), so that
    /// Bumble's HCI user channel can bind it.
    private static func take(_ index: Int) {
        _ = try? ManagementSocket().execute(.setPowered(UInt16(index), false), timeout: .seconds(10))
        // Set Powered's reply may come before the kernel closed the device: at most 5 s for HCI_UP to clear.
        let deadline = Date(timeIntervalSinceNow: 5)
        while (flags(index) ?? 0) & hciUp != 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        withHCISocket { ioctl($0, UInt(0x4004_48CA), Int32(index)) }  // HCIDEVDOWN, _IOW('H', 202, int)
    }

    /// Controller `index` given back to the kernel's host (LE on, powered on through mgmt): true once it is up and
    /// running, at most 10 s.
    private static func giveBack(_ index: Int) -> Bool {
        if let socket = try? ManagementSocket() {
            _ = try? socket.execute(.setLowEnergy(UInt16(index), true))
            _ = try? socket.execute(.setPowered(UInt16(index), true), timeout: .seconds(10))
        }
        let deadline = Date(timeIntervalSinceNow: 10)
        repeat {
            if (flags(index) ?? 0) & (hciUp | hciRunning) == hciUp | hciRunning { return true }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return false
    }

    /// HCI_UP and HCI_RUNNING in `struct hci_dev_info`'s flags (`hciconfig` prints them as "UP RUNNING").
    private static let hciUp: UInt32 = 1 << 0, hciRunning: UInt32 = 1 << 2

    /// Controller `index`'s device flags (HCIGETDEVINFO, _IOR('H', 211, int)); nil when there is no such controller.
    private static func flags(_ index: Int) -> UInt32? {
        // struct hci_dev_info: dev_id (2), name (8), bdaddr (6), flags (4) at offset 16, ...: 92 bytes in all.
        var info = [UInt8](repeating: 0, count: 128)
        info[0] = UInt8(index & 0xff)
        info[1] = UInt8(index >> 8)
        let status = withHCISocket { fd in info.withUnsafeMutableBytes { ioctl(fd, UInt(0x8004_48D3), $0.baseAddress!) } }
        guard status == 0 else { return nil }
        return UInt32(info[16]) | UInt32(info[17]) << 8 | UInt32(info[18]) << 16 | UInt32(info[19]) << 24
    }

    /// Runs `body` on a raw HCI socket (unbound: for the device ioctls); -1 when there is none.
    @discardableResult
    private static func withHCISocket(_ body: (Int32) -> Int32) -> Int32 {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        return body(fd)
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
