/// A connected L2CAP socket on the LE ATT channel: a blocking `SOCK_SEQPACKET` descriptor (one ATT PDU per
/// send/recv) and the peer's address. A disconnect shows up as recv() failing with ECONNRESET.
public struct L2CAPConnection: ~Copyable, Sendable {
    /// The connected socket; move it out (`connection.socket.release()`) to hand it to a bearer.
    public var socket: SocketDescriptor
    /// Who is on the other end.
    public let peer: BluetoothPeer

    public init(socket: consuming SocketDescriptor, peer: BluetoothPeer) {
        self.socket = socket
        self.peer = peer
    }
}
