/// The journal record codec, reachable from the fuzz package (Fuzz/Sources/ExchangeFuzzer) without making
/// ``JournalRecord`` public: `@_spi(Fuzzing) import Exchange`.
@_spi(Fuzzing)
public enum JournalRecordCodec {
    /// Decodes `bytes` as one whole journal record and encodes the result again; nil when it is not one.
    public static func reencode(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        JournalRecord(decoding: bytes)?.encoded()
    }
}
