import Testing
import TestSupport

/// `expectSameBytes`, which the suites' payload checks use: a difference is named by its offset, and judging two
/// differing 4 MiB payloads costs what comparing them does (`#expect(a == b)` spun for minutes on them).
@Suite("expectSameBytes")
struct SameBytesTests {
    static let big = (0 ..< 4 << 20).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

    @Test func equalPayloadsRecordNothing() {
        #expect(expectSameBytes(Self.big, Self.big))
        #expect(expectSameBytes(Self.big[...], Self.big))
    }

    @Test func aChangedByteIsNamedByItsOffset() {
        var changed = Self.big
        // Every byte from 3,000,001 on differs: an edit script of over a million steps.
        for index in 3_000_001 ..< changed.count { changed[index] ^= 0x40 }
        var matched = false
        withKnownIssue {
            matched = expectSameBytes(changed, Self.big, "the 4 MiB")
        } matching: { issue in
            "\(issue)".contains("the 4 MiB: 4194304 bytes, expected 4194304; they first differ at byte 3000001")
        }
        #expect(!matched)
    }

    @Test func aShortOrMissingPayloadSaysSo() {
        withKnownIssue {
            expectSameBytes(Self.big.prefix(1000), Self.big, "cut")
        } matching: { issue in
            "\(issue)".contains("cut: 1000 bytes, expected 4194304; one is the other's first 1000 bytes")
        }
        withKnownIssue {
            expectSameBytes(nil as [UInt8]?, Self.big, "lost")
        } matching: { issue in
            "\(issue)".contains("lost: nothing arrived, expected 4194304 bytes")
        }
    }
}
