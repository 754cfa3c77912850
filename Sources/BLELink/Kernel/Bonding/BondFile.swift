/// The keys of the peers bonded with one adapter, as kept on disk: a text file of one line per key.
///
///     msgpipe-bonds 1
///     ltk C0:11:22:33:44:55 random type=02 central=0 size=16 ediv=0000 rand=0000000000000000 value=<32 hex digits>
///     irk C0:11:22:33:44:55 random value=<32 hex digits>
///     csrk C0:11:22:33:44:55 random type=01 value=<32 hex digits>
///
/// Every field is in that order and spelled exactly so; anything else is refused with the line number.
/// Decoding is pure (no I/O): ``BondStore`` reads and writes the file.
public struct BondFile: Equatable, Sendable {
    /// The first line of every bond file.
    public static let header = "msgpipe-bonds 1"
    /// The most keys of each kind kept; a file with more is refused as corrupt.
    public static let maximumKeys = 4096
    /// The largest file read.
    public static let maximumSize = 1 << 20

    public private(set) var longTermKeys: [LongTermKey] = []
    public private(set) var identityResolvingKeys: [IdentityResolvingKey] = []
    public private(set) var signatureResolvingKeys: [SignatureResolvingKey] = []

    public init() {}

    /// A line number and a reason, for ``BondStoreError/corrupt(path:line:reason:)``.
    public struct ParseError: Error, Equatable, Sendable {
        public var line: Int
        public var reason: String
    }

    /// Decodes a file's bytes; throws the first line that is not exactly as ``encoded()`` writes it.
    public init(decoding bytes: ArraySlice<UInt8>) throws(ParseError) {
        guard bytes.count <= Self.maximumSize else {
            throw ParseError(line: 0, reason: "\(bytes.count) bytes, more than the \(Self.maximumSize) a bond file may hold")
        }
        guard bytes.last == UInt8(ascii: "\n") else {
            throw ParseError(line: 0, reason: bytes.isEmpty ? "empty file" : "the last line does not end with a newline")
        }
        let lines = bytes.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard let first = lines.first, String(decoding: first, as: UTF8.self) == Self.header else {
            throw ParseError(line: 1, reason: "the first line is not '\(Self.header)'")
        }
        for (offset, line) in lines.dropFirst().enumerated() {
            let number = offset + 2
            guard line.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                throw ParseError(line: number, reason: "a byte that is not printable ASCII")
            }
            let fields = String(decoding: line, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
            do {
                try record(fields)
            } catch {
                throw ParseError(line: number, reason: error.reason)
            }
        }
    }

    private struct FieldError: Error { var reason: String }

    private mutating func record(_ fields: [Substring]) throws(FieldError) {
        var cursor = Fields(fields)
        let kind = try cursor.next("key kind")
        let peer = try cursor.peer()
        switch kind {
        case "ltk":
            let type = try cursor.byte("type")
            let centralText = try cursor.named("central")
            guard centralText == "0" || centralText == "1" else {
                throw FieldError(reason: "central=\(centralText), not 0 or 1")
            }
            let central: UInt8 = centralText == "1" ? 1 : 0
            let size = try cursor.decimal("size")
            let ediv = try cursor.hex("ediv", digits: 4)
            let rand = try cursor.hex("rand", digits: 16)
            let value = try cursor.key()
            try cursor.end()
            guard longTermKeys.count < Self.maximumKeys else { throw FieldError(reason: "more than \(Self.maximumKeys) LTKs") }
            let key = LongTermKey(
                peer: peer, keyType: LongTermKeyType(rawValue: type), central: central == 1, encryptionSize: size,
                diversifier: UInt16(ediv), randomNumber: rand, value: value)
            guard !longTermKeys.contains(where: { $0.peer == peer && $0.central == key.central }) else {
                throw FieldError(reason: "a second \(key.central ? "central" : "peripheral") LTK for \(peer)")
            }
            longTermKeys.append(key)
        case "irk":
            let value = try cursor.key()
            try cursor.end()
            guard identityResolvingKeys.count < Self.maximumKeys else { throw FieldError(reason: "more than \(Self.maximumKeys) IRKs") }
            guard !identityResolvingKeys.contains(where: { $0.peer == peer }) else {
                throw FieldError(reason: "a second IRK for \(peer)")
            }
            identityResolvingKeys.append(IdentityResolvingKey(peer: peer, value: value))
        case "csrk":
            let type = try cursor.byte("type")
            let value = try cursor.key()
            try cursor.end()
            guard signatureResolvingKeys.count < Self.maximumKeys else { throw FieldError(reason: "more than \(Self.maximumKeys) CSRKs") }
            guard !signatureResolvingKeys.contains(where: { $0.peer == peer && $0.keyType == type }) else {
                throw FieldError(reason: "a second CSRK of type \(type) for \(peer)")
            }
            signatureResolvingKeys.append(SignatureResolvingKey(peer: peer, keyType: type, value: value))
        default:
            throw FieldError(reason: "unknown key kind '\(kind)' (ltk, irk or csrk)")
        }
    }

