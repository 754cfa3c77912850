/// The kind of an SMP Long Term Key (mgmt Key_Type).
public struct LongTermKeyType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let unauthenticatedLegacy = LongTermKeyType(rawValue: 0x00)
    public static let authenticatedLegacy = LongTermKeyType(rawValue: 0x01)
    public static let unauthenticatedP256 = LongTermKeyType(rawValue: 0x02)
    public static let authenticatedP256 = LongTermKeyType(rawValue: 0x03)
    public static let debugP256 = LongTermKeyType(rawValue: 0x04)

    /// From an authenticated (MITM-protected) pairing.
    public var isAuthenticated: Bool { self == .authenticatedLegacy || self == .authenticatedP256 }

    public var description: String {
        switch self {
        case .unauthenticatedLegacy: "unauthenticated legacy"
        case .authenticatedLegacy: "authenticated legacy"
        case .unauthenticatedP256: "unauthenticated P-256"
        case .authenticatedP256: "authenticated P-256"
        case .debugP256: "debug P-256"
        default: "type \(rawValue)"
        }
    }
}

/// One Long Term Key as the management interface carries it in Load Long Term Keys and New Long Term Key:
/// `address(6) | address type(1) | key type(1) | central(1) | encryption size(1) | EDIV(2) | Rand(8) | value(16)`.
public struct LongTermKey: Equatable, Sendable {
    /// The layout's size in bytes.
    public static let size = 36
    /// The peer's identity address: public or static random.
    public var peer: BluetoothPeer
    public var keyType: LongTermKeyType
    /// True for the key used when the local side is the central (legacy pairing distributes one per role).
    public var central: Bool
    public var encryptionSize: UInt8
    public var diversifier: UInt16
    public var randomNumber: UInt64
    /// The 16 key bytes as the kernel gives them.
    public var value: [UInt8]

    public init(
        peer: BluetoothPeer, keyType: LongTermKeyType, central: Bool, encryptionSize: UInt8 = 16,
        diversifier: UInt16 = 0, randomNumber: UInt64 = 0, value: [UInt8]
    ) {
        self.peer = peer
        self.keyType = keyType
        self.central = central
        self.encryptionSize = encryptionSize
        self.diversifier = diversifier
        self.randomNumber = randomNumber
        self.value = value
    }

    init(decoding reader: inout ManagementReader) throws(BluetoothError) {
        peer = try reader.lePeer()
        keyType = LongTermKeyType(rawValue: try reader.uint8())
        central = try reader.flag("Central")
        encryptionSize = try reader.uint8()
        diversifier = try reader.uint16()
        randomNumber = try reader.uint64()
        value = Array(try reader.bytes(16))
    }

    public func encode(into out: inout [UInt8]) {
        out.appendManagementPeer(peer)
        out.append(keyType.rawValue)
        out.append(central ? 1 : 0)
        out.append(encryptionSize)
        out.appendManagementField(diversifier)
        out.appendManagementField(randomNumber)
        out.append(contentsOf: (value + [UInt8](repeating: 0, count: 16)).prefix(16))
    }

    /// Whether the kernel takes this key in Load Long Term Keys: an identity address (public, or random with
    /// the two top bits set: static) and a 16-byte value. The kernel refuses the whole list for one bad key.
    public var isLoadable: Bool { value.count == 16 && peer.isIdentityAddress }
}

extension BluetoothPeer {
    /// A public address, or a static random one (top two bits 11): an identity the kernel keeps keys for.
    public var isIdentityAddress: Bool {
        switch type {
        case .lePublic: true
        case .leRandom: address.littleEndianBytes[5] & 0xC0 == 0xC0
        case .bredr: false
        }
    }
}

/// New Long Term Key (event 0x000A): pairing produced a key; `storeHint` says whether to keep it (bonding).
public struct NewLongTermKey: ManagementEventParameters, Equatable, Sendable {
    public static let code: UInt16 = 0x000A
    public var storeHint: Bool
    public var key: LongTermKey

    public init(storeHint: Bool, key: LongTermKey) {
        self.storeHint = storeHint
        self.key = key
    }

    /// Decodes the event parameters (37 bytes exactly).
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "New Long Term Key")
        storeHint = try reader.flag("Store_Hint")
        key = try LongTermKey(decoding: &reader)
        try reader.finish()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(storeHint ? 1 : 0)
        key.encode(into: &out)
    }
}

/// Load Long Term Keys (command 0x0013): replaces the kernel's whole LTK list of a controller.
public struct LoadLongTermKeys: Equatable, Sendable {
    public static let opcode: UInt16 = 0x0013
    public var keys: [LongTermKey]

    public init(keys: [LongTermKey]) { self.keys = keys }

    /// Decodes the command parameters: a count and that many 36-byte keys.
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "Load Long Term Keys")
        keys = try reader.list(entrySize: LongTermKey.size) { (reader: inout ManagementReader) throws(BluetoothError) in
            try LongTermKey(decoding: &reader)
        }
    }

    public func encode(into out: inout [UInt8]) {
        out.appendManagementField(UInt16(truncatingIfNeeded: keys.count))
        for key in keys { key.encode(into: &out) }
    }

    public func command(_ controllerIndex: UInt16) -> ManagementCommand {
        var parameters: [UInt8] = []
        encode(into: &parameters)
        return ManagementCommand(
            opcode: Self.opcode, controllerIndex: controllerIndex, parameters: parameters, name: "Load Long Term Keys")
    }
}
