import Framing
import FoundationEssentials
import Glibc
import Secure

/// Where `msgpipe listen` puts each received message: its raw bytes on standard output, a file of its own
/// in a directory, or one JSON line on standard output. Every message is written out completely before the
/// next one (and before the call returns), so a consumer sees whole messages in arrival order.
final class MessageSink {
    /// The three output modes of `listen`.
    enum Mode {
        /// Raw bytes; with `newline`, each message is followed by one (the lines format, whose messages are
        /// lines without their terminator).
        case stdout(newline: Bool = false)
        case directory(String)
        case json
    }

    private let mode: Mode
    private var output = OutputBuffer()
    /// Messages written so far by this process.
    private(set) var count = 0
    /// The number of the next file in each directory written (continues after the files already there).
    private var nextFileNumbers: [String: Int] = [:]

    init(_ mode: Mode) throws(FileIOError) {
        self.mode = mode
        if case let .directory(path) = mode {
            try Self.makeDirectory(path)
            nextFileNumbers[path] = try Self.highestFileNumber(in: path) + 1
        }
    }

    /// Writes one message; `messageID` is Transport's id (nil for the plain formats), `connection` the
    /// 1-based number of the connection it arrived on, `peer` the central's address (or socket) if known,
    /// `link` what carried it ("gatt" or "l2cap") if known, `sender` the authorized key that sealed it (end to end).
    /// With `--out-dir`, `folder` (a peer's, ``folderName(_:)``) puts the file in a directory of its own there.
    func write(
        _ body: [UInt8], messageID: UInt32?, connection: Int, peer: String?, link: String? = nil,
        sender: AuthorizedKeys.Entry? = nil, parameters: LinkParameterFields = LinkParameterFields(nil),
        folder: String? = nil
    ) throws(FileIOError) {
        count += 1
        switch mode {
        case let .stdout(newline):
            try output.append(body)
            if newline { try output.append([0x0A]) }
            try output.flush()
        case let .directory(path):
            // End to end with a key list: a directory per key name (names never start with a dot).
            // Several --to: a directory per peer.
            let base = folder.map { path + "/" + $0 } ?? path
            try writeFile(body, in: sender?.name.map { base + "/" + $0 } ?? base)
        case .json:
            let line = MessageLine(
                index: count, connection: connection, peer: peer, link: link, id: OrNull(messageID), bytes: body.count,
                crc32: Self.hex32(CRC32.checksum(body)), data: Data(body).base64EncodedString(),
                peerKey: sender?.key.text, peerName: sender?.name, intervalMilliseconds: parameters.intervalMilliseconds,
                latency: parameters.latency, supervisionTimeoutMilliseconds: parameters.supervisionTimeoutMilliseconds, changedByPeer: parameters.changedByPeer,
                phy: parameters.phy, mtu: parameters.mtu)
            try output.append((JSONLine.text(line) + "\n").utf8)
            try output.flush()
        }
    }

    /// The directory name of a `--to` peer under `--out-dir`: its text with every character but letters,
    /// digits, '.', '-' and '_' made '_', never starting with a dot ("unix:/tmp/a.sock" is "unix__tmp_a.sock").
    static func folderName(_ peer: String) -> String {
        let kept = peer.map { character -> Character in
            character.isASCII && (character.isLetter || character.isNumber || "._-".contains(character)) ? character : "_"
        }
        let name = String(kept)
        return name.hasPrefix(".") ? "_" + name.dropFirst() : name
    }

    /// 8 lowercase hex digits.
    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The file name of message number `number` in directory mode: sortable by arrival.
    static func fileName(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits + ".msg"
    }

    /// Writes to a hidden temporary name first and renames it, so a watcher never sees a partial file.
    private func writeFile(_ body: [UInt8], in directory: String) throws(FileIOError) {
        let number: Int
        if let next = nextFileNumbers[directory] {
            number = next
        } else {
            try Self.makeDirectory(directory)
            number = try Self.highestFileNumber(in: directory) + 1
        }
        nextFileNumbers[directory] = number + 1
        let name = Self.fileName(number)
        let final = directory + "/" + name
        let temporary = directory + "/." + name + ".part"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Self.error("cannot create \(temporary)") }
        var file = OutputBuffer(descriptor: descriptor)
        do throws(FileIOError) {
            try file.append(body)
            try file.flush()
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        guard rename(temporary, final) == 0 else { throw Self.error("cannot rename \(temporary) to \(final)") }
    }

    private static func makeDirectory(_ path: String) throws(FileIOError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component + "/"
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { throw error("cannot create directory \(prefix)") }
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw FileIOError(description: "\(path) is not a directory", exitCode: 73)
        }
    }

    /// The highest N among files named like ``fileName(_:)`` in `path` (0 when there are none).
    private static func highestFileNumber(in path: String) throws(FileIOError) -> Int {
        guard let directory = opendir(path) else { throw error("cannot read directory \(path)") }
        defer { closedir(directory) }
        var highest = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name.hasSuffix(".msg"), !name.hasPrefix("."), let number = Int(name.dropLast(4)) else { continue }
            highest = max(highest, number)
        }
        return highest
    }

    private static func error(_ what: String) -> FileIOError {
        FileIOError(description: "\(what): \(String(cString: strerror(errno)))", exitCode: 73)
    }
}

/// One `listen --json` line: {"bytes":B,"connection":C,"crc32":"8 hex digits","data":"base64","id":ID,"index":N,
/// "link":"gatt"|"l2cap","peer":"ADDRESS","peer_key":"msgpipe-x25519-public:HEX","peer_name":"NAME"}.
struct MessageLine: Encodable {
    let index: Int
    let connection: Int
    /// The peer's address (or socket path) it came from; absent where unknown.
    let peer: String?
    /// What carried the message: "gatt" or "l2cap"; absent where unknown (a peripheral's msgpipe session).
    let link: String?
    /// Transport's message id; null (not absent) for the plain formats.
    let id: OrNull<UInt32>
    let bytes: Int
    let crc32: String
    let data: String
    /// End to end (`--authorized-keys`, `--peer-key`): the public key that sealed the message; absent otherwise.
    let peerKey: String?
    /// The name of `peerKey` in the authorized-keys file; absent without one.
    let peerName: String?
    /// As a Bluetooth central (``LinkParameterFields``): the requested interval range, latency and timeout,
    /// the PHY and the MTU; each absent where unknown.
    var intervalMilliseconds: [Double]? = nil
    var latency: Int? = nil
    var supervisionTimeoutMilliseconds: Int? = nil
    var changedByPeer: Bool? = nil
    var phy: String? = nil
    var mtu: Int? = nil

    enum CodingKeys: String, CodingKey {
        case index, connection, peer, link, id, bytes, crc32, data, latency, phy, mtu
        case peerKey = "peer_key"
        case peerName = "peer_name"
        case intervalMilliseconds = "interval_ms"
        case supervisionTimeoutMilliseconds = "supervision_timeout_ms"
        case changedByPeer = "changed_by_peer"
    }
}
