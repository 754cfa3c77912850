/// A request's idempotency key: 1 to 64 characters from `A-Z a-z 0-9 . _ : -`. Retrying with the same id
/// returns the recorded response instead of running the command again.
public struct RequestID: Sendable, Hashable, CustomStringConvertible {
    public static let maximumLength = 64

    public let value: String

    /// Validates `value`.
    public init(_ value: String) throws(ExchangeError) {
        guard !value.isEmpty, value.utf8.count <= Self.maximumLength else {
            throw .invalidRequestID("must be 1 to \(Self.maximumLength) characters, not \(value.utf8.count)")
        }
        guard value.utf8.allSatisfy(Self.isAllowed) else {
            throw .invalidRequestID("'\(value)' may only contain A-Z a-z 0-9 . _ : -")
        }
        self.value = value
    }

    /// A new random id: 32 lowercase hex digits (128 bits from the system's secure generator).
    public static func random() -> RequestID {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        // The alphabet is valid, so this cannot fail.
        return try! RequestID(String((0..<32).map { _ in digits[Int(generator.next() % 16)] }))
    }

    public var description: String { value }

    var bytes: [UInt8] { Array(value.utf8) }

    init(decoding bytes: some Collection<UInt8>) throws(ExchangeError) {
        try self.init(String(decoding: bytes, as: UTF8.self))
        guard self.bytes.elementsEqual(bytes) else { throw .invalidRequestID("not ASCII") }
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
