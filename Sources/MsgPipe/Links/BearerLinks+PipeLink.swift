public import BLELink
public import BlueZLink
public import GATT

/// msgpipe's own GATT, client or server, over one ATT bearer after another.
extension GATTLink: PipeLink {
    public var carrier: Carrier { .gatt }
    /// Read from the kernel's ATT socket (`BT_PHY`); nil over a UNIX socket or without a connection.
    public var phy: LinkPHY? { (bearer as? ATTBearer)?.phy }
}

/// A characteristic pair bluetoothd acquired for one central: one connection, never confirmed (bluetoothd
/// answers the writes and notifies on its own).
extension AcquiredLink: PipeLink {
    public var carrier: Carrier { .gatt }
    public var peerInfo: MsgPipeServiceInfo? { nil }
    public var canConfirm: Bool { false }

    /// As `send(_:)`: nothing confirms a packet through bluetoothd's acquired descriptors.
    public func sendConfirmed(_ packet: [UInt8]) async throws {
        try await send(packet)
    }

    /// Ends the connection (`disconnect(reason:)` with "dropped locally").
    public func disconnect() async {
        disconnect(reason: "dropped locally")
    }
}

/// A central's LE credit-based channel accepted by the peripheral: one connection.
extension StreamLink: PipeLink {
    public var carrier: Carrier { .l2cap }
    public var peerInfo: MsgPipeServiceInfo? { nil }
    public var canConfirm: Bool { true }

    /// Closes the channel: a channel carries one connection.
    public func disconnect() async {
        await close()
    }
}
