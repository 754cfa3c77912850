import BLELink
import Foundation
import Glibc
import Testing

extension Lab.Core {
    /// Check 20: BLELink's own API for several centrals, in-process. `BLEPeripheral` on hci0 hands out the centrals
    /// on hci1 and hci2 at once (each link carries its own PDUs), advertises nothing at its maximum of two (a
    /// third accept times out), and takes hci1 again, found by name, once it left. Needs the lab's btvirt: stock
    /// btvirt gives both links one HCI handle (check 17 shows it), so then the test skips.
    @Test("BLEPeripheral serves two centrals at once, stops advertising at its maximum, takes one again after it left",
        .tags(.kernel, .hci0, .hci1, .hci2), .enabled(if: LabEnvironment.current?.addressC != nil, "the lab has no third controller"))
    func peripheralServesTwoAtOnce() async {
        await LabCheck.runAsync { lab in
            let btvirt = ProcessInfo.processInfo.environment["BLELAB_BTVIRT"] ?? ""
            guard btvirt.hasSuffix("/bin/btvirt") && btvirt.hasPrefix(ProcessInfo.processInfo.environment["BLELAB_DIR"] ?? "/tmp/blelab") else {
                lab.skip("needs the lab's btvirt (this run has \(btvirt.isEmpty ? "an unknown one" : btvirt)): stock btvirt gives both links one handle")
                return
            }
            let peripheral = try BLEPeripheral(adapter: try AdapterSelector("hci0"), advertisement: Advertisement(localName: "msgpipe-many", service: nil))
            defer { peripheral.stop() }
            let target = BluetoothPeer(address: peripheral.adapter.address)
            var open: [Int32] = []
            defer { for fd in open { close(fd) } }

            async let accepted1 = Self.accept(peripheral, within: .seconds(60))
            let central1 = try await Self.connect(from: "hci1", to: .peer(target))
            open.append(central1.fileDescriptor)
            guard let served1 = try await accepted1 else { return lab.fail("hci1 connected but the peripheral accepted nothing within 60 s") }
            open.append(served1.fileDescriptor)
            Self.exchange(lab, central: central1.fileDescriptor, peripheral: served1.fileDescriptor, tag: 1)

            async let accepted2 = Self.accept(peripheral, within: .seconds(60))
            let central2 = try await Self.connect(from: "hci2", to: .peer(target))
            open.append(central2.fileDescriptor)
            guard let served2 = try await accepted2 else { return lab.fail("hci2 connected but the peripheral accepted nothing within 60 s") }
            open.append(served2.fileDescriptor)
            lab.expect(served2.peer.address != served1.peer.address, "both accepted links name \(served1.peer.address)")
            // Both links carry their own PDUs at the same time.
            Self.exchange(lab, central: central2.fileDescriptor, peripheral: served2.fileDescriptor, tag: 2)
            Self.exchange(lab, central: central1.fileDescriptor, peripheral: served1.fileDescriptor, tag: 3)
            lab.expect(peripheral.linkedCentrals == 2, "linkedCentrals is \(peripheral.linkedCentrals) with two centrals linked")

            // At the maximum nothing is advertised: no third central comes.
            if let third = try await Self.accept(peripheral, within: .seconds(3)) {
                open.append(third.fileDescriptor)
                lab.fail("a third central was accepted at the maximum of two")
            }

            // hci1 leaves; once its link is down (it lingers ~2 s) there is room again: the peripheral advertises,
            // and hci1, scanning for the name, finds it only then and connects anew. (Connecting by address at once
            // would reuse the lingering link, on which the peripheral's kernel makes no new ATT channel.)
            open.removeAll { $0 == central1.fileDescriptor || $0 == served1.fileDescriptor }
            close(central1.fileDescriptor)
            close(served1.fileDescriptor)
            async let accepted3 = Self.accept(peripheral, within: .seconds(90))
            let central3 = try await Self.connect(from: "hci1", to: .name("msgpipe-many"))
            open.append(central3.fileDescriptor)
            guard let served3 = try await accepted3 else { return lab.fail("hci1 came back but the peripheral accepted nothing within 90 s") }
            open.append(served3.fileDescriptor)
            lab.expect(served3.peer.address == served1.peer.address, "the returning central is \(served3.peer.address), not hci1")
            Self.exchange(lab, central: central3.fileDescriptor, peripheral: served3.fileDescriptor, tag: 4)
            Self.exchange(lab, central: central2.fileDescriptor, peripheral: served2.fileDescriptor, tag: 5)
        }
    }
}

extension Lab.Core {
    static func accept(_ peripheral: BLEPeripheral, within timeout: Duration) async throws(BluetoothError) -> ConnectedATTSocket? {
        try await BlockingCall.run { () throws(BluetoothError) in
            try peripheral.nextConnection(maximumConcurrent: 2, until: .after(timeout))?.handOver()
        }
    }

    static func connect(from adapter: String, to target: CentralTarget) async throws(BluetoothError) -> ConnectedATTSocket {
        try await BlockingCall.run { () throws(BluetoothError) in
            try BLECentral(adapter: try AdapterSelector(adapter)).connect(to: target).handOver()
        }
    }

    /// A request from the central and its response from the peripheral (Exchange MTU, `tag` in the MTU): each
    /// arrives whole on the other end within 20 s.
    static func exchange(_ lab: LabCheck, central: Int32, peripheral: Int32, tag: UInt8) {
        let request: [UInt8] = [0x02, tag, 0x01]
        let response: [UInt8] = [0x03, tag, 0x01]
        send(lab, request, on: central)
        let gotRequest = receive(on: peripheral)
        lab.expect(gotRequest == request, "exchange \(tag): the peripheral got \(gotRequest), not the request \(request)")
        send(lab, response, on: peripheral)
        let gotResponse = receive(on: central)
        lab.expect(gotResponse == response, "exchange \(tag): the central got \(gotResponse), not the response \(response)")
    }

    static func send(_ lab: LabCheck, _ pdu: [UInt8], on fd: Int32) {
        let sent = pdu.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
        lab.expect(sent == pdu.count, "send on fd \(fd) returned \(sent) (errno \(errno)), not \(pdu.count)")
    }

    /// The next PDU on `fd` within 20 s; empty when none came.
    static func receive(on fd: Int32) -> [UInt8] {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 20_000) == 1 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 600)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(buffer[..<count]) : []
    }
}