    /// A cursor over one line's space-separated fields.
    private struct Fields {
        let fields: [Substring]
        var index = 0
        init(_ fields: [Substring]) { self.fields = fields }

        mutating func next(_ what: String) throws(FieldError) -> Substring {
            guard index < fields.count else { throw FieldError(reason: "the line ends before its \(what)") }
            defer { index += 1 }
            return fields[index]
        }

        mutating func named(_ name: String) throws(FieldError) -> Substring {
            let field = try next(name)
            guard field.hasPrefix(name + "=") else { throw FieldError(reason: "'\(field)' where \(name)= belongs") }
            return field.dropFirst(name.count + 1)
        }

        mutating func peer() throws(FieldError) -> BluetoothPeer {
            let text = try next("address")
            guard let address = BluetoothAddress(text), String(describing: address) == text else {
                throw FieldError(reason: "'\(text)' is not an address in capitals (AA:BB:CC:DD:EE:FF)")
            }
            let type: BluetoothAddressType
            switch try next("address type") {
            case "public": type = .lePublic
            case "random": type = .leRandom
            case let other: throw FieldError(reason: "address type '\(other)', not public or random")
            }
            return BluetoothPeer(address: address, type: type)
        }

        mutating func hex(_ name: String, digits: Int) throws(FieldError) -> UInt64 {
            let text = try named(name)
            guard text.count == digits, text.allSatisfy(Self.isLowerHex), let value = UInt64(text, radix: 16) else {
                throw FieldError(reason: "\(name)= needs \(digits) lower-case hex digits, has '\(text)'")
            }
            return value
        }

        mutating func byte(_ name: String) throws(FieldError) -> UInt8 {
            UInt8(try hex(name, digits: 2))
        }

        mutating func decimal(_ name: String) throws(FieldError) -> UInt8 {
            let text = try named(name)
            guard (1...3).contains(text.count), text.allSatisfy({ $0 >= "0" && $0 <= "9" }),
                text == "0" || !text.hasPrefix("0"), let value = UInt8(text)
            else { throw FieldError(reason: "\(name)= needs a number 0-255, has '\(text)'") }
            return value
        }

        mutating func key() throws(FieldError) -> [UInt8] {
            let text = try named("value")
            guard text.count == 32, text.allSatisfy(Self.isLowerHex) else {
                throw FieldError(reason: "value= needs 32 lower-case hex digits")
            }
            var bytes: [UInt8] = []
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
                index = next
            }
            return bytes
        }

        func end() throws(FieldError) {
            guard index == fields.count else { throw FieldError(reason: "'\(fields[index])' after the last field") }
        }

