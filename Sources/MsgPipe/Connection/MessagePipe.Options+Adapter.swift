import BLELink

extension MessagePipe.Options {
    /// Checks an adapter as `adapter` takes it, before anything connects: `hciN` or its address (nil: the
    /// first powered LE adapter). Throws the Bluetooth error a connect would, its description naming the fix.
    ///
    /// ```swift
    /// try MessagePipe.Options.checkAdapter("hci1")
    /// ```
    public static func checkAdapter(_ adapter: String?) throws { _ = try AdapterSelector(adapter) }
}
