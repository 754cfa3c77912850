import Testing

extension Lab {
    /// msgpipe over an LE credit-based L2CAP channel, kernel backend (bluetoothd not running unless a test
    /// starts it): hci0 is the peripheral, hci1 the central.
    @Suite(.tags(.coc)) struct Coc {
        static let kernel = ["--backend", "kernel"]
        static let mebibyte = 1 << 20
    }
}

extension LabCheck {
    /// The checks every transfer makes: `label` ended with `expected`.
    func expectExit(_ process: LabProcess, _ expected: LabExit = .status(0), sourceLocation: SourceLocation = #_sourceLocation) {
        expect(process.exit == expected, "\(process.label): \(process.exit.map(String.init(describing:)) ?? "running"), expected \(expected)", sourceLocation: sourceLocation)
    }

    /// `bytes` as `listen --json` reported it: one message, the same bytes and CRC-32, carried by `link` when the
    /// listener names its link.
    func expectOneMessage(_ listen: LabProcess, _ bytes: [UInt8], link: String, linkRequired: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = listen.jsonLines(ListenLine.self)
        expect(lines.count == 1, "\(listen.label) --json: \(lines.count) message lines, expected 1", sourceLocation: sourceLocation)
        guard let line = lines.first else { return }
        expect(line.body == bytes, "\(listen.label): the message is not byte-identical (\(line.bytes) bytes, \(bytes.count) sent)", sourceLocation: sourceLocation)
        expect(line.crc32 == crc32Hex(bytes), "\(listen.label): crc32 \(line.crc32), sent \(crc32Hex(bytes))", sourceLocation: sourceLocation)
        expect(line.link == link || (!linkRequired && line.link == nil), "\(listen.label): link \(line.link ?? "absent"), expected \(link)", sourceLocation: sourceLocation)
    }

    /// `send --json`: `count` acknowledged lines, every one carried by `link` (as central) or naming none (as peripheral).
    @discardableResult
    func expectSent(_ send: LabProcess, count: Int, link: String?, sourceLocation: SourceLocation = #_sourceLocation) -> [SendLine] {
        let lines = send.jsonLines(SendLine.self)
        expect(lines.count == count, "\(send.label) --json: \(lines.count) lines, expected \(count)", sourceLocation: sourceLocation)
        if let link {
            for line in lines {
                expect(line.link == link, "\(send.label): message \(line.index) over \(line.link ?? "nothing named"), expected \(link)", sourceLocation: sourceLocation)
            }
        }
        return lines
    }

    /// Bytes per second of `bytes` sent in `seconds`, for a note.
    static func rate(_ bytes: Int, _ seconds: Double?) -> String {
        guard let seconds, seconds > 0 else { return "? B/s" }
        return "\(Int(Double(bytes) / seconds)) B/s (\(seconds) s)"
    }
}
