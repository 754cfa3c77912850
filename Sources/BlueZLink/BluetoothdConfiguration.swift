import Glibc

/// What the box's bluetoothd configuration says, where msgpipe's advice depends on it.
public enum BluetoothdConfiguration {
    /// True when `path` (bluetoothd's main.conf) sets `Channels = 1` in its `[GATT]` section: EATT off. Reads
    /// at most 64 KiB; a file that cannot be read says nothing (false).
    public static func turnsEATTOff(path: String = "/etc/bluetooth/main.conf") -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64 << 10)
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            filled += got
        }
        return setsSingleGATTChannel(String(decoding: bytes[..<filled], as: UTF8.self))
    }

    /// The note to show beside a bluetoothd that may use EATT (several ATT bearers per link), or nil when there
    /// is nothing to say. `version` nil: bluetoothd's version could not be told.
    /// - The plain formats (`unnumbered`) cannot repair values that arrive out of order over several bearers:
    ///   said before bluetoothd 5.67 (where EATT is off unless asked for) and when the version is unknown.
    /// - msgpipe's format puts them back in order, but EATT bearers were up to 16 times slower than one bearer
    ///   (docs/BLUEZ.md): said before 5.67 only.
    /// Nothing when main.conf turns EATT off (`eattOff`).
    public static func eattNote(version: BlueZVersion?, unnumbered: Bool, eattOff: Bool) -> String? {
        guard !eattOff, version.map({ $0 < .eattOffByDefault }) ?? unnumbered else { return nil }
        let who = version.map { "bluetoothd \($0)" } ?? "this bluetoothd"
        let remedy = "set Channels = 1 under [GATT] in /etc/bluetooth/main.conf"
        if unnumbered {
            return """
                note: \(who) may carry values over several ATT channels (EATT) to a peer that supports them, and they \
                can arrive out of order, which the plain formats cannot repair: \(remedy), or use the msgpipe format
                """
        }
        return """
            note: \(who) may carry values over several ATT channels (EATT) to a peer that supports them, which \
            was up to 16 times slower than one channel in msgpipe's lab: \(remedy) (the default from 5.67) for full speed
            """
    }

    /// The parsing of ``turnsEATTOff(path:)``: the last `Channels` key of `[GATT]` is 1.
    public static func setsSingleGATTChannel(_ text: String) -> Bool {
        var section = ""
        var channels: Substring?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            let parts = line.split(separator: "=", maxSplits: 1).map(trimmed)
            if section == "GATT", parts.count == 2, parts[0] == "Channels" { channels = parts[1] }
        }
        return channels == "1"
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return text[first ... last]
    }
}
