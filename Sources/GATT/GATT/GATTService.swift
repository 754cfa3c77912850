/// A service as the application describes it, before handles are assigned.
public struct GATTService: Sendable {
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    public var characteristics: [GATTCharacteristic]

    public init(uuid: BluetoothUUID, isPrimary: Bool = true, characteristics: [GATTCharacteristic]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
    }
}

/// A characteristic: declaration, value and descriptors. A CCCD is added for notify or indicate, a User
/// Description descriptor for `userDescription`.
public struct GATTCharacteristic: Sendable {
    public var uuid: BluetoothUUID
    public var properties: GATTCharacteristicProperties
    public var permissions: GATTPermissions
    public var value: [UInt8]
    /// Longest value a client may write (at most 512).
    public var maximumLength: Int
    public var userDescription: String?
    public var descriptors: [GATTDescriptor]

    public init(
        uuid: BluetoothUUID, properties: GATTCharacteristicProperties, permissions: GATTPermissions,
        value: [UInt8] = [], maximumLength: Int = ATTOpcode.maximumAttributeLength,
        userDescription: String? = nil, descriptors: [GATTDescriptor] = []
    ) {
        self.uuid = uuid
        self.properties = properties
        self.permissions = permissions
        self.value = value
        self.maximumLength = min(maximumLength, ATTOpcode.maximumAttributeLength)
        self.userDescription = userDescription
        self.descriptors = descriptors
    }
}

/// A descriptor other than the CCCD and User Description, which the database adds itself.
public struct GATTDescriptor: Sendable {
    public var uuid: BluetoothUUID
    public var permissions: GATTPermissions
    public var value: [UInt8]

    public init(uuid: BluetoothUUID, permissions: GATTPermissions, value: [UInt8]) {
        self.uuid = uuid
        self.permissions = permissions
        self.value = value
    }
}
