import BLELink
import BlueZLink
import SDBus
import Glibc
import GATT
import Synchronization
import Testing
import Transport

/// Lab only: run by Lab.StockBox (Tests/LabTests/StockBox) beside the dbus-daemon and real bluetoothd 5.66 it
/// started (BLELAB_STOCKBOX=1), skipped everywhere else. `BlueZPeripheral` registers the msgpipe
/// service and its advertisement with bluetoothd on hci0; centrals msgpipe did not write (BlueZ's gatttool,
/// bleak through bluetoothd on hci1) find, write and subscribe to it.
@Suite(.serialized, .enabled(if: inStockBox, "only in the lab's stock box (BLELAB_STOCKBOX=1)"))
struct BlueZPeripheralLabTests {
    /// Tests/lab/bleak_central.py, set by the lab only when bleak is importable there.
    static let bleakScript = environment("BLELAB_BLEAK_SCRIPT")
    static let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 517)
    static let packets = 20

    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// Registers the msgpipe service on hci0 and says how long `start` took (to the advertisement registered).
    static func start(name: String) async throws -> (BlueZPeripheral, DBusConnection) {
        let bus = try DBusConnection.system()
        let clock = ContinuousClock()
        let began = clock.now
        let peripheral = try await BlueZPeripheral.start(
            bus: bus, adapter: "/org/bluez/hci0", profile: .msgpipe, info: info, localName: name, root: "/org/msgpipe/lab")
        print("stockbox: BlueZPeripheral.start to advertisement registered: \(milliseconds(clock.now - began)) ms")
        return (peripheral, bus)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// BlueZ's gatttool on hci1 (its own ATT socket, beside bluetoothd) discovers the registered service on hci0.
    @Test(.timeLimit(.minutes(2)))
    func gatttoolFromHci1FindsTheRegisteredService() async throws {
        let (peripheral, bus) = try await Self.start(name: "msgpipe-stockbox-g")
        defer { peripheral.stop(); bus.close() }
        let address = try #require(Self.environment("BLELAB_ADDR_A"))
        let run = try await LabChild.run(
            ["timeout", "60", "gatttool", "-i", "hci1", "-b", address, "-t", "public", "--primary"], log: "stockbox_gatttool.log")
        print("stockbox: gatttool --primary exit \(run.status):\n\(run.output)")
        #expect(run.status == 0)
        #expect(run.output.lowercased().contains("uuid: \(GATTServiceProfile.msgpipe.service.description.lowercased())"))
    }

    /// bleak on hci1 scans for the name, connects, subscribes to TX and writes 20 self-describing packets to RX
    /// (write without response, up to ATT_MTU-3 or 510: bluetoothd before 5.69 drops longer values): each
    /// arrives on the AcquiredLink whole and in order; one notification of exactly `maximumPacketSize`
    /// (ATT_MTU-5) bytes arrives at bleak whole (not cut).
    @Test(.enabled(if: bleakScript != nil, "bleak is not installed in the lab (Scripts/blelab.sh --setup-bleak)"),
          .timeLimit(.minutes(3)))
    func bleakCentralWritesAndReceivesWholePackets() async throws {
        let script = try #require(Self.bleakScript)
        let name = "msgpipe-stockbox-b"
        let (peripheral, bus) = try await Self.start(name: name)
        defer { peripheral.stop(); bus.close() }
        // A fresh central, as a phone that never met this box: hci1's bluetoothd forgets hci0 (met in earlier
        // checks). Checks 23-24 find a device bluetoothd already knows.
        // The previous test's link (gatttool) lingers ~2 s; forget the device only once it is down (bounded).
        _ = try await LabChild.run(
            ["timeout", "20", "sh", "-c", "while hcitool -i hci1 con | grep -q LE; do sleep 0.2; done"],
            log: "stockbox_nolinks.log")
        if let address = Self.environment("BLELAB_ADDR_A") {
            let device = "/org/bluez/hci1/dev_" + address.split(separator: ":").joined(separator: "_")
            _ = try? await bus.call(destination: "org.bluez", path: "/org/bluez/hci1", interface: "org.bluez.Adapter1",
                                    member: "RemoveDevice", arguments: [.objectPath(device)])
        }
        let accepted = Mutex(false)
        let python = Self.environment("BLELAB_PYTHON") ?? "python3"
        let child = Task {
            let run = try await LabChild.run(
                ["timeout", "150", python, script, "--adapter", "hci1", "--name", name, "--count", "\(Self.packets)",
                 "--notifications", "1", "--timeout", "40"], log: "stockbox_bleak.log")
            // bleak never got as far as holding both descriptors: end the wait for a connection.
            if !accepted.withLock({ $0 }) { peripheral.stop() }
            return run
        }
        var connections = peripheral.connections.makeAsyncIterator()
        let connection = await connections.next()
        accepted.withLock { $0 = true }
        guard let connection else {
            let run = try await child.value
            Issue.record("bleak never subscribed and wrote (exit \(run.status)):\n\(run.output)")
            return
        }
        print("stockbox: AcquiredLink for \(connection.peer) (\(connection.device)), maximumPacketSize \(connection.link.maximumPacketSize)")
        var events = connection.link.events.makeAsyncIterator()
        #expect(await events.next() == .connected(maximumPacketSize: connection.link.maximumPacketSize))
        // bleak opens with one Write Request (ff 00 03), then writes its packets without response.
        var received: [[UInt8]] = []
        var opening: [UInt8]?
        while received.count < Self.packets, let event = await events.next() {
            if opening == nil, case let .packet(bytes) = event {
                opening = bytes
                continue
            }
            guard case let .packet(bytes) = event else {
                Issue.record("before all packets: \(event)")
                break
            }
            received.append(bytes)
        }
        // bluetoothd 5.66 acquires the write descriptor on this first write and now and then hands it over with
        // the right length and wrong contents (docs/PROTOCOL.md 5.8): its bug, which Transport's checks absorb.
        if opening != [0xFF, 0x00, 0x03], opening?.count == 3 {
            print("stockbox: bluetoothd garbled bleak's opening Write Request \(opening ?? []) (its write-before-AcquireWrite bug; the length is right)")
        } else {
            #expect(opening == [0xFF, 0x00, 0x03])
        }
        #expect(received.count == Self.packets)
        // Each packet whole and each once: byte 0 = its index, bytes 1-2 = its length, then (index + k) & 0xff.
        // Their order is bluetoothd's: 5.66 writes Write Commands from several ATT bearers (EATT) to the
        // acquired socket as they come, so two may swap (seen once in 20 runs); msgpipe's Transport puts them
        // back in order, and the plain formats are told to turn EATT off (docs/BLUEZ.md).
        for bytes in received {
            guard bytes.count >= 3 else {
                Issue.record("a packet of \(bytes.count) bytes")
                continue
            }
            let index = Int(bytes[0])
            #expect(Int(bytes[1]) << 8 | Int(bytes[2]) == bytes.count, "packet \(index) cut: \(bytes.count) bytes")
            #expect(bytes.dropFirst(3).enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: index + $0.offset) })
        }
        let order = received.compactMap(\.first).map(Int.init)
        #expect(order.sorted() == Array(0 ..< Self.packets), "each packet once: \(order)")
        if order != Array(0 ..< Self.packets) { print("stockbox: bluetoothd handed the writes over in the order \(order)") }
        let sizes = received.map(\.count)
        print("stockbox: received \(received.count) packets whole, sizes \(Set(sizes).sorted())")

        let notification = (0..<connection.link.maximumPacketSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try await connection.link.send(notification)
        let run = try await child.value
        print("stockbox: bleak exit \(run.status):\n\(run.output)")
        let lines = run.output.split(separator: "\n").map(String.init)
        let got = lines.first { $0.hasPrefix("notification ") }?.split(separator: " ")
        // The notification left on the air whole in a run where bleak still timed out (btmon). When bluetoothd
        // on hci1 emitted it whole as the characteristic's Value (the lab's dbus-monitor, BLELAB_DBUS_MONITOR),
        // it reached bleak's bus connection: bleak dropped it, not msgpipe or bluetoothd.
        if got == nil, let monitor = Self.environment("BLELAB_DBUS_MONITOR"),
           Self.signalledValues(inMonitorLog: monitor).contains(notification) {
            print("stockbox: bluetoothd on hci1 emitted the \(notification.count)-byte notification whole (PropertiesChanged Value in \(monitor)); bleak did not report it")
            withKnownIssue("bleak dropped a notification bluetoothd delivered whole on D-Bus") {
                #expect(run.status == 0)
            }
        } else {
            #expect(run.status == 0)
            #expect(got?.count == 3 && got?[1] == "\(notification.count)", "the notification arrived cut: \(got ?? [])")
            #expect(got.map { String($0.last ?? "") } == Self.hex(notification))
        }
        let mtuLine = lines.first { $0.hasPrefix("connected ATT_MTU ") }
        let mtu = mtuLine.flatMap { Int($0.split(separator: " ")[2]) }
        #expect(mtu.map { AcquiredLink.maximumPacketSize(mtu: $0) } == connection.link.maximumPacketSize,
                "bleak's ATT_MTU \(mtu ?? 0) against our packet size \(connection.link.maximumPacketSize)")
        #expect(sizes.max() == mtu.map { min($0 - 3, 510) }, "the largest Write Command (ATT_MTU-3, at most 510) arrived whole")
        await connection.link.close()
    }

    /// The byte arrays in a `dbus-monitor` log ("array of bytes [" then lines of hex, then "]"); none for a log
    /// that cannot be read.
    static func signalledValues(inMonitorLog path: String) -> [[UInt8]] {
        guard let file = fopen(path, "r") else { return [] }
        defer { fclose(file) }
        var values: [[UInt8]] = []
        var current: [UInt8]?
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            let text = String(String(cString: line).split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " "))
            if text.hasSuffix("array of bytes [") {
                current = []
            } else if text == "]", let value = current {
                values.append(value)
                current = nil
            } else if current != nil {
                let bytes = text.split(separator: " ").compactMap { UInt8($0, radix: 16) }
                current?.append(contentsOf: bytes)
            }
        }
        return values
    }

    /// Lower-case hex, two digits a byte, as Python's bytes.hex() prints.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] })
    }
}

