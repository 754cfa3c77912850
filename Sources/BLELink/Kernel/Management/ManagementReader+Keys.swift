extension ManagementReader {
    /// An identity address and its LE address type (1 public, 2 random); BR/EDR and unknown types throw.
    mutating func lePeer() throws(BluetoothError) -> BluetoothPeer {
        let address = try address()
        let rawType = try uint8()
        guard let type = BluetoothAddressType(rawValue: rawType), type != .bredr else {
            throw .malformedManagementPacket("\(context): address type \(rawType) is not LE public (1) or LE random (2)")
        }
        return BluetoothPeer(address: address, type: type)
    }

    /// Any address type the mgmt interface names: BR/EDR (0), LE public (1), LE random (2).
    mutating func peer() throws(BluetoothError) -> BluetoothPeer {
        let address = try address()
        let rawType = try uint8()
        guard let type = BluetoothAddressType(rawValue: rawType) else {
            throw .malformedManagementPacket("\(context): unknown address type \(rawType)")
        }
        return BluetoothPeer(address: address, type: type)
    }

    mutating func uint64() throws(BluetoothError) -> UInt64 {
        let b = try bytes(8)
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[b.startIndex + $1]) << (8 * UInt64($1)) }
    }

    /// A 0x00 / 0x01 octet; anything else throws (so decoded values encode back to the same bytes).
    mutating func flag(_ name: String) throws(BluetoothError) -> Bool {
        let raw = try uint8()
        guard raw <= 1 else { throw .malformedManagementPacket("\(context): \(name) is \(raw), not 0 or 1") }
        return raw == 1
    }

    /// Throws unless every byte was read: fixed-size structures have no trailing bytes.
    func finish() throws(BluetoothError) {
        guard remaining == 0 else {
            throw .malformedManagementPacket("\(context): \(remaining) bytes past the end of its layout")
        }
    }

    /// A `count`-prefixed list of `size`-byte entries whose count must match the bytes exactly.
    mutating func list<Element>(
        entrySize size: Int, _ decode: (inout ManagementReader) throws(BluetoothError) -> Element
    ) throws(BluetoothError) -> [Element] {
        let count = Int(try uint16())
        guard count * size == remaining else {
            throw .malformedManagementPacket("\(context): declares \(count) entries of \(size) bytes in \(remaining) bytes")
        }
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count { elements.append(try decode(&self)) }
        return elements
    }
}

extension Array where Element == UInt8 {
    mutating func appendManagementField(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func appendManagementPeer(_ peer: BluetoothPeer) {
        append(contentsOf: peer.address.littleEndianBytes)
        append(peer.type.rawValue)
    }

    /// An event packet: code, controller index, parameter length, parameters.
    static func managementEvent(code: UInt16, controllerIndex: UInt16, parameters: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.appendManagementField(code)
        out.appendManagementField(controllerIndex)
        out.appendManagementField(UInt16(truncatingIfNeeded: parameters.count))
        return out + parameters
    }
}

/// A management event's parameters, which know their event code and encode themselves.
public protocol ManagementEventParameters {
    static var code: UInt16 { get }
    func encode(into out: inout [UInt8])
}

extension ManagementEventParameters {
    /// The whole event packet on `controllerIndex` (for tests and simulators).
    public func encodedEvent(controllerIndex: UInt16) -> [UInt8] {
        var parameters: [UInt8] = []
        encode(into: &parameters)
        return .managementEvent(code: Self.code, controllerIndex: controllerIndex, parameters: parameters)
    }
}
