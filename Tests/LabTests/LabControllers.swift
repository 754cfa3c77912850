import BLELink
import CBluetooth
import Glibc

/// The controllers' state the fixture checks before and after each test, read in-process: the kernel's
/// connection list (HCIGETCONNLIST, what `hcitool con` prints) and mgmt's advertising state (what `btmgmt advinfo`
/// prints). A query costs well under a millisecond; each `hcitool`/`btmgmt` run cost 0.3-1 s in the TCG guest.
enum LabControllers {
    /// One LE link of one controller.
    struct Link: CustomStringConvertible {
        let index: Int
        let handle: UInt16
        let peer: BluetoothAddress
        var description: String { "hci\(index) handle \(handle) to \(peer)" }
    }

    /// The LE links of controller `index` (nil: of every controller). A missing controller has none.
    static func leLinks(index: Int? = nil) -> [Link] {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        return (index.map { [$0] } ?? Array(LabCheck.indexes)).flatMap { links(fd: fd, index: $0) }
    }

    /// HCIGETCONNLIST (_IOR('H', 212, int)) on a raw HCI socket: `struct hci_conn_list_req` (dev_id, conn_num)
    /// then `conn_num` 16-byte `struct hci_conn_info` (handle, bdaddr, type, out, state, link_mode).
    private static func links(fd: Int32, index: Int) -> [Link] {
        let room = 20
        var request = [UInt8](repeating: 0, count: 4 + 16 * room)
        request[0] = UInt8(index & 0xff)
        request[1] = UInt8(index >> 8)
        request[2] = UInt8(room)
        let status = request.withUnsafeMutableBytes { ioctl(fd, UInt(0x8004_48D4), $0.baseAddress!) }
        guard status == 0 else { return [] }
        let count = min(Int(request[2]) | Int(request[3]) << 8, room)
        return (0..<count).compactMap { n in
            let info = Array(request[(4 + 16 * n)..<(4 + 16 * n + 16)])
            guard info[8] == 0x80 else { return nil }  // LE_LINK
            return Link(index: index, handle: UInt16(info[0]) | UInt16(info[1]) << 8, peer: BluetoothAddress(littleEndianBytes: Array(info[2..<8])))
        }
    }

    /// Per controller that has any: its advertising instances and whether its own advertising (the setting) is
    /// on. A controller that is missing or down is left out.
    static func advertising() -> [Int: (instances: Int, settingOn: Bool)] {
        guard let socket = try? ManagementSocket() else { return [:] }
        var found: [Int: (instances: Int, settingOn: Bool)] = [:]
        for index in LabCheck.indexes {
            let mgmtIndex = UInt16(index)
            guard let infoBytes = try? socket.execute(.readControllerInfo(mgmtIndex), timeout: .seconds(2)),
                let info = try? ControllerInfo(decoding: infoBytes[...])
            else { continue }
            // Read Advertising Features (0x003D): flags(4), max data(1), max scan response(1), max instances(1),
            // number of instances(1), the instances.
            let features = try? socket.execute(
                ManagementCommand(opcode: 0x003D, controllerIndex: mgmtIndex, name: "Read Advertising Features"), timeout: .seconds(2))
            let instances = features.flatMap { $0.count > 7 ? Int($0[7]) : nil } ?? 0
            let settingOn = info.currentSettings.contains(.advertising)
            if instances > 0 || settingOn { found[index] = (instances, settingOn) }
        }
        return found
    }

    /// Turns each controller's own advertising off and removes its instances, where it has any.
    static func removeAdvertising() {
        let held = advertising()
        guard !held.isEmpty, let socket = try? ManagementSocket() else { return }
        for (index, state) in held {
            if state.settingOn { _ = try? socket.execute(.setAdvertising(UInt16(index), 0)) }
            if state.instances > 0 { _ = try? socket.execute(.removeAdvertising(UInt16(index), instance: 0)) }
        }
    }

    /// Removes controller `index`'s advertising instances (a peer that was killed leaves its instance behind).
    static func removeInstances(index: Int) {
        _ = try? ManagementSocket().execute(.removeAdvertising(UInt16(index), instance: 0))
    }
}
