/// One attribute of the database: handle, type, value and access rules.
public struct GATTAttribute: Sendable {
    /// What the attribute is, for the rules that depend on it.
    public enum Role: Sendable, Equatable {
        /// A service declaration; `end` is the last handle of the service's group.
        case service(end: UInt16)
        case characteristicDeclaration
        /// A characteristic value with its declared properties; `cccd` is the handle of its CCCD, if any.
        case characteristicValue(properties: GATTCharacteristicProperties, cccd: UInt16?)
        /// A CCCD: its value lives per connection, not here. `valueHandle` is the characteristic's value.
        case clientConfiguration(valueHandle: UInt16)
        case descriptor
    }

    public let handle: UInt16
    public let type: BluetoothUUID
    public var value: [UInt8]
    public let permissions: GATTPermissions
    public let role: Role
    /// Longest value a client may write.
    public let maximumLength: Int
    /// Declarations and the CCCD have a fixed length: a Read Blob gets Attribute Not Long when they fit a Read.
    public var isFixedLength: Bool {
        switch role {
        case .service, .characteristicDeclaration, .clientConfiguration: true
        case .characteristicValue, .descriptor: false
        }
    }
}
