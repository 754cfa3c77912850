/// One Connection Signature Resolving Key (for ATT Signed Write): `address(6) | address type(1) | type(1) |
/// value(16)`. The management interface has no command to load these back; they are kept for completeness.
public struct SignatureResolvingKey: Equatable, Sendable {
    public static let size = 24
    public var peer: BluetoothPeer
    /// 0x00 unauthenticated local, 0x01 unauthenticated remote, 0x02 authenticated local, 0x03 authenticated remote.
    public var keyType: UInt8
    public var value: [UInt8]

    public init(peer: BluetoothPeer, keyType: UInt8, value: [UInt8]) {
        self.peer = peer
        self.keyType = keyType
        self.value = value
    }

    init(decoding reader: inout ManagementReader) throws(BluetoothError) {
        peer = try reader.lePeer()
        keyType = try reader.uint8()
        value = Array(try reader.bytes(16))
    }

    public func encode(into out: inout [UInt8]) {
        out.appendManagementPeer(peer)
        out.append(keyType)
        out.append(contentsOf: (value + [UInt8](repeating: 0, count: 16)).prefix(16))
    }

    /// A local key signs what this side sends; a remote key checks what the peer signed.
    public var isLocal: Bool { keyType & 1 == 0 }
}

/// New Signature Resolving Key (event 0x0019).
public struct NewSignatureResolvingKey: ManagementEventParameters, Equatable, Sendable {
    public static let code: UInt16 = 0x0019
    public var storeHint: Bool
    public var key: SignatureResolvingKey

    public init(storeHint: Bool, key: SignatureResolvingKey) {
        self.storeHint = storeHint
        self.key = key
    }

    /// Decodes the event parameters (25 bytes exactly).
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "New Signature Resolving Key")
        storeHint = try reader.flag("Store_Hint")
        key = try SignatureResolvingKey(decoding: &reader)
        try reader.finish()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(storeHint ? 1 : 0)
        key.encode(into: &out)
    }
}
