/// The value of the msgpipe info characteristic: what the peripheral speaks (docs/PROTOCOL.md, 5.2).
///
///     offset size  field
///     0      1     layout version (1)
///     1      1     msgpipe packet format version (1)
///     2      1     supported formats: bit 0 msgpipe, bit 1 legacy, bit 2 eom, bit 3 lines
///     3      1     reserved, 0
///     4      4     maximum message size in bytes, little-endian
///     8      2     the server's ATT MTU, little-endian
///     10     2     layout 2 only: the PSM of the server's LE credit-based channel, little-endian
///
/// Layout 1 (10 bytes) is written without a channel, layout 2 (12 bytes) with one; readers ignore what
/// follows the fields they know.
public struct MsgPipeServiceInfo: Sendable, Equatable {
    /// The message framings a peripheral accepts.
    public struct Formats: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let msgpipe = Formats(rawValue: 0x01)
        public static let legacy = Formats(rawValue: 0x02)
        public static let eom = Formats(rawValue: 0x04)
        public static let lines = Formats(rawValue: 0x08)
        public static let all: Formats = [.msgpipe, .legacy, .eom, .lines]
    }

    public static let layoutVersion: UInt8 = 1
    /// The layout that adds the channel's PSM.
    public static let channelLayoutVersion: UInt8 = 2
    public static let encodedLength = 10

    public var protocolVersion: UInt8
    public var formats: Formats
    public var maximumMessageSize: UInt32
    public var serverMTU: UInt16
    /// The PSM of the LE credit-based channel the server also accepts (nil: none, GATT only).
    public var psm: UInt16?

    public init(
        protocolVersion: UInt8 = 1, formats: Formats = .all, maximumMessageSize: UInt32, serverMTU: UInt16,
        psm: UInt16? = nil
    ) {
        self.protocolVersion = protocolVersion
        self.formats = formats
        self.maximumMessageSize = maximumMessageSize
        self.serverMTU = serverMTU
        self.psm = psm
    }

    /// Decodes the characteristic value; bytes after the known layout are ignored (later layouts append).
    public init(decoding value: [UInt8]) throws(ATTDecodeError) {
        guard value.count >= Self.encodedLength else {
            throw .truncated(opcode: ATTOpcode.readResponse, needed: Self.encodedLength, found: value.count)
        }
        guard value[0] >= Self.layoutVersion else {
            throw .invalidField(opcode: ATTOpcode.readResponse, field: "info layout version", value: Int(value[0]))
        }
        protocolVersion = value[1]
        formats = Formats(rawValue: value[2])
        maximumMessageSize = (0..<4).reduce(0) { $0 | UInt32(value[4 + $1]) << (8 * $1) }
        serverMTU = UInt16(value[8]) | UInt16(value[9]) << 8
        let psm = value.count >= 12 && value[0] >= Self.channelLayoutVersion ? UInt16(value[10]) | UInt16(value[11]) << 8 : 0
        self.psm = psm == 0 ? nil : psm
    }

    /// The characteristic value.
    public var bytes: [UInt8] {
        var out: [UInt8] = [psm == nil ? Self.layoutVersion : Self.channelLayoutVersion, protocolVersion, formats.rawValue, 0]
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: maximumMessageSize >> shift)) }
        out.appendLittleEndian(serverMTU)
        if let psm { out.appendLittleEndian(psm) }
        return out
    }
}
