public import GATT

/// New Connection Parameter (event 0x001C): the kernel accepted a peer's L2CAP Connection Parameter Update
/// Request and issued LE Connection Update with these values (`Address (6) | Address_Type (1) | Store_Hint (1)
/// | Min_Interval (2) | Max_Interval (2) | Latency (2) | Timeout (2)`, 16 bytes). The kernel sends it only to
/// trusted mgmt sockets (bound with CAP_NET_ADMIN). Values are kept raw, so any 16 bytes decode and encode back.
public struct NewConnectionParameter: ManagementEventParameters, Equatable, Sendable {
    public static let code: UInt16 = 0x001C
    public var peer: BluetoothPeer
    /// 1 when the kernel holds an entry for the peer (updated to these values), 0 when it does not.
    public var storeHint: UInt8
    /// Interval range in 1.25 ms units, latency in connection events, timeout in 10 ms units.
    public var minimumInterval: UInt16
    public var maximumInterval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16

    public init(
        peer: BluetoothPeer, storeHint: UInt8 = 0, minimumInterval: UInt16, maximumInterval: UInt16, latency: UInt16,
        supervisionTimeout: UInt16
    ) {
        self.peer = peer
        self.storeHint = storeHint
        self.minimumInterval = minimumInterval
        self.maximumInterval = maximumInterval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    /// Decodes the event parameters (16 bytes exactly); a short or long input throws
    /// ``BluetoothError/malformedManagementPacket(_:)``.
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "New Connection Parameter")
        peer = try reader.peer()
        storeHint = try reader.uint8()
        minimumInterval = try reader.uint16()
        maximumInterval = try reader.uint16()
        latency = try reader.uint16()
        supervisionTimeout = try reader.uint16()
        try reader.finish()
    }

    public func encode(into out: inout [UInt8]) {
        out.appendManagementPeer(peer)
        out.append(storeHint)
        out.appendManagementField(minimumInterval)
        out.appendManagementField(maximumInterval)
        out.appendManagementField(latency)
        out.appendManagementField(supervisionTimeout)
    }

    /// The values as ``ConnectionParameters``; throws the rule they break (the kernel checks them before it
    /// accepts, so a throw means a kernel or a packet msgpipe does not understand).
    public func connectionParameters() throws(ConnectionParametersError) -> ConnectionParameters {
        try ConnectionParameters(
            minimumInterval: minimumInterval, maximumInterval: maximumInterval, latency: latency,
            supervisionTimeout: supervisionTimeout)
    }
}
