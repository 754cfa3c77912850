/// A service found on the peer: its UUID and handle group.
public struct GATTRemoteService: Sendable, Equatable {
    public var uuid: BluetoothUUID
    public var handles: ATTHandleRange
}

/// A characteristic found on the peer.
public struct GATTRemoteCharacteristic: Sendable, Equatable {
    public var uuid: BluetoothUUID
    public var properties: GATTCharacteristicProperties
    public var declarationHandle: UInt16
    public var valueHandle: UInt16
    /// The last handle of the characteristic (its last descriptor).
    public var endHandle: UInt16
}

/// A descriptor found on the peer.
public struct GATTRemoteDescriptor: Sendable, Equatable {
    public var handle: UInt16
    public var uuid: BluetoothUUID
}

/// A value the server pushed: a notification or (confirmed already) an indication.
public struct GATTNotification: Sendable, Equatable {
    public var handle: UInt16
    public var value: [UInt8]
    public var isIndication: Bool

    public init(handle: UInt16, value: [UInt8], isIndication: Bool) {
        self.handle = handle
        self.value = value
        self.isIndication = isIndication
    }
}
