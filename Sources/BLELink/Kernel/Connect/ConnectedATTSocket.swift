/// A connected ATT socket handed over by value: the receiver owns `fileDescriptor` and must close it
/// (C's `ATTBearer(adopting:)` does).
public struct ConnectedATTSocket: Sendable, Equatable {
    public var fileDescriptor: Int32
    public var peer: BluetoothPeer

    public init(fileDescriptor: Int32, peer: BluetoothPeer) {
        self.fileDescriptor = fileDescriptor
        self.peer = peer
    }
}

extension L2CAPConnection {
    /// Gives up ownership of the socket: the returned value's descriptor must be closed by the receiver.
    public consuming func handOver() -> ConnectedATTSocket {
        let peer = self.peer
        return ConnectedATTSocket(fileDescriptor: socket.release(), peer: peer)
    }
}
