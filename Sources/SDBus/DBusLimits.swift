/// Bounds on what a message from the bus may make us allocate: every count and length read from the bus is
/// checked against these before it is used (dbus-daemon's own limit is a 128 MiB message).
public struct DBusLimits: Sendable, Equatable {
    /// Values decoded from one message, counting every element of every container.
    public var maximumValues: Int
    /// Bytes in one `ay` array.
    public var maximumByteArray: Int
    /// Container nesting (the D-Bus specification allows 32 arrays plus 32 structures).
    public var maximumDepth: Int
    /// UTF-8 bytes in one string, object path or signature.
    public var maximumStringLength: Int

    public init(maximumValues: Int = 65_536, maximumByteArray: Int = 1 << 20, maximumDepth: Int = 64,
                maximumStringLength: Int = 65_536) {
        self.maximumValues = maximumValues
        self.maximumByteArray = maximumByteArray
        self.maximumDepth = maximumDepth
        self.maximumStringLength = maximumStringLength
    }
}
