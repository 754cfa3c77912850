/// The IO capability the host declares for pairing (mgmt Set IO Capability; SMP's values).
public enum IOCapability: UInt8, Sendable, Hashable, CaseIterable {
    case displayOnly = 0
    case displayYesNo = 1
    case keyboardOnly = 2
    case noInputNoOutput = 3
    case keyboardDisplay = 4
}

/// Set Bondable (command 0x0009): whether pairing may create bonds. The kernel refuses a peer's pairing
/// request that asks for bonding ("Pairing Not Supported") while the controller is not bondable.
/// Returns the controller's current settings.
public struct SetBondable: Equatable, Sendable {
    public static let opcode: UInt16 = 0x0009
    public var bondable: Bool

    public init(_ bondable: Bool) { self.bondable = bondable }

    /// Decodes the parameters (1 byte, 0 or 1).
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "Set Bondable")
        bondable = try reader.flag("Bondable")
        try reader.finish()
    }

    public func encode(into out: inout [UInt8]) { out.append(bondable ? 1 : 0) }

    public func command(_ controllerIndex: UInt16) -> ManagementCommand {
        ManagementCommand(opcode: Self.opcode, controllerIndex: controllerIndex, parameters: [bondable ? 1 : 0], name: "Set Bondable")
    }
}

/// Set IO Capability (command 0x0018).
public struct SetIOCapability: Equatable, Sendable {
    public static let opcode: UInt16 = 0x0018
    public var capability: IOCapability

    public init(_ capability: IOCapability) { self.capability = capability }

    /// Decodes the parameters (1 byte, 0-4).
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "Set IO Capability")
        let raw = try reader.uint8()
        try reader.finish()
        guard let capability = IOCapability(rawValue: raw) else {
            throw .malformedManagementPacket("Set IO Capability: unknown capability \(raw)")
        }
        self.capability = capability
    }

    public func encode(into out: inout [UInt8]) { out.append(capability.rawValue) }

    public func command(_ controllerIndex: UInt16) -> ManagementCommand {
        ManagementCommand(
            opcode: Self.opcode, controllerIndex: controllerIndex, parameters: [capability.rawValue], name: "Set IO Capability")
    }
}

/// Unpair Device (command 0x001B): the kernel forgets the peer's keys (LTK, IRK) and, with `disconnect`,
/// ends its link. Fails with Not Paired when it had none.
public struct UnpairDevice: Equatable, Sendable {
    public static let opcode: UInt16 = 0x001B
    public var peer: BluetoothPeer
    public var disconnect: Bool

    public init(peer: BluetoothPeer, disconnect: Bool = true) {
        self.peer = peer
        self.disconnect = disconnect
    }

    /// Decodes the parameters (8 bytes exactly).
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "Unpair Device")
        peer = try reader.peer()
        disconnect = try reader.flag("Disconnect")
        try reader.finish()
    }

    public func encode(into out: inout [UInt8]) {
        out.appendManagementPeer(peer)
        out.append(disconnect ? 1 : 0)
    }

    public func command(_ controllerIndex: UInt16) -> ManagementCommand {
        var parameters: [UInt8] = []
        encode(into: &parameters)
        return ManagementCommand(opcode: Self.opcode, controllerIndex: controllerIndex, parameters: parameters, name: "Unpair Device")
    }
}

/// Set Secure Connections (command 0x002D): 0 off, 1 on (LE Secure Connections preferred, legacy pairing still
/// accepted), 2 Secure Connections only. Returns the controller's current settings.
public struct SetSecureConnections: Equatable, Sendable {
    public static let opcode: UInt16 = 0x002D
    public var mode: UInt8

    public init(mode: UInt8) { self.mode = mode }

    /// Decodes the parameters (1 byte, 0-2).
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "Set Secure Connections")
        mode = try reader.uint8()
        try reader.finish()
        guard mode <= 2 else { throw .malformedManagementPacket("Set Secure Connections: mode \(mode), not 0-2") }
    }

    public func encode(into out: inout [UInt8]) { out.append(mode) }

    public func command(_ controllerIndex: UInt16) -> ManagementCommand {
        ManagementCommand(opcode: Self.opcode, controllerIndex: controllerIndex, parameters: [mode], name: "Set Secure Connections")
    }
}
