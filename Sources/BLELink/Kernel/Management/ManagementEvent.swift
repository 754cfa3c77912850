import GATT
/// One event from the kernel's Bluetooth management interface, decoded from
/// `event code | controller index | length | params` (BlueZ doc/mgmt-api.txt).
public struct ManagementEvent: Equatable, Sendable {
    /// The controller the event concerns (0xFFFF: none).
    public var controllerIndex: UInt16
    public var kind: Kind

    /// The events msgpipe acts on; the rest are kept as ``Kind/other(code:parameters:)``.
    public enum Kind: Equatable, Sendable {
        /// 0x0001: a command finished; `returnParameters` are the command's result.
        case commandComplete(opcode: UInt16, status: ManagementStatus, returnParameters: [UInt8])
        /// 0x0002: a command failed (or was accepted without a result).
        case commandStatus(opcode: UInt16, status: ManagementStatus)
        /// 0x0004 / 0x0005: a controller appeared or disappeared.
        case indexAdded
        case indexRemoved
        /// 0x0006: the controller's settings changed.
        case newSettings(ControllerSettings)
        /// 0x000B: an LE or BR/EDR connection is up.
        case deviceConnected(BluetoothPeer)
        /// 0x000C: a connection went down, with the mgmt reason code.
        case deviceDisconnected(BluetoothPeer, reason: UInt8)
        /// 0x0012: a device was seen while discovering.
        case deviceFound(DeviceFound)
        /// 0x0013: discovery started or stopped.
        case discovering(addressTypes: UInt8, active: Bool)
        /// 0x0023 / 0x0024: an advertising instance was added or removed.
        case advertisingAdded(instance: UInt8)
        case advertisingRemoved(instance: UInt8)
        /// 0x000A: pairing produced a Long Term Key.
        case newLongTermKey(NewLongTermKey)
        /// 0x000F: pairing waits for a yes/no or a number comparison.
        case userConfirmationRequest(UserConfirmationRequest)
        /// 0x0011: pairing or encryption with a peer failed.
        case authenticationFailed(AuthenticationFailed)
        /// 0x0018: the peer distributed its Identity Resolving Key.
        case newIdentityResolvingKey(NewIdentityResolvingKey)
        /// 0x0019: pairing produced a Signature Resolving Key.
        case newSignatureResolvingKey(NewSignatureResolvingKey)
        /// 0x001C: the kernel accepted a peer's request for new connection parameters (trusted sockets only).
        case newConnectionParameter(NewConnectionParameter)
        case other(code: UInt16, parameters: [UInt8])
    }

    public init(controllerIndex: UInt16, kind: Kind) {
        self.controllerIndex = controllerIndex
        self.kind = kind
    }

