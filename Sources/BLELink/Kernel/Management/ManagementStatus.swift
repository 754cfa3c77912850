/// A management command's status code (BlueZ doc/mgmt-api.txt, "Error Codes").
public struct ManagementStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = ManagementStatus(rawValue: 0x00)
    public static let notConnected = ManagementStatus(rawValue: 0x02)
    public static let notPaired = ManagementStatus(rawValue: 0x06)
    public static let busy = ManagementStatus(rawValue: 0x0A)
    public static let rejected = ManagementStatus(rawValue: 0x0B)
    public static let notSupported = ManagementStatus(rawValue: 0x0C)
    public static let notPowered = ManagementStatus(rawValue: 0x0F)
    public static let invalidIndex = ManagementStatus(rawValue: 0x11)
    public static let permissionDenied = ManagementStatus(rawValue: 0x14)

    private static let names = [
        "Success", "Unknown Command", "Not Connected", "Failed", "Connect Failed", "Authentication Failed",
        "Not Paired", "No Resources", "Timeout", "Already Connected", "Busy", "Rejected", "Not Supported",
        "Invalid Parameters", "Disconnected", "Not Powered", "Cancelled", "Invalid Index", "RFKilled",
        "Already Paired", "Permission Denied",
    ]

    public var description: String {
        let name = Int(rawValue) < Self.names.count ? Self.names[Int(rawValue)] : "Unknown Status"
        return "\(name) (0x\(rawValue < 16 ? "0" : "")\(String(rawValue, radix: 16)))"
    }
}