        static func isLowerHex(_ character: Character) -> Bool {
            ("0"..."9").contains(character) || ("a"..."f").contains(character)
        }
    }

    /// The file's bytes: the header, then LTKs, IRKs and CSRKs, each sorted by peer.
    public func encoded() -> [UInt8] {
        var text = Self.header + "\n"
        for key in longTermKeys {
            text += "ltk \(Self.peerText(key.peer)) type=\(Self.hex(UInt64(key.keyType.rawValue), 2)) "
                + "central=\(key.central ? 1 : 0) size=\(key.encryptionSize) ediv=\(Self.hex(UInt64(key.diversifier), 4)) "
                + "rand=\(Self.hex(key.randomNumber, 16)) value=\(Self.hex(key.value))\n"
        }
        for key in identityResolvingKeys {
            text += "irk \(Self.peerText(key.peer)) value=\(Self.hex(key.value))\n"
        }
        for key in signatureResolvingKeys {
            text += "csrk \(Self.peerText(key.peer)) type=\(Self.hex(UInt64(key.keyType), 2)) value=\(Self.hex(key.value))\n"
        }
        return Array(text.utf8)
    }

    private static func peerText(_ peer: BluetoothPeer) -> String {
        "\(peer.address) \(peer.type == .lePublic ? "public" : "random")"
    }

    private static func hex(_ value: UInt64, _ digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { hex(UInt64($0), 2) }.joined()
    }

    // MARK: Changes

    /// The peers with at least one key, sorted.
    public var peers: [BluetoothPeer] {
        let all = longTermKeys.map(\.peer) + identityResolvingKeys.map(\.peer) + signatureResolvingKeys.map(\.peer)
        return Set(all).sorted { ($0.address, $0.type.rawValue) < ($1.address, $1.type.rawValue) }
    }

    /// Keeps `key`, replacing the peer's key for the same role. False when it was kept already (nothing to write).
    @discardableResult
    public mutating func insert(_ key: LongTermKey) -> Bool {
        guard key.peer.type != .bredr, key.value.count == 16 else { return false }
        if let index = longTermKeys.firstIndex(where: { $0.peer == key.peer && $0.central == key.central }) {
            guard longTermKeys[index] != key else { return false }
            longTermKeys[index] = key
        } else {
            longTermKeys.append(key)
        }
        longTermKeys.sort { Self.order($0.peer, $1.peer) || ($0.peer == $1.peer && !$0.central && $1.central) }
        return true
    }

    /// Keeps `key`, replacing the peer's IRK. False when it was kept already.
    @discardableResult
    public mutating func insert(_ key: IdentityResolvingKey) -> Bool {
        guard key.peer.type != .bredr, key.value.count == 16 else { return false }
        if let index = identityResolvingKeys.firstIndex(where: { $0.peer == key.peer }) {
            guard identityResolvingKeys[index] != key else { return false }
            identityResolvingKeys[index] = key
        } else {
            identityResolvingKeys.append(key)
        }
        identityResolvingKeys.sort { Self.order($0.peer, $1.peer) }
        return true
    }

    /// Keeps `key`, replacing the peer's CSRK of the same type. False when it was kept already.
    @discardableResult
    public mutating func insert(_ key: SignatureResolvingKey) -> Bool {
        guard key.peer.type != .bredr, key.value.count == 16 else { return false }
        if let index = signatureResolvingKeys.firstIndex(where: { $0.peer == key.peer && $0.keyType == key.keyType }) {
            guard signatureResolvingKeys[index] != key else { return false }
            signatureResolvingKeys[index] = key
        } else {
            signatureResolvingKeys.append(key)
        }
        signatureResolvingKeys.sort { Self.order($0.peer, $1.peer) || ($0.peer == $1.peer && $0.keyType < $1.keyType) }
        return true
    }

    /// Forgets every key of the peer with `address` (any address type). False when there was none.
    @discardableResult
    public mutating func remove(_ address: BluetoothAddress) -> Bool {
        let before = longTermKeys.count + identityResolvingKeys.count + signatureResolvingKeys.count
        longTermKeys.removeAll { $0.peer.address == address }
        identityResolvingKeys.removeAll { $0.peer.address == address }
        signatureResolvingKeys.removeAll { $0.peer.address == address }
        return longTermKeys.count + identityResolvingKeys.count + signatureResolvingKeys.count != before
    }

    private static func order(_ a: BluetoothPeer, _ b: BluetoothPeer) -> Bool {
        (a.address, a.type.rawValue) < (b.address, b.type.rawValue)
    }
}
