extension AdapterSelector {
    /// Parses "hci0", "0", "00:AA:01:00:00:00", or nil / "" for the first available adapter.
    public init(_ text: String?) throws(BluetoothError) {
        guard let text, !text.isEmpty else {
            self = .firstAvailable
            return
        }
        let digits = text.hasPrefix("hci") ? String(text.dropFirst(3)) : text
        if let index = UInt16(digits), index != ManagementCommand.noController {
            self = .index(index)
        } else if let address = BluetoothAddress(text) {
            self = .address(address)
        } else {
            throw .invalidArgument("'\(text)' is not an adapter: use hciN (e.g. hci0) or an address (00:11:22:33:44:55)")
        }
    }
}
