public import GATT

/// The link security an L2CAP socket asks for (BT_SECURITY): `low` is plain, `medium` pairs (Just Works,
/// encrypted), `high` requires an authenticated (MITM-protected) key.
public enum L2CAPSecurityLevel: String, Sendable, CaseIterable {
    case low, medium, high

    /// What a GATT server must see on the link before it lets a client at its values.
    public var requiredLinkSecurity: ATTLinkSecurity {
        switch self {
        case .low: .open
        case .medium: .encrypted
        case .high: .authenticated
        }
    }
}
