/// The control-packet codec, reachable from the fuzz package (Fuzz/Sources/TransportFuzzer) without making
/// ``TransportControl`` public: `@_spi(Fuzzing) import Transport`.
@_spi(Fuzzing)
public enum TransportControlCodec {
    /// Decodes `packet` as a Transport control packet (PROTOCOL.md 3.4) and encodes the result again; nil when
    /// `packet` is not a valid control packet.
    public static func reencode(_ packet: ArraySlice<UInt8>) -> [UInt8]? {
        guard let control = TransportControl(decoding: packet) else { return nil }
        var out: [UInt8] = []
        control.encode(into: &out)
        return out
    }
}
