/// What a client may do with an attribute; a request outside them fails with Read/Write Not Permitted.
public struct GATTPermissions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = GATTPermissions(rawValue: 0x01)
    public static let write = GATTPermissions(rawValue: 0x02)
}
