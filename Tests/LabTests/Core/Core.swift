import Foundation
import Testing

extension Lab {
    /// Checks 1-20: the kernel's L2CAP and mgmt under msgpipe, bluetoothd not running. The raw ATT probes
    /// (`msgpipe-lab lab-probe`), the C reference peers (Tests/lab/att_*.c) and BlueZ's gatttool are the peers;
    /// hci0 is "A", hci1 "B".
    @Suite(.tags(.core, .kernel)) struct Core {
        /// The 128-bit service `lab-probe serve` advertises.
        static let service = "12345678-1234-5678-1234-56789abcdef0"
        /// What `lab-probe serve` answers a Read of handle 3 with.
        static let probeValue = "msgpipe-lab-probe"
        /// What `att_server` answers a Read of handle 3 with.
        static let serverValue = "hello-from-att-server"
        static let mebibyte = 1 << 20
    }
}

extension LabCheck {
    /// A C reference peer that Scripts/lab.sh built into `environment.peers`.
    func peer(_ name: String) -> String { environment.peers + "/" + name }

    /// `msgpipe-lab lab-probe serve` on `adapter`, advertising `name`, serving `connections` centrals in turn (0: no
    /// limit); returns once it advertises.
    func startProbe(adapter: String, name: String, connections: Int, _ extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws -> LabProcess {
        let probe = try start("serve", environment.msgpipeLab, ["lab-probe", "serve", "--adapter", adapter, "--name", name,
            "--connections", "\(connections)"] + extra)
        expect(probe.waitForStdout(containing: "advertising"), "lab-probe serve never advertised", sourceLocation: sourceLocation)
        return probe
    }

    /// Starts `msgpipe listen ARGUMENTS` (or `executable`'s listen) as `label`; returns once it advertises.
    func startListen(_ arguments: [String], label: String = "listen", executable: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation) throws -> LabProcess {
        let listen = try start(label, executable ?? environment.msgpipe, ["listen"] + arguments)
        expect(listen.waitForStderr(containing: "advertising"), "\(label) never advertised", sourceLocation: sourceLocation)
        return listen
    }

    /// Stops a `lab-probe serve` that still waits for centrals: SIGTERM ends it without its clean-up (it has no
    /// handler), so its advertising instance on controller `index` is removed here.
    func stopProbe(_ probe: LabProcess, index: Int) {
        probe.stop(seconds: 10)
        LabControllers.removeInstances(index: index)
    }

    /// Runs `msgpipe-lab lab-probe connect` from `adapter` to `target` (an address or an advertised name).
    func probeConnect(adapter: String, to target: String, _ extra: [String] = []) throws -> LabProcess {
        try run("connect", environment.msgpipeLab, ["lab-probe", "connect", "--adapter", adapter, "--to", target] + extra, seconds: 90)
    }

    /// What `lab-probe connect` reports on standard output (it prints lines, no JSON): it exited 0, connected to
    /// `peer`, the server answered Exchange MTU with 185 and, when `read` is given, Read of handle 3 with it.
    func expectExchange(_ connect: LabProcess, peer: String, read: String?, sourceLocation: SourceLocation = #_sourceLocation) {
        expectExit(connect, sourceLocation: sourceLocation)
        let output = connect.stdoutText
        expect(output.contains("connected to \(peer)"), "lab-probe connect never said it connected to \(peer)", sourceLocation: sourceLocation)
        expect(output.contains("server MTU 185\n"), "lab-probe connect got no Exchange MTU answer of 185", sourceLocation: sourceLocation)
        if let read {
            expect(output.contains("\"\(read)\""), "lab-probe connect's Read of handle 3 did not return \"\(read)\"", sourceLocation: sourceLocation)
        }
    }

    /// Turns hci0's own advertising (connectable, no instance) on or off: a C peripheral does not advertise itself.
    /// The lab's set-up turns it on, each test's fixture off.
    func controllerAdvertising(_ on: Bool) {
        if on { labShell(["btmgmt", "--index", "0", "connectable", "on"]) }
        labShell(["btmgmt", "--index", "0", "advertising", on ? "on" : "off"])
    }

    /// The bytes of gatttool's "Characteristic value/descriptor: 6d 73 ..." line (nil when it printed none).
    static func gatttoolValue(_ output: String) -> [UInt8]? {
        guard let range = output.range(of: "Characteristic value/descriptor: ") else { return nil }
        let hex = output[range.upperBound...].prefix { $0 != "\n" }.split(separator: " ")
        let bytes = hex.compactMap { UInt8($0, radix: 16) }
        return bytes.count == hex.count ? bytes : nil
    }
}
