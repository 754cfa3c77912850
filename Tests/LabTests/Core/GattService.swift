import Testing

extension Lab.Core {
    /// The msgpipe GATT service's UUID, and the prefixes of its RX, TX and info characteristics.
    static let msgpipeService = "4d500001-8c5d-4e2b-9f1a-6d7367706970"
    static let (rx, tx, info) = ("4d500002-", "4d500003-", "4d500004-")

    /// `msgpipe listen --format lines --json` on hci0, serving any number of centrals (gatttool runs back to back
    /// may share one lingering link, i.e. one ATT connection); returns once it advertises.
    static func startGATTListen(_ lab: LabCheck) throws -> LabProcess {
        try lab.startListen(["--adapter", "hci0", "--name", "msgpipe-gatt", "--format", "lines", "--json"])
    }

    /// Runs gatttool on hci1 against hci0 with `arguments`, to its end (60 s), and wants exit 0.
    static func gatttool(_ lab: LabCheck, _ label: String, _ arguments: [String]) throws -> String {
        let gatttool = try lab.run(label, "/usr/bin/gatttool", ["-i", "hci1", "-b", lab.environment.addressA, "-t", "public"] + arguments, seconds: 60)
        lab.expectExit(gatttool)
        return gatttool.stdoutText + gatttool.stderr
    }

    /// The value handle of the characteristic whose UUID starts with `prefix`, in gatttool --characteristics'
    /// "char value handle = 0x0003, uuid = ..." lines.
    static func valueHandle(_ characteristics: String, _ prefix: String) -> String? {
        characteristics.split(separator: "\n").first { $0.contains("uuid = \(prefix)") }.flatMap { line in
            line.range(of: "char value handle = ").map { String(line[$0.upperBound...].prefix { $0 != "," }) }
        }
    }

    /// Check 10: BlueZ's gatttool on hci1 finds the msgpipe service of `msgpipe listen` (GATTLink and the GATT
    /// server over ATTBearer on the kernel's ATT channel), its RX, TX and info characteristics and a CCC
    /// descriptor; SIGTERM then ends listen with exit 0.
    @Test("gatttool discovers the msgpipe service of msgpipe listen, its characteristics and descriptors", .tags(.hci0, .hci1))
    func gattDiscovery() {
        LabCheck.run { lab in
            let listen = try Self.startGATTListen(lab)
            let primary = try Self.gatttool(lab, "primary", ["--primary"])
            let characteristics = try Self.gatttool(lab, "characteristics", ["--characteristics"])
            let descriptors = try Self.gatttool(lab, "descriptors", ["--char-desc"])
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            listen.stop(seconds: 30)
            lab.expectExit(listen)
            lab.expect(primary.contains("uuid: \(Self.msgpipeService)"), "gatttool --primary found no msgpipe service")
            for (name, prefix) in [("RX", Self.rx), ("TX", Self.tx), ("info", Self.info)] {
                lab.expect(characteristics.contains("uuid = \(prefix)"), "gatttool --characteristics found no \(name) characteristic (\(prefix))")
            }
            lab.expect(descriptors.contains("uuid = 00002902-"), "gatttool --char-desc found no Client Characteristic Configuration")
        }
    }

    /// Check 10b: gatttool reads the info characteristic, layout 2 of PROTOCOL.md 5.2 (version 2, formats = lines,
    /// 12 bytes, listen's L2CAP channel PSM 0x80-0xff little-endian last), finds the PSM characteristic, and
    /// writes "hi\n" to RX with a Write Request: listen --format lines --json prints it as the message "hi".
    @Test("gatttool reads listen's info characteristic and writes RX; the write comes out as a message", .tags(.hci0, .hci1))
    func gattReadWrite() {
        LabCheck.run { lab in
            let listen = try Self.startGATTListen(lab)
            let characteristics = try Self.gatttool(lab, "characteristics", ["--characteristics"])
            lab.expect(characteristics.contains("uuid = abdd3056-"), "gatttool --characteristics found no PSM characteristic (abdd3056-)")
            let info = Self.valueHandle(characteristics, Self.info)
            let rx = Self.valueHandle(characteristics, Self.rx)
            lab.expect(info != nil && rx != nil, "no value handle for info or RX in gatttool --characteristics")
            let read = try Self.gatttool(lab, "read-info", ["--char-read", "-a", info ?? "0x0000"])
            let write = try Self.gatttool(lab, "write-rx", ["--char-write-req", "-a", rx ?? "0x0000", "-n", "68690a"])
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            listen.stop(seconds: 30)
            lab.expectExit(listen)
            let value = LabCheck.gatttoolValue(read) ?? []
            lab.expect(value.count == 12 && value.prefix(3) == [0x02, 0x01, 0x08] && (0x80...0xff).contains(value[10]) && value[11] == 0,
                "info value \(value), expected 02 01 08, 7 bytes, then a PSM 0x0080-0x00ff little-endian")
            lab.expect(write.contains("written successfully"), "gatttool's Write Request to RX was not answered with success")
            let lines = listen.jsonLines(ListenLine.self)
            lab.expect(lines.map(\.body) == [Array("hi".utf8)], "listen --json: \(lines.count) messages, expected one \"hi\"")
        }
    }
}
