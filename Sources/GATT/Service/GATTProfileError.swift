/// Why a `--profile` value is not a profile (``GATTServiceProfile/parse(_:)``).
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
            "--profile must be msgpipe, nus or custom:SERVICE:WRITE:NOTIFY, not '\(name)'"
        case let .customFieldCount(count):
            "--profile custom: needs three UUIDs, SERVICE:WRITE:NOTIFY, not \(count)"
        case let .invalidUUID(role, field):
            "--profile custom: \(role) '\(field)' is not a 16-bit (FFF0) or 128-bit (8-4-4-4-12 hex) UUID"
        case .repeatedUUID:
            "--profile custom: SERVICE, WRITE and NOTIFY must be three different UUIDs"
        }
    }
}
