/// Every way framing can fail, with the context a user needs; `description` is what the CLI prints as is.
public enum FramingError: Error, Sendable, Equatable, CustomStringConvertible {
    // Decoding one packet.
    /// A packet of zero bytes where the format needs at least a header byte.
    case emptyPacket
    /// The packet ended inside the named field.
    case truncatedPacket(field: String)
    /// A ULEB128 field is longer than 5 bytes, not minimally encoded, or above 2^32 - 1.
    case malformedULEB128(field: String)
    /// The message header announces a format version this decoder does not speak.
    case unsupportedVersion(UInt8)
    /// The message header announces a kind other than data (0) or control (1).
    case unknownMessageKind(UInt8)
    /// A message sets flag bits that version 1 reserves.
    case reservedFlags(UInt8, messageID: UInt32)
    /// A message sets the `reliable` or `checked` flag: its packets carry Transport's checks (PROTOCOL 3.3: a
    /// reliable message's Start, a checked message's every packet), which only a Transport receiver reads.
    case checkedMessage(messageID: UInt32)
    /// A Start packet also sets the explicit-offset bit.
    case explicitOffsetOnStartPacket
    /// A control packet's header is not exactly the one section 2 prescribes.
    case malformedControlPacket(reason: String)

    // Reassembly.
    /// A continuation packet arrived on a channel with no message in progress.
    case packetOutsideMessage(channel: UInt8)
    /// A packet was lost: the sequence or stream offset jumped; the partial message was dropped.
    case missingPacket(messageID: UInt32, channel: UInt8, detail: String)
    /// A new message started on a channel before the previous one ended; the partial one was dropped.
    case messageInterrupted(messageID: UInt32?, channel: UInt8, receivedBytes: Int)
    /// Packets carried more bytes than the announced length plus the CRC trailer.
    case streamOverrun(messageID: UInt32, expected: Int)
    /// The End packet arrived before the announced number of bytes.
    case endBeforeComplete(messageID: UInt32, received: Int, expected: Int)
    /// All announced bytes arrived but the packet carrying the last of them lacks the End bit.
    case missingEndFlag(messageID: UInt32)
    /// The CRC-32 trailer does not match the body.
    case crcMismatch(messageID: UInt32, expected: UInt32, actual: UInt32)
    /// The announced (or accumulated) size is above the configured maximum message size.
    case messageTooLarge(messageID: UInt32?, size: Int, limit: Int)
    /// Accepting this message would exceed the maximum number of messages in progress.
    case tooManyMessagesInProgress(messageID: UInt32, limit: Int)
    /// Accepting this message would exceed the maximum number of buffered bytes.
    case bufferedBytesExceeded(messageID: UInt32, needed: Int, limit: Int)
    /// A partial message received nothing for longer than the stale timeout and was dropped.
    case staleMessage(messageID: UInt32?, channel: UInt8, receivedBytes: Int)
    /// The input ended (or the decoder was finished) while a message was still partial.
    case incompleteMessage(messageID: UInt32?, channel: UInt8, receivedBytes: Int)
    /// A value of a text-marker format arrived while no message was open; it was dropped.
    case valueOutsideMessage(format: String, size: Int)
    /// A packet is longer than the configured packet size.
    case packetTooLarge(size: Int, limit: Int)
    /// A frame on a byte stream announces `length` bytes, outside 1...`limit`: the stream cannot be trusted.
    case invalidFrameLength(length: Int, limit: Int)

    // Encoding.
    /// The packet size cannot carry this format's headers or markers.
    case packetSizeTooSmall(format: String, packetSize: Int, minimum: Int)
    /// The payload is longer than the format can describe.
    case payloadTooLarge(size: Int, limit: Int)
    /// The `lines` format cannot carry a payload that itself contains a newline.
    case payloadContainsNewline(offset: Int)
    /// A control payload does not fit in one packet.
    case controlPayloadTooLarge(size: Int, limit: Int)
    /// Channels are numbered 0 to 3.
    case invalidChannel(UInt8)
    /// A packet index beyond the message's packet count was requested.
    case packetIndexOutOfRange(index: Int, count: Int)
    /// A stream offset beyond the message's stream was requested.
    case streamOffsetOutOfRange(offset: Int, streamCount: Int)

