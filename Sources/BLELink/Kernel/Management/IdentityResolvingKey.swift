/// One Identity Resolving Key as Load Identity Resolving Keys and New Identity Resolving Key carry it:
/// `address(6) | address type(1) | value(16)`. The kernel resolves the peer's private addresses with it.
public struct IdentityResolvingKey: Equatable, Sendable {
    public static let size = 23
    /// The peer's identity address: public or static random.
    public var peer: BluetoothPeer
    /// The 16 key bytes as the kernel gives them.
    public var value: [UInt8]

    public init(peer: BluetoothPeer, value: [UInt8]) {
        self.peer = peer
        self.value = value
    }

    init(decoding reader: inout ManagementReader) throws(BluetoothError) {
        peer = try reader.lePeer()
        value = Array(try reader.bytes(16))
    }

    public func encode(into out: inout [UInt8]) {
        out.appendManagementPeer(peer)
        out.append(contentsOf: (value + [UInt8](repeating: 0, count: 16)).prefix(16))
    }

    /// Whether the kernel takes this key in Load Identity Resolving Keys (an identity address, 16 bytes).
    public var isLoadable: Bool { value.count == 16 && peer.isIdentityAddress }
}

/// New Identity Resolving Key (event 0x0018): the peer distributed its IRK. `randomAddress` is the private
/// address it was resolved from (00:00:00:00:00:00 when it connected with its identity address).
public struct NewIdentityResolvingKey: ManagementEventParameters, Equatable, Sendable {
    public static let code: UInt16 = 0x0018
    public var storeHint: Bool
    public var randomAddress: BluetoothAddress
    public var key: IdentityResolvingKey

    public init(storeHint: Bool, randomAddress: BluetoothAddress = .any, key: IdentityResolvingKey) {
        self.storeHint = storeHint
        self.randomAddress = randomAddress
        self.key = key
    }

    /// Decodes the event parameters (30 bytes exactly).
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "New Identity Resolving Key")
        storeHint = try reader.flag("Store_Hint")
        randomAddress = try reader.address()
        key = try IdentityResolvingKey(decoding: &reader)
        try reader.finish()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(storeHint ? 1 : 0)
        out.append(contentsOf: randomAddress.littleEndianBytes)
        key.encode(into: &out)
    }
}

/// Load Identity Resolving Keys (command 0x0030): replaces the kernel's whole IRK list of a controller.
public struct LoadIdentityResolvingKeys: Equatable, Sendable {
    public static let opcode: UInt16 = 0x0030
    public var keys: [IdentityResolvingKey]

    public init(keys: [IdentityResolvingKey]) { self.keys = keys }

    /// Decodes the command parameters: a count and that many 23-byte keys.
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "Load Identity Resolving Keys")
        keys = try reader.list(entrySize: IdentityResolvingKey.size) {
            (reader: inout ManagementReader) throws(BluetoothError) in try IdentityResolvingKey(decoding: &reader)
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
            opcode: Self.opcode, controllerIndex: controllerIndex, parameters: parameters,
            name: "Load Identity Resolving Keys")
    }
}
