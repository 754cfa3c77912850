/// One LE physical layer: 1M (every controller), 2M and Coded (Bluetooth 5, optional). Its raw value is the
/// spelling the CLI and JSON use.
public enum LEPHY: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case le1M = "1m"
    case le2M = "2m"
    case coded

    /// Parses `1m`, `2m` or `coded` (any case); throws ``ConnectionParametersError/unknownPHY(_:)`` otherwise.
    public init(parsing text: String) throws(ConnectionParametersError) {
        guard let phy = LEPHY(rawValue: text.lowercased()) else { throw .unknownPHY(text) }
        self = phy
    }

    public var description: String { rawValue }
}
