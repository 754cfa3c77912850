/// What a client did that the application hears about.
public enum GATTServerEvent: Sendable, Equatable {
    /// The MTU exchange settled the ATT_MTU at this value.
    case mtuExchanged(Int)
    /// The client wrote `value` to the attribute at `handle` (a Write Request, or a Write Command if not
    /// `withResponse`).
    case write(handle: UInt16, value: [UInt8], withResponse: Bool)
    /// An Execute Write Request wrote these values, in order.
    case preparedWritesExecuted([GATTWrite])
    /// The client changed its CCCD of the characteristic whose value is at `valueHandle`.
    case subscriptionChanged(valueHandle: UInt16, GATTSubscription)
    /// The client confirmed the outstanding indication of `valueHandle`.
    case indicationConfirmed(valueHandle: UInt16)
    /// The client broke the protocol; the bearer must be disconnected.
    case protocolViolation(String)
    /// An indication went unconfirmed for the transaction timeout; the bearer must be disconnected.
    case transactionTimedOut(valueHandle: UInt16)
}

/// One value written to one handle.
public struct GATTWrite: Sendable, Equatable {
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// A client's CCCD value: which pushes it wants.
public struct GATTSubscription: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notifications = GATTSubscription(rawValue: 0x0001)
    public static let indications = GATTSubscription(rawValue: 0x0002)
}
