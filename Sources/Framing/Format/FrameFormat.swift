/// The wire formats msgpipe speaks, chosen by name on the command line and by the GATT layer.
public enum FrameFormat: String, CaseIterable, Sendable {
    /// The binary msgpipe format (PROTOCOL 1-2): headers, CRC-32, interleaving, duplicate detection.
    case msgpipe
    /// The seeds' text markers: `Start` + data, data, `End` + data (PROTOCOL 4.1).
    case legacy
    /// Apple's transfer sample: raw chunks, then a value that is exactly `EOM` (PROTOCOL 4.2).
    case eom
    /// Newline-terminated text, as Nordic UART apps send it (PROTOCOL 4.3).
    case lines

    /// The smallest packet size with which this format carries any payload.
    public var minimumPacketSize: Int {
        switch self {
        case .msgpipe: 1 + MessageHeader(messageID: .max, length: .max, correlationID: .max).encodedCount + 1
        case .legacy: LegacyEncoder<[UInt8]>.minimumPacketSize
        case .eom: EOMEncoder<[UInt8]>.minimumPacketSize
        case .lines: LinesEncoder<[UInt8]>.minimumPacketSize
        }
    }

    /// An encoder for one message in this format; `messageID` is used by msgpipe only.
    public func makeEncoder<Payload: PayloadBytes>(
        payload: Payload, packetSize: Int, messageID: UInt32 = 1
    ) throws(FramingError) -> any FrameEncoder where Payload.Index == Int {
        switch self {
        case .msgpipe: try MsgPipeEncoder(payload: payload, messageID: messageID, packetSize: packetSize)
        case .legacy: try LegacyEncoder(payload: payload, packetSize: packetSize)
        case .eom: try EOMEncoder(payload: payload, packetSize: packetSize)
        case .lines: try LinesEncoder(payload: payload, packetSize: packetSize)
        }
    }

    /// A decoder for this format, bounded by `limits`.
    public func makeDecoder(limits: ReassemblyLimits = ReassemblyLimits()) -> any FrameDecoder {
        switch self {
        case .msgpipe: MsgPipeReassembler(limits: limits)
        case .legacy: LegacyDecoder(limits: limits)
        case .eom: EOMDecoder(limits: limits)
        case .lines: LinesDecoder(limits: limits)
        }
    }
}