    public var description: String {
        switch self {
        case .emptyPacket: "empty packet"
        case let .truncatedPacket(field): "truncated packet: it ends inside the \(field)"
        case let .malformedULEB128(field): "malformed ULEB128 \(field)"
        case let .unsupportedVersion(version): "unsupported version \(version)"
        case let .unknownMessageKind(kind): "unknown message kind \(kind)"
        case let .reservedFlags(bits, id): "reserved flag bits 0x\(String(bits, radix: 16)) set in message \(id)"
        case let .checkedMessage(id):
            "message \(id) carries Transport's per-packet checks; plain framing cannot read it (use msgpipe listen)"
        case .explicitOffsetOnStartPacket: "malformed packet: Start packet with an explicit offset"
        case let .malformedControlPacket(reason): "malformed control packet: \(reason)"
        case let .packetOutsideMessage(channel): "packet outside a message on channel \(channel)"
        case let .missingPacket(id, channel, detail):
            "missing packet in message \(id) on channel \(channel) (\(detail)); message dropped"
        case let .messageInterrupted(id, channel, received):
            "\(Self.name(id, channel)) interrupted by a new message after \(received) bytes; partial message dropped"
        case let .streamOverrun(id, expected):
            "malformed message \(id): more than the announced \(expected) bytes (body and CRC)"
        case let .endBeforeComplete(id, received, expected):
            "malformed message \(id): End packet after \(received) of \(expected) bytes (body and CRC)"
        case let .missingEndFlag(id): "malformed message \(id): its last packet lacks the End bit"
        case let .crcMismatch(id, expected, actual):
            "CRC mismatch in message \(id) (trailer 0x\(Hex.string(expected)), computed 0x\(Hex.string(actual)))"
        case let .messageTooLarge(id, size, limit):
            "\(Self.name(id, nil)) of \(size) bytes exceeds the maximum message size of \(limit)"
        case let .tooManyMessagesInProgress(id, limit):
            "message \(id) dropped: more than \(limit) messages in progress"
        case let .bufferedBytesExceeded(id, needed, limit):
            "message \(id) dropped: buffering it needs \(needed) bytes, over the limit of \(limit)"
        case let .staleMessage(id, channel, received):
            "\(Self.name(id, channel)) went stale after \(received) bytes; partial message dropped"
        case let .incompleteMessage(id, channel, received):
            "input ended inside \(Self.name(id, channel)) after \(received) bytes"
        case let .valueOutsideMessage(format, size): "\(format) value of \(size) bytes outside a message dropped"
        case let .packetTooLarge(size, limit): "packet of \(size) bytes exceeds the packet size of \(limit)"
        case let .invalidFrameLength(length, limit): "a stream frame announces \(length) bytes, outside 1...\(limit)"
        case let .packetSizeTooSmall(format, packetSize, minimum):
            "packet size \(packetSize) too small for the \(format) format (minimum \(minimum), MTU \(minimum + 3))"
        case let .payloadTooLarge(size, limit): "payload of \(size) bytes exceeds the format's limit of \(limit)"
        case let .payloadContainsNewline(offset):
            "the lines format cannot carry this payload: it contains a newline at byte \(offset)"
        case let .controlPayloadTooLarge(size, limit):
            "control payload of \(size) bytes does not fit in one packet (at most \(limit))"
        case let .invalidChannel(channel): "invalid channel \(channel) (channels are 0-3)"
        case let .packetIndexOutOfRange(index, count): "packet index \(index) out of range (message has \(count))"
        case let .streamOffsetOutOfRange(offset, count): "stream offset \(offset) out of range (stream has \(count))"
        }
    }

    private static func name(_ id: UInt32?, _ channel: UInt8?) -> String {
        switch (id, channel) {
        case let (id?, channel?): "message \(id) on channel \(channel)"
        case let (id?, nil): "message \(id)"
        case (nil, _): "a message"
        }
    }
}
