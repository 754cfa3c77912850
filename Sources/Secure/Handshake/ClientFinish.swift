/// The initiator's key confirmation: `01 03 confirmation[32]` (34 bytes), sent as a plain message.
public struct ClientFinish: Sendable, Equatable {
    static let count = 2 + SecureWire.confirmationSize

    public var confirmation: [UInt8]

    public init(confirmation: [UInt8]) {
        self.confirmation = confirmation
    }

    public init(decoding bytes: ArraySlice<UInt8>) throws(SecureError) {
        confirmation = Array(try SecureWire.body(of: bytes, type: .clientFinish, count: Self.count, name: "ClientFinish"))
    }

    public func encode(into out: inout [UInt8]) {
        out += [SecureWire.version, SecureWire.MessageType.clientFinish.rawValue]
        out += confirmation
    }
}
