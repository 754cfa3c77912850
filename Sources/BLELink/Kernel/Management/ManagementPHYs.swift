public import GATT

/// The PHY bit set of Get/Set PHY Configuration (mgmt-api.txt): BR/EDR packet types in bits 0-8, then LE
/// 1M, 2M and Coded, each for transmit and receive, in bits 9-14.
public struct ManagementPHYs: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// BR 1M 1-slot through EDR 3M 5-slot: every BR/EDR bit.
    public static let bredr = ManagementPHYs(rawValue: 0x01FF)
    public static let le1MTransmit = ManagementPHYs(rawValue: 1 << 9)
    public static let le1MReceive = ManagementPHYs(rawValue: 1 << 10)
    public static let le2MTransmit = ManagementPHYs(rawValue: 1 << 11)
    public static let le2MReceive = ManagementPHYs(rawValue: 1 << 12)
    public static let leCodedTransmit = ManagementPHYs(rawValue: 1 << 13)
    public static let leCodedReceive = ManagementPHYs(rawValue: 1 << 14)
    /// Every LE bit.
    public static let le: ManagementPHYs = [
        .le1MTransmit, .le1MReceive, .le2MTransmit, .le2MReceive, .leCodedTransmit, .leCodedReceive,
    ]

    /// Both directions of `phy`.
    public init(_ phy: LEPHY) {
        switch phy {
        case .le1M: self = [.le1MTransmit, .le1MReceive]
        case .le2M: self = [.le2MTransmit, .le2MReceive]
        case .coded: self = [.leCodedTransmit, .leCodedReceive]
        }
    }

    /// "le1m-tx le1m-rx le2m-tx ...", LE bits only, plus "bredr" when any BR/EDR bit is set.
    public var description: String {
        let names: [(ManagementPHYs, String)] = [
            (.le1MTransmit, "le1m-tx"), (.le1MReceive, "le1m-rx"), (.le2MTransmit, "le2m-tx"),
            (.le2MReceive, "le2m-rx"), (.leCodedTransmit, "lecoded-tx"), (.leCodedReceive, "lecoded-rx"),
        ]
        let parts = (isDisjoint(with: .bredr) ? [] : ["bredr"]) + names.filter { contains($0.0) }.map(\.1)
        return parts.isEmpty ? "none" : parts.joined(separator: " ")
    }
}
