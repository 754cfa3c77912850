/// Which carrier a pipe may use over Bluetooth, the user's choice: GATT (writes and notifications), the LE
/// credit-based L2CAP channel whose PSM the peripheral's service publishes (PROTOCOL.md 5.9), or either. The
/// channel moves bytes several times faster; GATT is what every peer speaks. What a connection ended up on
/// is its ``Carrier`` (``PipeLink/carrier``, ``MessagePipe/carrier``): `.gatt` and `.l2cap` allow only that
/// carrier, `.auto` either.
public enum LinkMode: String, Sendable, CaseIterable {
    /// A peripheral serves both; a central takes the channel when the peripheral publishes one and it opens,
    /// GATT otherwise.
    case auto
    /// GATT only: a peripheral opens no channel, a central never takes one.
    case gatt
    /// The channel only: a peripheral still serves GATT to publish the PSM but hangs up on a central that
    /// subscribes to carry data over it; a central fails with ``MessagePipeError/channelUnavailable(_:)``
    /// when the peripheral publishes no channel or refuses it.
    case l2cap
}
