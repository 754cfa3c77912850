import Glibc

/// The downlink's journal: one file per message in a directory, written and fsync'd (file and directory)
/// before the broker's PUBACK goes out, removed once a central acknowledged the message. A file is
/// `NNNNNNNNNNNNNNNNNNNN.down` (the arrival number, so names sort by arrival) holding: id length (u32 LE), id
/// (UTF-8), peer length (u32 LE, 0xFFFFFFFF: no peer), peer, payload.
struct DownlinkJournal: Sendable {
    let directory: String

    init(directory: String) throws(MQTTGatewayError) {
        self.directory = directory
        if mkdir(directory, 0o700) != 0, errno != EEXIST { throw Self.failure("create \(directory)") }
    }

    /// The messages still in the journal, in arrival order; unreadable files are skipped and named.
    func pending() -> (messages: [MQTTDownlink.Message], unreadable: [String]) {
        guard let dir = opendir(directory) else { return ([], [directory]) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasSuffix(".down") { names.append(name) }
        }
        var messages: [MQTTDownlink.Message] = []
        var unreadable: [String] = []
        for name in names.sorted() {
            if let message = read(name) { messages.append(message) } else { unreadable.append(name) }
        }
        return (messages, unreadable)
    }

    /// The next arrival number: above every file's.
    func nextNumber() -> UInt64 {
        (pending().messages.compactMap { UInt64($0.journalName.prefix(20)) }.max() ?? 0) + 1
    }

    /// Writes `message` durably (temporary file, fsync, rename, directory fsync).
    func store(_ message: MQTTDownlink.Message) throws(MQTTGatewayError) {
        var bytes: [UInt8] = []
        func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) } }
        u32(UInt32(message.id.utf8.count))
        bytes += message.id.utf8
        if let peer = message.peer {
            u32(UInt32(peer.utf8.count))
            bytes += peer.utf8
        } else {
            u32(.max)
        }
        bytes += message.bytes
        let path = "\(directory)/\(message.journalName)"
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("open \(temporary)") }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                close(fd)
                throw Self.failure("write \(temporary)")
            }
            written += result
        }
        guard fsync(fd) == 0 else {
            close(fd)
            throw Self.failure("fsync \(temporary)")
        }
        close(fd)
        guard rename(temporary, path) == 0 else { throw Self.failure("rename \(temporary)") }
        try syncDirectory()
    }

    /// Removes a message a central acknowledged.
    func remove(_ message: MQTTDownlink.Message) throws(MQTTGatewayError) {
        guard unlink("\(directory)/\(message.journalName)") == 0 || errno == ENOENT else {
            throw Self.failure("remove \(message.journalName)")
        }
        try syncDirectory()
    }

    private func read(_ name: String) -> MQTTDownlink.Message? {
        let fd = open("\(directory)/\(name)", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        var offset = 0
        func u32() -> UInt32? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            return (0 ..< 4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
        }
        func text(_ length: UInt32) -> String? {
            guard Int(length) <= bytes.count - offset else { return nil }
            defer { offset += Int(length) }
            return String(decoding: bytes[offset ..< offset + Int(length)], as: UTF8.self)
        }
        guard let idLength = u32(), let id = text(idLength), let peerLength = u32() else { return nil }
        var peer: String?
        if peerLength != .max {
            guard let value = text(peerLength) else { return nil }
            peer = value
        }
        return MQTTDownlink.Message(id: id, peer: peer, bytes: Array(bytes[offset...]), journalName: name)
    }

    private func syncDirectory() throws(MQTTGatewayError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure("open \(directory)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Self.failure("fsync \(directory)") }
    }

    private static func failure(_ operation: String) -> MQTTGatewayError {
        .journal("\(operation): \(String(cString: strerror(errno)))")
    }
}
