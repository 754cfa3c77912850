import Foundation
import Testing

/// The lab fixture's reading of the guest kernel's log, on the lines of a real oops (Linux 6.1.0-57 in the lab VM,
/// closing an L2CAP socket): these run everywhere, not only inside the lab.
struct LabKernelLogTests {
    static let oops = """
        [ 2642.590001] Bluetooth: hci0: unexpected event 0x0f
        [ 2642.593883] list_del corruption, ff30aebc42e49940->prev is LIST_POISON2 (dead000000000122)
        [ 2642.594317] ------------[ cut here ]------------
        [ 2642.594413] kernel BUG at lib/list_debug.c:56!
        [ 2642.594983] invalid opcode: 0000 [#2] PREEMPT SMP NOPTI
        [ 2642.595213] CPU: 1 PID: 4091 Comm: bluetoothd Tainted: G      D            6.1.0-57-amd64 #1  Debian 6.1.192-3
        [ 2642.595387] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
        [ 2642.595560] RIP: 0010:__list_del_entry_valid.cold+0x4b/0x6f
        [ 2642.596575] RAX: 000000000000004e RBX: ff30aebc42e49940 RCX: c0000000ffffefff
        [ 2642.596614] Call Trace:
        [ 2642.596614]  <TASK>
        [ 2642.596614]  hci_chan_del+0x18/0x90 [bluetooth]
        [ 2642.596614]  ? _copy_from_user+0x46/0x60
        [ 2642.596614]  l2cap_chan_put+0x106/0x130 [bluetooth]
        [ 2642.596614]  l2cap_sock_release+0xca/0x100 [bluetooth]
        [ 2642.596614]  __sock_release+0x3d/0xb0
        [ 2642.596614]  sock_close+0x11/0x20
        [ 2642.596614]  __fput+0x93/0x250
        [ 2642.596614]  task_work_run+0x59/0x90
        [ 2642.596614]  </TASK>
        [ 2642.596614] Modules linked in: btusb bluetooth
        [ 2642.700000] Bluetooth: hci1: connection complete
        """.split(separator: "\n").map(String.init)

    @Test("an oops keeps its headlines, the task it killed, RIP and its first six named frames, nothing else")
    func oopsLines() {
        let kept = LabKernelLog.oopses(in: Self.oops)
        #expect(kept.map { $0.split(separator: "]", maxSplits: 1)[1].drop { $0 == " " } } == [
            "list_del corruption, ff30aebc42e49940->prev is LIST_POISON2 (dead000000000122)",
            "kernel BUG at lib/list_debug.c:56!",
            "invalid opcode: 0000 [#2] PREEMPT SMP NOPTI",
            "CPU: 1 PID: 4091 Comm: bluetoothd Tainted: G      D            6.1.0-57-amd64 #1  Debian 6.1.192-3",
            "RIP: 0010:__list_del_entry_valid.cold+0x4b/0x6f",
            "Call Trace:",
            "hci_chan_del+0x18/0x90 [bluetooth]",
            "l2cap_chan_put+0x106/0x130 [bluetooth]",
            "l2cap_sock_release+0xca/0x100 [bluetooth]",
            "__sock_release+0x3d/0xb0",
            "sock_close+0x11/0x20",
            "__fput+0x93/0x250",
        ])
    }

    @Test("a log without an oops gives nothing, lines of the same shape included")
    func noOops() {
        let quiet = Self.oops.filter { line in !LabKernelLog.headlines.contains { line.contains($0) } }
        #expect(LabKernelLog.oopses(in: quiet).isEmpty)
        #expect(LabKernelLog.oopses(in: []).isEmpty)
    }

    @Test("a /dev/kmsg record reads as dmesg prints it, without its key lines")
    func record() {
        let record = Array("4,1234,2642594413,-;kernel BUG at lib/list_debug.c:56!\n SUBSYSTEM=bluetooth\n".utf8)
        #expect(LabKernelLog.line(ofRecord: record[...]) == "[ 2642.594413] kernel BUG at lib/list_debug.c:56!")
        #expect(LabKernelLog.line(ofRecord: Array("6,1,42,-;up\n".utf8)[...]) == "[    0.000042] up")
        #expect(LabKernelLog.line(ofRecord: Array("no header".utf8)[...]) == "no header")
    }

    @Test("a test's filter matches its own id whole, not a longer name, and has no space", arguments: [
        "LabTests.Lab/Bonding/boxLostTheBond()/BoxLostTheBond.swift:10:6", "LabTests.Lab/Core/a b (c).d()",
    ])
    func exactFilter(id: String) throws {
        let filter = LabCheck.exactFilter(id)
        #expect(!filter.contains(" "))
        #expect(try Regex(filter).wholeMatch(in: id) != nil)
        #expect(try Regex(filter).firstMatch(in: id.replacingOccurrences(of: "()", with: "Twice()")) == nil)
        #expect(try Regex(filter).firstMatch(in: "x" + id) == nil)
    }
}
