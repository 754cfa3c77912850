/// Why a text is not a service profile (``GATTServiceProfile/parse(_:)``). The texts name the setting as
/// "the profile"; a CLI names its own option.
public enum GATTProfileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Neither msgpipe, nus nor custom:...
    case unknownName(String)
    /// custom: needs exactly SERVICE:WRITE:NOTIFY; carries how many fields followed "custom".
    case customFieldCount(Int)
    /// A field is not a 16-bit (4 hex digits) or 128-bit (8-4-4-4-12) UUID.
    case invalidUUID(role: String, String)
    /// Two of the three UUIDs are the same.
    case repeatedUUID

    public var description: String {
        switch self {
        case let .unknownName(name):
            "a profile is msgpipe, nus or custom:SERVICE:WRITE:NOTIFY, not '\(name)'"
        case let .customFieldCount(count):
            "a custom profile needs three UUIDs, SERVICE:WRITE:NOTIFY, not \(count)"
        case let .invalidUUID(role, field):
            "a custom profile's \(role) '\(field)' is not a 16-bit (FFF0) or 128-bit (8-4-4-4-12 hex) UUID"
        case .repeatedUUID:
            "a custom profile's SERVICE, WRITE and NOTIFY must be three different UUIDs"
        }
    }
}
