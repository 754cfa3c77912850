import Glibc
import Testing
@testable import BLELink

/// Lab only: runs inside the VM lab (Scripts/lab-test.sh, with three controllers: BLELAB_ADDR_C set),
/// skipped everywhere else. BLEPeripheral on hci0 serves the centrals on hci1 and hci2 at once, stops
/// advertising at its maximum of two and takes a central again once one has left.
struct KernelPeripheralLabTests {
    static let inLab = getenv("BLELAB_ADDR_C").map { String(cString: $0).count == 17 } ?? false

    @Test(.enabled(if: inLab), .timeLimit(.minutes(5)))
    func twoCentralsAtOnceThenRoomAgainWhenOneLeaves() async throws {
        let peripheral = try BLEPeripheral(
            adapter: try AdapterSelector("hci0"), advertisement: Advertisement(localName: "msgpipe-many", service: nil))
        defer { peripheral.stop() }
        let target = BluetoothPeer(address: peripheral.adapter.address)

        async let accepted1 = Self.accept(peripheral, within: .seconds(60))
        let central1 = try await Self.connect(from: "hci1", to: .peer(target))
        let served1 = try #require(try await accepted1)
        try Self.exchange(central: central1.fileDescriptor, peripheral: served1.fileDescriptor, tag: 1)

        async let accepted2 = Self.accept(peripheral, within: .seconds(60))
        let central2 = try await Self.connect(from: "hci2", to: .peer(target))
        let served2 = try #require(try await accepted2)
        #expect(served2.peer.address != served1.peer.address)
        // Both links carry their own PDUs at the same time.
        try Self.exchange(central: central2.fileDescriptor, peripheral: served2.fileDescriptor, tag: 2)
        try Self.exchange(central: central1.fileDescriptor, peripheral: served1.fileDescriptor, tag: 3)
        #expect(peripheral.linkedCentrals == 2)

        // At the maximum nothing is advertised: no third central comes.
        let third = try await Self.accept(peripheral, within: .seconds(3))
        #expect(third == nil)
        if let third { close(third.fileDescriptor) }

        // hci1 leaves; once its link is down (it lingers ~2 s) there is room again: the peripheral advertises,
        // and hci1, scanning for the name, finds it only then and connects anew. (Connecting by address at once
        // would reuse the lingering link, on which the peripheral's kernel makes no new ATT channel.)
        close(central1.fileDescriptor)
        close(served1.fileDescriptor)
        async let accepted3 = Self.accept(peripheral, within: .seconds(90))
        let central3 = try await Self.connect(from: "hci1", to: .name("msgpipe-many"))
        let served3 = try #require(try await accepted3)
        #expect(served3.peer.address == served1.peer.address)
        try Self.exchange(central: central3.fileDescriptor, peripheral: served3.fileDescriptor, tag: 4)
        try Self.exchange(central: central2.fileDescriptor, peripheral: served2.fileDescriptor, tag: 5)
        for fd in [central2.fileDescriptor, served2.fileDescriptor, central3.fileDescriptor, served3.fileDescriptor] {
            close(fd)
        }
    }

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

    /// A request from the central and its response from the peripheral (Exchange MTU, `tag` in the MTU).
    static func exchange(central: Int32, peripheral: Int32, tag: UInt8) throws {
        let request: [UInt8] = [0x02, tag, 0x01]
        let response: [UInt8] = [0x03, tag, 0x01]
        try send(request, on: central)
        #expect(try receive(on: peripheral) == request)
        try send(response, on: peripheral)
        #expect(try receive(on: central) == response)
    }

    static func send(_ pdu: [UInt8], on fd: Int32) throws {
        let sent = pdu.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
        #expect(sent == pdu.count)
    }

    static func receive(on fd: Int32) throws -> [UInt8] {
        guard try pollDescriptor(fd, events: Int16(POLLIN), until: .after(.seconds(20))) != 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 600)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(buffer[..<count]) : []
    }
}
