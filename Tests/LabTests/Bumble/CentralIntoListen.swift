import Testing

extension Lab.Bumble {
    /// bumble 1: a phone central (random static address, found NAME by an active scan) asks for the ATT MTU,
    /// subscribes to FFF1 and writes 32 KiB (MTU 23) or 64 KiB as legacy Start/End Write Commands to FFF2 of
    /// `listen --profile custom:FFF0:FFF2:FFF1 --format legacy`: the message byte-identical, the MTU granted.
    @Test("bumble central (random address, MTU 23) writes legacy Start/End into msgpipe listen custom:FFF0:FFF2:FFF1: byte-identical",
        .tags(.hci3))
    func centralLegacyMTU23() {
        BumbleLab.run { bumble in try Self.centralLegacy(bumble, mtu: 23) }
    }

    @Test("bumble central (random address, MTU 185) writes legacy Start/End into msgpipe listen custom:FFF0:FFF2:FFF1: byte-identical",
        .tags(.hci3))
    func centralLegacyMTU185() {
        BumbleLab.run { bumble in try Self.centralLegacy(bumble, mtu: 185) }
    }

    @Test("bumble central (random address, MTU 517) writes legacy Start/End into msgpipe listen custom:FFF0:FFF2:FFF1: byte-identical",
        .tags(.hci3))
    func centralLegacyMTU517() {
        BumbleLab.run { bumble in try Self.centralLegacy(bumble, mtu: 517) }
    }

    private static func centralLegacy(_ bumble: BumbleLab, mtu: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try bumble.centralIntoListen("c\(mtu)", profile: BumbleLab.profile(BumbleLab.legacy), layout: BumbleLab.legacy, format: "legacy",
            mtu: mtu, LabCheck.randomBytes(mtu == 23 ? 32_768 : 65_536), what: "central -> listen, legacy, asked MTU \(mtu)",
            sourceLocation: sourceLocation)
    }

    /// bumble 2: the Nordic UART Service in lines: 64 KiB of text and its newline written to NUS RX.
    @Test("bumble central writes lines into msgpipe listen --profile nus: the line byte-identical", .tags(.hci3))
    func centralNUSLines() {
        BumbleLab.run { bumble in
            try bumble.centralIntoListen("nus", profile: "nus", layout: BumbleLab.nus, format: "lines", mtu: 185, BumbleLab.text(),
                what: "central -> listen, nus lines, asked MTU 185")
        }
    }

    /// bumble 3: seed 003's 128-bit layout in eom: discovery by 128-bit UUIDs.
    @Test("bumble central writes eom into msgpipe listen with a 128-bit custom service: byte-identical", .tags(.hci3))
    func central128BitEOM() {
        BumbleLab.run { bumble in
            try bumble.centralIntoListen("u128", profile: BumbleLab.profile(BumbleLab.qx), layout: BumbleLab.qx, format: "eom", mtu: 247,
                LabCheck.randomBytes(65_536), what: "central -> listen, 128-bit custom service, eom, asked MTU 247")
        }
    }
}