private let inStockBox = getenv("BLELAB_STOCKBOX").map { String(cString: $0) } == "1"

/// A child process of the lab test: argv through PATH, standard output and error into `BLELAB_OUT/log`, waited
/// for on a thread of its own (never a cooperative one). Bounded by the `timeout` the callers put in argv.
enum LabChild {
    struct Run: Sendable {
        let status: Int32
        let output: String
    }

    static func run(_ arguments: [String], log: String) async throws -> Run {
        let directory = BlueZPeripheralLabTests.environment("BLELAB_OUT") ?? "/tmp"
        let path = directory + "/" + log
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ)
        guard spawned == 0 else { throw LabChildError.spawn(arguments[0], spawned) }
        let child = pid
        let status = try await BlockingCall.run { () throws(BluetoothError) -> Int32 in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
            // Exit status, or 128 + signal as a shell says it.
            return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        }
        guard let file = fopen(path, "r") else { return Run(status: status, output: "") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return Run(status: status, output: String(decoding: bytes, as: UTF8.self))
    }
}

enum LabChildError: Error {
    case spawn(String, Int32)
}

/// The lab test's reading of `dbus-monitor` (runs everywhere): the byte arrays of its signals, whole.
@Suite struct DBusMonitorLogTests {
    @Test func readsEveryByteArrayOfTheLog() throws {
        let path = "/tmp/msgpipe-dbus-monitor-\(getpid()).log"
        let log = """
            signal time=1795648206.560941 sender=:1.1 -> destination=(null destination) serial=2 path=/org/bluez/hci1/dev_00_AA_01_00_00_00/service0015/char0020; interface=org.freedesktop.DBus.Properties; member=PropertiesChanged
               string "org.bluez.GattCharacteristic1"
               array [
                  dict entry(
                     string "Value"
                     variant             array of bytes [
                           07 26 45 64 83 a2 c1 e0 ff 1e 3d 5c 7b 9a b9 d8 f7 16 35 54 73 92 b1 d0
                           ef 0e
                        ]
                  )
               ]
               array of bytes [
                  01
               ]

            """
        let file = try #require(fopen(path, "w"))
        fputs(log, file)
        fclose(file)
        defer { unlink(path) }
        let expected = (0..<26).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        #expect(BlueZPeripheralLabTests.signalledValues(inMonitorLog: path) == [expected, [0x01]])
        #expect(BlueZPeripheralLabTests.signalledValues(inMonitorLog: path + ".absent").isEmpty)
    }
}
