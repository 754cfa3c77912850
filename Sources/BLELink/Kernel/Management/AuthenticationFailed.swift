/// Authentication Failed (event 0x0011): pairing or encryption with a peer failed with an HCI status.
public struct AuthenticationFailed: ManagementEventParameters, Equatable, Sendable {
    public static let code: UInt16 = 0x0011
    public var peer: BluetoothPeer
    /// The HCI status: 0x05 Authentication Failure, 0x06 PIN or Key Missing, ...
    public var status: UInt8

    public init(peer: BluetoothPeer, status: UInt8) {
        self.peer = peer
        self.status = status
    }

    /// Decodes the event parameters (8 bytes exactly).
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "Authentication Failed")
        peer = try reader.peer()
        status = try reader.uint8()
        try reader.finish()
    }

    public func encode(into out: inout [UInt8]) {
        out.appendManagementPeer(peer)
        out.append(status)
    }

    /// The status in words, where the kernel's SMP and HCI use it for pairing.
    public var statusDescription: String {
        switch status {
        case 0x05: "authentication failure (0x05)"
        case 0x06: "PIN or key missing (0x06)"
        case 0x0E: "rejected (0x0E)"
        default: "HCI status 0x\(String(status, radix: 16))"
        }
    }
}
