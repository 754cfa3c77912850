import Foundation
import Testing

/// The lab's checks: each runs inside the lab VM (Scripts/lab.sh boots it; Scripts/lab-test.sh runs this test
/// bundle there) against the real kernel Bluetooth stack, and is skipped everywhere else. One suite, run one test
/// at a time: the tests share four controllers on one virtual air. A section is a nested suite and a tag.
@Suite(.serialized, .enabled(if: LabEnvironment.current != nil, "only inside the lab VM (Scripts/lab.sh)"))
struct Lab {}

extension Tag {
    // Sections of the lab (Scripts/lab.sh's section table).
    @Tag static var core: Self
    @Tag static var kernel: Self
    @Tag static var bluetoothd: Self
    @Tag static var coc: Self
    @Tag static var bumble: Self
    @Tag static var bonding: Self
    @Tag static var stockBox: Self
    @Tag static var newerBluetoothd: Self
    // The controllers a test uses.
    @Tag static var hci0: Self
    @Tag static var hci1: Self
    @Tag static var hci2: Self
    @Tag static var hci3: Self
}

/// What the lab VM tells a test: the controllers' addresses, where logs go, the programs under test.
struct LabEnvironment: Sendable {
    /// hci0's and hci1's public addresses.
    let addressA: String
    let addressB: String
    /// hci2's and hci3's, when the lab has those controllers.
    let addressC: String?
    let addressD: String?
    /// The run's log directory (shared with the host); btmon writes `btmon.txt` there.
    let outDirectory: URL
    /// The msgpipe and msgpipe-lab executables the checks run.
    let msgpipe: String
    let msgpipeLab: String
    /// The directory of the C reference peers (`att_server`, `att_client`, `att_hostile`, `att_blast`) that
    /// Scripts/lab.sh builds from Tests/lab: `LAB_PEERS`, else `.build/lab` under the working directory.
    let peers: String
    /// Where each test appends its verdict line ("0|1|skip SECONDS LOGDIR FILTER NAME"), for lab-test.sh's results.txt.
    let resultsFile: String?

    /// Set only inside the VM: BLELAB_ADDR_A to _D and BLELAB_OUT (blelab.sh), LAB_MSGPIPE, LAB_MSGPIPE_LAB and
    /// LAB_PEERS (lab-test.sh).
    static let current: LabEnvironment? = {
        let env = ProcessInfo.processInfo.environment
        guard let a = env["BLELAB_ADDR_A"], a.count == 17, let b = env["BLELAB_ADDR_B"], let out = env["BLELAB_OUT"],
            let msgpipe = env["LAB_MSGPIPE"], let msgpipeLab = env["LAB_MSGPIPE_LAB"]
        else { return nil }
        return LabEnvironment(
            addressA: a, addressB: b, addressC: env["BLELAB_ADDR_C"].flatMap { $0.isEmpty ? nil : $0 },
            addressD: env["BLELAB_ADDR_D"].flatMap { $0.isEmpty ? nil : $0 }, outDirectory: URL(fileURLWithPath: out), msgpipe: msgpipe,
            msgpipeLab: msgpipeLab,
            peers: env["LAB_PEERS"] ?? FileManager.default.currentDirectoryPath + "/.build/lab", resultsFile: env["LAB_RESULTS"])
    }()
}
