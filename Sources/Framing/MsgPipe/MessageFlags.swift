/// The flags byte of a message header (PROTOCOL 1.2). Bits 6-7 are reserved and rejected on receipt.
public struct MessageFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The body is zlib-deflated.
    public static let deflate = MessageFlags(rawValue: 1 << 0)
    /// The body is encrypted.
    public static let sealed = MessageFlags(rawValue: 1 << 1)
    /// The sender expects acknowledgements (Transport): the Start packet ends with a 2-byte check, so plain
    /// framing refuses such messages.
    public static let reliable = MessageFlags(rawValue: 1 << 2)
    /// The message is a request that expects a response.
    public static let request = MessageFlags(rawValue: 1 << 3)
    /// The message answers a request; a correlation id follows the length.
    public static let response = MessageFlags(rawValue: 1 << 4)

    /// Every packet of the message ends with a 2-byte check (Transport, PROTOCOL 3.3). Plain framing
    /// refuses such messages: only a Transport receiver strips and verifies the checks.
    public static let checked = MessageFlags(rawValue: 1 << 5)

    /// Bits version 1 reserves.
    public static let reserved = MessageFlags(rawValue: 0xC0)
}
