@testable import msgpipe
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
}
