/// A Bluetooth UUID. 16-bit UUIDs are shorthands for `0000xxxx-0000-1000-8000-00805F9B34FB`; on the ATT wire
/// a UUID in that range takes 2 bytes, any other 16 bytes, both little-endian.
public struct BluetoothUUID: Sendable, Hashable, CustomStringConvertible {
    /// The full 128-bit value, most significant bits first as written in the string form.
    public let value: UInt128

    /// The Bluetooth Base UUID, 00000000-0000-1000-8000-00805F9B34FB.
    static let base: UInt128 = 0x0000_0000_0000_1000_8000_0080_5F9B_34FB

    public init(_ value: UInt128) { self.value = value }

    /// The UUID whose 16-bit shorthand is `short` (e.g. 0x2800 Primary Service).
    public static func bit16(_ short: UInt16) -> BluetoothUUID { BluetoothUUID(base | UInt128(short) << 96) }

    /// The 16-bit shorthand, if the UUID has one.
    public var bit16: UInt16? {
        value & ~(UInt128(0xFFFF) << 96) == Self.base ? UInt16(truncatingIfNeeded: value >> 96) : nil
    }

    /// Number of bytes on the ATT wire: 2 or 16.
    public var wireLength: Int { bit16 == nil ? 16 : 2 }

    /// Decodes 16 little-endian bytes.
    init(littleEndian bytes: ArraySlice<UInt8>) {
        var value: UInt128 = 0
        for byte in bytes.reversed() { value = value << 8 | UInt128(byte) }
        self.value = value
    }

    /// Parses "180F" (16-bit shorthand) or "6E400001-B5A3-F393-E0A9-E50E24DCCA9E" (any case).
    public init?(_ string: String) {
        let digits = string.filter { $0 != "-" }
        guard digits.allSatisfy(\.isHexDigit) else { return nil }
        if digits.count == 4, string.count == 4, let short = UInt16(digits, radix: 16) {
            self = .bit16(short)
            return
        }
        let groups = string.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        guard groups == [8, 4, 4, 4, 12], let value = UInt128(digits, radix: 16) else { return nil }
        self.value = value
    }

    /// Appends the wire form: 2 bytes for a 16-bit UUID, else 16, little-endian.
    public func encode(into out: inout [UInt8]) {
        if let short = bit16 {
            out.appendLittleEndian(short)
        } else {
            for shift in stride(from: 0, to: 128, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
    }

    /// "180F" for a 16-bit UUID, else the uppercase 8-4-4-4-12 form.
    public var description: String {
        if let short = bit16 { return hex(short, width: 4).uppercased() }
        let digits = Array(hex(value, width: 32).uppercased())
        let cuts = [0, 8, 12, 16, 20, 32]
        return (0..<5).map { String(digits[cuts[$0]..<cuts[$0 + 1]]) }.joined(separator: "-")
    }
}

extension BluetoothUUID {
    /// 0x2800 Primary Service declaration.
    public static let primaryService = BluetoothUUID.bit16(0x2800)
    /// 0x2801 Secondary Service declaration.
    public static let secondaryService = BluetoothUUID.bit16(0x2801)
    /// 0x2802 Include declaration.
    public static let include = BluetoothUUID.bit16(0x2802)
    /// 0x2803 Characteristic declaration.
    public static let characteristic = BluetoothUUID.bit16(0x2803)
    /// 0x2901 Characteristic User Description descriptor.
    public static let characteristicUserDescription = BluetoothUUID.bit16(0x2901)
    /// 0x2902 Client Characteristic Configuration descriptor (CCCD).
    public static let clientCharacteristicConfiguration = BluetoothUUID.bit16(0x2902)
}
