/// User Confirmation Request (event 0x000F): pairing waits for user space to accept or reject.
/// `confirmHint` true asks a plain yes/no (Just Works); false asks to compare `value` (numeric comparison).
public struct UserConfirmationRequest: ManagementEventParameters, Equatable, Sendable {
    public static let code: UInt16 = 0x000F
    public var peer: BluetoothPeer
    public var confirmHint: Bool
    /// The six-digit number to compare (0-999999) when `confirmHint` is false.
    public var value: UInt32

    public init(peer: BluetoothPeer, confirmHint: Bool, value: UInt32 = 0) {
        self.peer = peer
        self.confirmHint = confirmHint
        self.value = value
    }

    /// Decodes the event parameters (12 bytes exactly).
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "User Confirmation Request")
        peer = try reader.peer()
        confirmHint = try reader.flag("Confirm_Hint")
        value = try reader.uint32()
        try reader.finish()
    }

    public func encode(into out: inout [UInt8]) {
        out.appendManagementPeer(peer)
        out.append(confirmHint ? 1 : 0)
        out.appendManagementField(value)
    }
}

/// User Confirmation Reply (command 0x001C) or, when `accept` is false, User Confirmation Negative Reply
/// (0x001D): `address(6) | address type(1)`.
public struct UserConfirmationReply: Equatable, Sendable {
    public static let acceptOpcode: UInt16 = 0x001C
    public static let rejectOpcode: UInt16 = 0x001D
    public var peer: BluetoothPeer
    public var accept: Bool

    public init(peer: BluetoothPeer, accept: Bool) {
        self.peer = peer
        self.accept = accept
    }

    /// Decodes the parameters of the command with `opcode` (7 bytes exactly).
    public init(opcode: UInt16, decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        guard opcode == Self.acceptOpcode || opcode == Self.rejectOpcode else {
            throw .malformedManagementPacket("opcode 0x\(String(opcode, radix: 16)) is not a User Confirmation Reply")
        }
        var reader = ManagementReader(parameters, context: "User Confirmation Reply")
        peer = try reader.peer()
        try reader.finish()
        accept = opcode == Self.acceptOpcode
    }

    public var opcode: UInt16 { accept ? Self.acceptOpcode : Self.rejectOpcode }

    public func encode(into out: inout [UInt8]) { out.appendManagementPeer(peer) }

    public func command(_ controllerIndex: UInt16) -> ManagementCommand {
        var parameters: [UInt8] = []
        encode(into: &parameters)
        return ManagementCommand(
            opcode: opcode, controllerIndex: controllerIndex, parameters: parameters,
            name: accept ? "User Confirmation Reply" : "User Confirmation Negative Reply")
    }
}
