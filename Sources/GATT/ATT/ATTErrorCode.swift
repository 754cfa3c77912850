/// An ATT Error Response code (Bluetooth Core Vol 3 Part F, 3.4.1.1), or an application/profile code.
public struct ATTErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    public static let insufficientAuthorization = ATTErrorCode(rawValue: 0x08)
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    public static let encryptionKeySizeTooShort = ATTErrorCode(rawValue: 0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    public static let unlikelyError = ATTErrorCode(rawValue: 0x0E)
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    public static let insufficientResources = ATTErrorCode(rawValue: 0x11)
    public static let databaseOutOfSync = ATTErrorCode(rawValue: 0x12)
    public static let valueNotAllowed = ATTErrorCode(rawValue: 0x13)
    /// Common Profile and Service Error Code 0xFD: a CCCD is not configured as the operation needs.
    public static let cccdImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)

    private static let names: [UInt8: String] = [
        0x01: "invalid handle", 0x02: "read not permitted", 0x03: "write not permitted", 0x04: "invalid PDU",
        0x05: "insufficient authentication", 0x06: "request not supported", 0x07: "invalid offset",
        0x08: "insufficient authorization", 0x09: "prepare queue full", 0x0A: "attribute not found",
        0x0B: "attribute not long", 0x0C: "encryption key size too short",
        0x0D: "invalid attribute value length", 0x0E: "unlikely error", 0x0F: "insufficient encryption",
        0x10: "unsupported group type", 0x11: "insufficient resources", 0x12: "database out of sync",
        0x13: "value not allowed", 0xFD: "CCCD improperly configured",
    ]

    public var description: String {
        if let name = Self.names[rawValue] { return "\(name) (0x\(hex(rawValue)))" }
        if (0x80...0x9F).contains(rawValue) { return "application error 0x\(hex(rawValue))" }
        return "error 0x\(hex(rawValue))"
    }
}
