/// One entry of the adapter's default system configuration (Read/Set Default System Configuration): a
/// `Type (2) | Length (1) | Value (Length)` TLV. The kernel defines every type as a 16-bit value; msgpipe
/// names the LE connection ones.
public struct SystemConfigurationParameter: Equatable, Sendable {
    /// LE Min Connection Interval, in 1.25 ms units (hdev->le_conn_min_interval).
    public static let leMinimumConnectionInterval: UInt16 = 0x0017
    /// LE Max Connection Interval, in 1.25 ms units.
    public static let leMaximumConnectionInterval: UInt16 = 0x0018
    /// LE Connection Latency.
    public static let leConnectionLatency: UInt16 = 0x0019
    /// LE Connection Supervision Timeout, in 10 ms units.
    public static let leSupervisionTimeout: UInt16 = 0x001A

    public var type: UInt16
    public var value: [UInt8]

    public init(type: UInt16, value: [UInt8]) {
        self.type = type
        self.value = value
    }

    /// A 16-bit value, little-endian.
    public init(type: UInt16, _ value: UInt16) {
        self.init(type: type, value: [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)])
    }

    /// The value as a 16-bit integer; nil unless it is exactly 2 bytes.
    public var uint16: UInt16? {
        value.count == 2 ? UInt16(value[0]) | UInt16(value[1]) << 8 : nil
    }

    func encode(into out: inout [UInt8]) {
        out.appendManagementField(type)
        out.append(UInt8(truncatingIfNeeded: value.count))
        out.append(contentsOf: value.prefix(255))
    }
}

extension ManagementReader {
    /// TLVs up to the end; a length running past it throws.
    mutating func systemConfigurationParameters() throws(BluetoothError) -> [SystemConfigurationParameter] {
        var parameters: [SystemConfigurationParameter] = []
        while remaining > 0 {
            let type = try uint16()
            let length = Int(try uint8())
            parameters.append(SystemConfigurationParameter(type: type, value: Array(try bytes(length))))
        }
        return parameters
    }
}
