import Testing
@testable import Framing

@Suite("framing error descriptions")
struct FramingErrorTests {
    static let cases: [(FramingError, String)] = [
        (.crcMismatch(messageID: 7, expected: 0x3610_A686, actual: 1),
            "CRC mismatch in message 7 (trailer 0x3610a686, computed 0x00000001)"),
        (.unsupportedVersion(2), "unsupported version 2"),
        (.reservedFlags(0x80, messageID: 3), "reserved flag bits 0x80 set in message 3"),
        (.checkedMessage(messageID: 4),
            "message 4 carries Transport's per-packet checks; plain framing cannot read it (use msgpipe listen)"),
        (.messageTooLarge(messageID: 7, size: 100, limit: 10),
            "message 7 of 100 bytes exceeds the maximum message size of 10"),
        (.messageTooLarge(messageID: nil, size: 100, limit: 10),
            "a message of 100 bytes exceeds the maximum message size of 10"),
        (.incompleteMessage(messageID: 9, channel: 1, receivedBytes: 34),
            "input ended inside message 9 on channel 1 after 34 bytes"),
        (.incompleteMessage(messageID: nil, channel: 0, receivedBytes: 3),
            "input ended inside a message after 3 bytes"),
        (.tooManyMessagesInProgress(messageID: 5, limit: 2), "message 5 dropped: more than 2 messages in progress"),
        (.packetSizeTooSmall(format: "legacy", packetSize: 5, minimum: 6),
            "packet size 5 too small for the legacy format (minimum 6, MTU 9)"),
        (.payloadContainsNewline(offset: 3),
            "the lines format cannot carry this payload: it contains a newline at byte 3"),
    ]

    @Test("each failure describes itself with its context, as the CLI prints it", arguments: cases)
    func describes(error: FramingError, text: String) {
        #expect(error.description == text)
    }
}
