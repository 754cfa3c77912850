import BlueZLink
import Testing

/// Reading bluetoothd's main.conf for the EATT setting behind the plain formats' ordering note.
@Suite("bluetoothd's main.conf")
struct BluetoothdConfigurationTests {
    @Test("[GATT] Channels = 1 turns EATT off; the last key counts, comments and other sections do not", arguments: [
        ("[GATT]\nChannels = 1\n", true),
        ("[General]\nName = box\n\n[GATT]\n  Channels=1  \n", true),
        ("[GATT]\n#Channels = 1\n", false),
        ("[GATT]\nChannels = 3\n", false),
        ("[General]\nChannels = 1\n", false),
        ("[GATT]\nChannels = 1\nChannels = 2\n", false),
        ("", false),
    ])
    func channels(text: String, off: Bool) {
        #expect(BluetoothdConfiguration.setsSingleGATTChannel(text) == off)
    }

    @Test func aFileThatCannotBeReadSaysNothing() {
        #expect(!BluetoothdConfiguration.turnsEATTOff(path: "/nonexistent/main.conf"))
    }

    @Test("Which bluetoothd gets which EATT note", arguments: [
        // version, plain format, main.conf turns EATT off -> the note's key phrase, nil: none
        ((5, 66) as (Int, Int)?, true, false, "the plain formats cannot repair" as String?),
        ((5, 66), false, false, "up to 16 times slower"),
        ((5, 66), true, true, nil),
        ((5, 66), false, true, nil),
        ((5, 67), true, false, nil),
        ((5, 82), false, false, nil),
        (nil, true, false, "the plain formats cannot repair"),
        (nil, false, false, nil),
    ])
    func eattNote(version: (Int, Int)?, unnumbered: Bool, eattOff: Bool, phrase: String?) {
        let note = BluetoothdConfiguration.eattNote(
            version: version.map { BlueZVersion(major: $0.0, minor: $0.1) }, unnumbered: unnumbered, eattOff: eattOff)
        #expect(note.map { $0.contains(phrase ?? "\u{0}") } ?? (phrase == nil), "\(note ?? "no note")")
        if let note { #expect(note.contains("Channels = 1 under [GATT]") && !note.contains("\n")) }
    }
}
