import Glibc

/// Finds out whether another process already listens on an adapter's ATT channel. The kernel lets a second
/// socket bind and listen on CID 4 without EADDRINUSE, and then hands every central to the first listener:
/// msgpipe would wait forever. The L2CAP table in debugfs and a running bluetoothd tell.
enum ATTChannelOwner {
    /// The kernel's L2CAP channel table (root only; debugfs must be mounted).
    static let debugfsTable = "/sys/kernel/debug/bluetooth/l2cap"
    /// `BT_LISTEN` in the kernel's socket state enumeration.
    static let listenState = "4"

    /// True when `table` (the debugfs format: `src (type) dst (type) state psm scid dcid imtu omtu sec mode`)
    /// has a listening channel on CID 4 bound to `address` or to any address.
    static func tableHasListener(_ table: String, on address: BluetoothAddress) -> Bool {
        table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 7, fields[4] == listenState, fields[6] == "0x0004" else { return false }
            return BluetoothAddress(fields[0]).map { $0 == address || $0 == .any } ?? false
        }
    }

    /// Throws ``BluetoothError/attChannelInUse(adapter:)`` when the debugfs table shows a listener on
    /// `address`'s ATT channel, or (without debugfs) when bluetoothd runs.
    static func requireFree(address: BluetoothAddress, adapterName: String) throws(BluetoothError) {
        if let table = readSmallFile(debugfsTable) {
            if tableHasListener(table, on: address) { throw .attChannelInUse(adapter: adapterName) }
        } else if processIsRunning("bluetoothd") {
            throw .attChannelInUse(adapter: adapterName)
        }
    }

    /// The file's text (first 1 MiB), or nil when it cannot be opened.
    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// True when a process named `name` (its /proc/PID/comm) runs.
    static func processIsRunning(_ name: String) -> Bool {
        guard let directory = opendir("/proc") else { return false }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let pid = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard !pid.isEmpty, pid.allSatisfy(\.isNumber) else { continue }
            if readSmallFile("/proc/\(pid)/comm")?.split(separator: "\n").first.map(String.init) == name {
                return true
            }
        }
        return false
    }
}
