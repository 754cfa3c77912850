/// How well the link under an ATT bearer is secured, in the kernel's order (BT_SECURITY_LOW to FIPS). A GATT
/// server configured with a requirement refuses access to values until the link reaches it.
public enum ATTLinkSecurity: Int, Sendable, Comparable, CaseIterable {
    /// Not encrypted.
    case open = 1
    /// Encrypted with an unauthenticated key (Just Works pairing).
    case encrypted = 2
    /// Encrypted with an authenticated key (passkey or numeric comparison).
    case authenticated = 3
    /// Authenticated with LE Secure Connections and a 128-bit key.
    case secureConnections = 4

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
