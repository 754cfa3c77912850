/// A controller's settings bitmask (Read Controller Information, New Settings).
public struct ControllerSettings: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let powered = ControllerSettings(rawValue: 1 << 0)
    public static let connectable = ControllerSettings(rawValue: 1 << 1)
    public static let discoverable = ControllerSettings(rawValue: 1 << 3)
    public static let bondable = ControllerSettings(rawValue: 1 << 4)
    public static let bredr = ControllerSettings(rawValue: 1 << 7)
    public static let lowEnergy = ControllerSettings(rawValue: 1 << 9)
    public static let secureConnections = ControllerSettings(rawValue: 1 << 11)
    public static let advertising = ControllerSettings(rawValue: 1 << 10)
}

/// The result of Read Controller Information (0x0004): 280 bytes of return parameters.
public struct ControllerInfo: Equatable, Sendable {
    public var address: BluetoothAddress
    public var bluetoothVersion: UInt8
    public var manufacturer: UInt16
    public var supportedSettings: ControllerSettings
    public var currentSettings: ControllerSettings
    public var name: String
    public var shortName: String

    public init(
        address: BluetoothAddress, bluetoothVersion: UInt8 = 0, manufacturer: UInt16 = 0,
        supportedSettings: ControllerSettings, currentSettings: ControllerSettings, name: String = "",
        shortName: String = ""
    ) {
        self.address = address
        self.bluetoothVersion = bluetoothVersion
        self.manufacturer = manufacturer
        self.supportedSettings = supportedSettings
        self.currentSettings = currentSettings
        self.name = name
        self.shortName = shortName
    }

    /// Decodes the return parameters; NUL-terminated names are cut at the first NUL.
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "Read Controller Information")
        address = try reader.address()
        bluetoothVersion = try reader.uint8()
        manufacturer = try reader.uint16()
        supportedSettings = ControllerSettings(rawValue: try reader.uint32())
        currentSettings = ControllerSettings(rawValue: try reader.uint32())
        _ = try reader.bytes(3)  // class of device
        name = Self.string(try reader.bytes(249))
        shortName = Self.string(try reader.bytes(11))
    }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Powered and with LE enabled: ready for advertising, scanning and LE connections.
    public var isReadyForLowEnergy: Bool { currentSettings.isSuperset(of: [.powered, .lowEnergy]) }
}

/// Decodes Read Controller Index List's return parameters: a count and that many 16-bit indices.
public func decodeControllerIndexList(_ parameters: ArraySlice<UInt8>) throws(BluetoothError) -> [UInt16] {
    var reader = ManagementReader(parameters, context: "Read Controller Index List")
    let count = Int(try reader.uint16())
    guard count * 2 == reader.remaining else {
        throw .malformedManagementPacket("controller index list declares \(count) entries in \(reader.remaining) bytes")
    }
    var indices: [UInt16] = []
    for _ in 0..<count { indices.append(try reader.uint16()) }
    return indices
}

/// Decodes Get Connections' return parameters: a count and that many address + address type entries.
public func decodeConnectionList(_ parameters: ArraySlice<UInt8>) throws(BluetoothError) -> [BluetoothPeer] {
    var reader = ManagementReader(parameters, context: "Get Connections")
    let count = Int(try reader.uint16())
    guard count * 7 == reader.remaining else {
        throw .malformedManagementPacket("connection list declares \(count) entries in \(reader.remaining) bytes")
    }
    var peers: [BluetoothPeer] = []
    for _ in 0..<count {
        let address = try reader.address()
        let type = BluetoothAddressType(rawValue: try reader.uint8()) ?? .leRandom
        peers.append(BluetoothPeer(address: address, type: type))
    }
    return peers
}