    /// Decodes one event packet (one `read` from the mgmt socket). The declared length must match the bytes.
    public init(decoding packet: ArraySlice<UInt8>) throws(BluetoothError) {
        var header = ManagementReader(packet, context: "event header")
        let code = try header.uint16()
        controllerIndex = try header.uint16()
        let length = Int(try header.uint16())
        guard length == header.remaining else {
            throw .malformedManagementPacket(
                "event 0x\(String(code, radix: 16)) declares \(length) parameter bytes, carries \(header.remaining)")
        }
        var reader = ManagementReader(header.rest(), context: "event 0x\(String(code, radix: 16))")
        switch code {
        case 0x0001:
            let opcode = try reader.uint16()
            let status = ManagementStatus(rawValue: try reader.uint8())
            kind = .commandComplete(opcode: opcode, status: status, returnParameters: Array(reader.rest()))
        case 0x0002:
            kind = .commandStatus(opcode: try reader.uint16(), status: ManagementStatus(rawValue: try reader.uint8()))
        case 0x0004: kind = .indexAdded
        case 0x0005: kind = .indexRemoved
        case 0x0006: kind = .newSettings(ControllerSettings(rawValue: try reader.uint32()))
        case 0x000B:
            let peer = try Self.peer(&reader)
            _ = try reader.uint32()  // flags
            let eirLength = Int(try reader.uint16())
            _ = try reader.bytes(eirLength)
            kind = .deviceConnected(peer)
        case 0x000C:
            let peer = try Self.peer(&reader)
            kind = .deviceDisconnected(peer, reason: try reader.uint8())
        case NewLongTermKey.code: kind = .newLongTermKey(try NewLongTermKey(decoding: reader.rest()))
        case UserConfirmationRequest.code:
            kind = .userConfirmationRequest(try UserConfirmationRequest(decoding: reader.rest()))
        case AuthenticationFailed.code: kind = .authenticationFailed(try AuthenticationFailed(decoding: reader.rest()))
        case NewIdentityResolvingKey.code:
            kind = .newIdentityResolvingKey(try NewIdentityResolvingKey(decoding: reader.rest()))
        case NewSignatureResolvingKey.code:
            kind = .newSignatureResolvingKey(try NewSignatureResolvingKey(decoding: reader.rest()))
        case NewConnectionParameter.code:
            kind = .newConnectionParameter(try NewConnectionParameter(decoding: reader.rest()))
        case 0x0012:
            kind = .deviceFound(try DeviceFound(decoding: &reader))
        case 0x0013:
            kind = .discovering(addressTypes: try reader.uint8(), active: try reader.uint8() != 0)
        case 0x0023: kind = .advertisingAdded(instance: try reader.uint8())
        case 0x0024: kind = .advertisingRemoved(instance: try reader.uint8())
        default: kind = .other(code: code, parameters: Array(reader.rest()))
        }
    }

    private static func peer(_ reader: inout ManagementReader) throws(BluetoothError) -> BluetoothPeer {
        let address = try reader.address()
        let rawType = try reader.uint8()
        guard let type = BluetoothAddressType(rawValue: rawType) else {
            throw .malformedManagementPacket("\(reader.context): unknown address type \(rawType)")
        }
        return BluetoothPeer(address: address, type: type)
    }
}

/// A Device Found event: who advertised, how loud, and what (advertising data merged with scan response).
public struct DeviceFound: Equatable, Sendable {
    public var peer: BluetoothPeer
    /// Received signal strength in dBm (127: not available).
    public var rssi: Int8
    public var flags: UInt32
    /// The raw EIR / advertising data, decoded lazily by ``advertisingData()``.
    public var eir: [UInt8]

    public init(peer: BluetoothPeer, rssi: Int8, flags: UInt32 = 0, eir: [UInt8]) {
        self.peer = peer
        self.rssi = rssi
        self.flags = flags
        self.eir = eir
    }

    init(decoding reader: inout ManagementReader) throws(BluetoothError) {
        let address = try reader.address()
        let rawType = try reader.uint8()
        guard let type = BluetoothAddressType(rawValue: rawType) else {
            throw .malformedManagementPacket("Device Found: unknown address type \(rawType)")
        }
        peer = BluetoothPeer(address: address, type: type)
        rssi = Int8(bitPattern: try reader.uint8())
        flags = try reader.uint32()
        let eirLength = Int(try reader.uint16())
        guard eirLength == reader.remaining else {
            throw .malformedManagementPacket("Device Found declares \(eirLength) EIR bytes, carries \(reader.remaining)")
        }
        eir = Array(try reader.bytes(eirLength))
    }

    /// The packet bytes of this event on `controllerIndex` (for tests and simulators).
    public func encodedEvent(controllerIndex: UInt16) -> [UInt8] {
        var out: [UInt8] = []
        out.appendManagementField(UInt16(0x0012))
        out.appendManagementField(controllerIndex)
        out.appendManagementField(UInt16(truncatingIfNeeded: 14 + eir.count))
        out += peer.address.littleEndianBytes
        out.append(peer.type.rawValue)
        out.append(UInt8(bitPattern: rssi))
        out.appendManagementField(flags)
        out.appendManagementField(UInt16(truncatingIfNeeded: eir.count))
        out += eir
        return out
    }

    /// The advertising data structures.
    public func advertisingData() throws(BluetoothError) -> AdvertisingData {
        try AdvertisingData(decoding: eir[...])
    }
}
