/// A service UUID as advertised: 16-, 32- or 128-bit. Shorter forms stand for the Bluetooth Base UUID
/// `0000xxxx-0000-1000-8000-00805F9B34FB`; ``fullBytes`` compares them all in their 128-bit form.
public struct AdvertisedServiceUUID: Hashable, Sendable, CustomStringConvertible {
    /// The UUID's bytes as on the wire (little-endian): 2, 4 or 16 of them.
    public let littleEndianBytes: [UInt8]

    /// Wraps 2, 4 or 16 wire bytes; nil for any other count.
    public init?(littleEndianBytes: [UInt8]) {
        guard [2, 4, 16].contains(littleEndianBytes.count) else { return nil }
        self.littleEndianBytes = littleEndianBytes
    }

    /// A 16-bit SIG-assigned UUID.
    public init(uuid16: UInt16) {
        self.littleEndianBytes = [UInt8(truncatingIfNeeded: uuid16), UInt8(truncatingIfNeeded: uuid16 >> 8)]
    }

    /// Parses "180D", "0000180D", or "12345678-1234-5678-1234-56789ABCDEF0" (hex, either case, dashes
    /// optional in the 128-bit form); nil for anything else.
    public init?(_ text: some StringProtocol) {
        let hex = String(text.filter { $0 != "-" })
        guard [4, 8, 32].contains(hex.count), hex.allSatisfy(\.isHexDigit) else { return nil }
        var bigEndian: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bigEndian.append(byte)
            index = next
        }
        self.littleEndianBytes = bigEndian.reversed()
    }

    /// The Bluetooth Base UUID, little-endian, with zero in the 32-bit slot (bytes 12-15).
    package static let baseLittleEndian: [UInt8] = [
        0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]

    /// The 128-bit form, little-endian (16-/32-bit UUIDs expanded with the Base UUID).
    public var fullBytes: [UInt8] {
        if littleEndianBytes.count == 16 { return littleEndianBytes }
        var full = Self.baseLittleEndian
        for (offset, byte) in littleEndianBytes.enumerated() { full[12 + offset] = byte }
        return full
    }

    /// True when both name the same UUID, whatever their advertised width.
    public func matches(_ other: AdvertisedServiceUUID) -> Bool { fullBytes == other.fullBytes }

    public var description: String {
        let hex = littleEndianBytes.reversed().map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        guard littleEndianBytes.count == 16 else { return hex }
        var text = hex
        for position in [20, 16, 12, 8] { text.insert("-", at: text.index(text.startIndex, offsetBy: position)) }
        return text
    }
}
