/// What the box's bluetoothd configuration says, where msgpipe's advice depends on it.
enum BluetoothdConfiguration {
    /// True when `path` (bluetoothd's main.conf) sets `Channels = 1` in its `[GATT]` section: EATT off. Reads
    /// at most 64 KiB; a file that cannot be read says nothing (false).
    static func turnsEATTOff(path: String = "/etc/bluetooth/main.conf") -> Bool {
        var bytes: [UInt8] = []
        guard let file = try? InputFile(path: path), (try? file.read(appendingTo: &bytes, count: 64 << 10)) != nil else {
            return false
        }
        return setsSingleGATTChannel(String(decoding: bytes, as: UTF8.self))
    }

    /// The parsing of ``turnsEATTOff(path:)``: the last `Channels` key of `[GATT]` is 1.
    static func setsSingleGATTChannel(_ text: String) -> Bool {
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
