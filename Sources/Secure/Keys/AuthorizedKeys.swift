/// The X25519 public keys a server accepts, each with a name: an authorized-keys file, one `KEY NAME` a line
/// (PROTOCOL.md 6.1 has the grammar). `#` comments and blank lines are ignored; a name is 1-64 of
/// `A-Z a-z 0-9 . _ - @`, not starting with `.`. Pure: any input gives a value or an ``AuthorizedKeysError``
/// naming the line, never a trap; reading the file and checking its permissions is `KeyFiles`' (ExchangePosix).
/// ```swift
/// let keys = try AuthorizedKeys(parsing: fileText)      // "msgpipe-x25519-public:<64 hex>  till-1", ...
/// let name = keys.entry(for: clientKey)?.name            // nil: not a known phone
/// ```
public struct AuthorizedKeys: Sendable, Equatable {
    /// One accepted key. `name` is nil for a key pinned outside a file (`--peer-key`).
    public struct Entry: Sendable, Equatable {
        public let name: String?
        public let key: PeerPublicKey

        public init(name: String?, key: PeerPublicKey) {
            self.name = name
            self.key = key
        }

        /// The name, or the key's text when it has none: what logs and `peer_key` fields show.
        public var label: String { name ?? key.text }
    }

    /// The longest line accepted, in bytes (a key line is at most about 160).
    public static let maximumLineLength = 1024
    /// The longest name, in bytes.
    public static let maximumNameLength = 64

    /// The keys in file order.
    public private(set) var entries: [Entry] = []
    private var indexByKey: [[UInt8]: Int] = [:]

    /// No key: a server with it refuses every client.
    public init() {}

    /// The keys of `entries`; throws ``AuthorizedKeysError/duplicateKey(line:firstLine:)`` or
    /// ``AuthorizedKeysError/duplicateName(_:line:firstLine:)`` (lines count entries from 1 here).
    public init(_ entries: [Entry]) throws(AuthorizedKeysError) {
        var (keyLines, nameLines): ([[UInt8]: Int], [String: Int]) = ([:], [:])
        for (offset, entry) in entries.enumerated() {
            try add(entry, line: offset + 1, keyLines: &keyLines, nameLines: &nameLines)
        }
    }

    /// Parses the text of an authorized-keys file. Throws ``AuthorizedKeysError`` naming the line (from 1) of
    /// the first bad line, or both lines of a duplicate key or name.
    public init(parsing text: some Collection<UInt8>) throws(AuthorizedKeysError) {
        var (keyLines, nameLines): ([[UInt8]: Int], [String: Int]) = ([:], [:])
        var number = 0
        var rest = Array(text)[...]
        while !rest.isEmpty {
            number += 1
            let end = rest.firstIndex(of: 0x0A) ?? rest.endIndex
            var line = rest[..<end]
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            if line.last == 0x0D { line = line.dropLast() }
            guard let entry = try Self.entry(line, number: number) else { continue }
            try add(entry, line: number, keyLines: &keyLines, nameLines: &nameLines)
        }
    }

    /// Parses the text of an authorized-keys file (see the byte form).
    public init(parsing text: String) throws(AuthorizedKeysError) {
        try self.init(parsing: Array(text.utf8))
    }

    /// The entry holding `key`, if the set accepts it.
    public func entry(for key: PeerPublicKey) -> Entry? {
        indexByKey[key.bytes].map { entries[$0] }
    }

    /// Whether the set accepts `key`.
    public func contains(_ key: PeerPublicKey) -> Bool { indexByKey[key.bytes] != nil }

    /// The entries of this set whose key `other` no longer accepts (what a reload revokes).
    public func revoked(by other: AuthorizedKeys) -> [Entry] {
        entries.filter { !other.contains($0.key) }
    }

    public static func == (lhs: AuthorizedKeys, rhs: AuthorizedKeys) -> Bool { lhs.entries == rhs.entries }

    private mutating func add(
        _ entry: Entry, line: Int, keyLines: inout [[UInt8]: Int], nameLines: inout [String: Int]
    ) throws(AuthorizedKeysError) {
        let bytes = entry.key.bytes
        if let first = keyLines[bytes] { throw .duplicateKey(line: line, firstLine: first) }
        if let name = entry.name, let first = nameLines[name] {
            throw .duplicateName(name, line: line, firstLine: first)
        }
        keyLines[bytes] = line
        if let name = entry.name { nameLines[name] = line }
        indexByKey[bytes] = entries.count
        entries.append(entry)
    }

    /// The entry a line holds; nil for a blank or comment line.
    private static func entry(_ line: some Collection<UInt8>, number: Int) throws(AuthorizedKeysError) -> Entry? {
        guard line.count <= maximumLineLength else {
            throw .badLine(line: number, reason: "longer than \(maximumLineLength) bytes")
        }
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = line.first(where: { !isBlank($0) }), first != UInt8(ascii: "#") else { return nil }
        if let bad = line.first(where: { !isBlank($0) && !(0x21...0x7E).contains($0) }) {
            throw .badLine(line: number, reason: "byte 0x\(String(bad, radix: 16)) is not printable ASCII")
        }
        let fields = line.split(whereSeparator: isBlank).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 2 else {
            throw .badLine(line: number, reason: "expected a key and a name, found \(fields.count) fields")
        }
        let key: PeerPublicKey
        do {
            key = try PeerPublicKey(text: fields[0])
        } catch {
            throw .badLine(line: number, reason: "\(error)")
        }
        let name = fields[1]
        guard name.utf8.count <= maximumNameLength, name.utf8.allSatisfy({ isNameByte($0) }), !name.hasPrefix(".")
        else {
            throw .badLine(
                line: number,
                reason: "the name '\(name)' must be 1 to \(maximumNameLength) of A-Z a-z 0-9 . _ - @, not starting with '.'")
        }
        return Entry(name: name, key: key)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
            UInt8(ascii: "@"):
            true
        default: false
        }
    }
}
