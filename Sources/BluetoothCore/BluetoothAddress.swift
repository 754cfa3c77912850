/// A 48-bit Bluetooth device address, written most significant byte first ("00:AA:01:00:00:00") and sent
/// least significant byte first on the wire (mgmt, HCI, `bdaddr_t`).
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The six bytes as sent on the wire: least significant first.
    public let littleEndianBytes: [UInt8]

    /// The address from its six wire bytes (least significant first); missing bytes read as zero.
    public init(littleEndianBytes: [UInt8]) {
        self.littleEndianBytes = Array((littleEndianBytes + [UInt8](repeating: 0, count: 6)).prefix(6))
    }

    /// Parses "XX:XX:XX:XX:XX:XX" (hex, either case); nil for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            // Two hex digits exactly: UInt8(_:radix:) alone also takes a sign ("+1", "-0").
            guard part.count == 2, part.allSatisfy(\.isHexDigit), let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.littleEndianBytes = bytes.reversed()
    }

    /// The all-zero address (BDADDR_ANY).
    public static let any = BluetoothAddress(littleEndianBytes: [0, 0, 0, 0, 0, 0])

    public var description: String {
        littleEndianBytes.reversed().map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.littleEndianBytes.reversed().lexicographicallyPrecedes(rhs.littleEndianBytes.reversed())
    }
}

/// The LE address type: the same values in mgmt (`Address_Type`) and `sockaddr_l2.l2_bdaddr_type`.
public enum BluetoothAddressType: UInt8, Sendable, Hashable, CustomStringConvertible, CaseIterable {
    case bredr = 0
    case lePublic = 1
    case leRandom = 2

    public var description: String {
        switch self {
        case .bredr: "bredr"
        case .lePublic: "public"
        case .leRandom: "random"
        }
    }
}

/// A peer's address with its type: what an LE connect needs.
public struct BluetoothPeer: Hashable, Sendable, CustomStringConvertible {
    public var address: BluetoothAddress
    public var type: BluetoothAddressType

    public init(address: BluetoothAddress, type: BluetoothAddressType = .lePublic) {
        self.address = address
        self.type = type
    }

    public var description: String { "\(address) (\(type))" }
}
