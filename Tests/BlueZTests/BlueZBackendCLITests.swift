import BLELink
import BlueZLink
import SDBus
import Foundation
import Glibc
import Testing
import TestSupport
import Transport

/// `msgpipe ... --backend bluez` end to end against the fake org.bluez on a private bus (the CLI finds it
/// through DBUS_SYSTEM_BUS_ADDRESS, as it finds bluetoothd on a stock box): the CLI registers its application,
/// the fake plays bluetoothd handing the descriptors of a subscribing central to it, and the test is that
/// central, speaking Transport over the other ends.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .serialized,
       .timeLimit(.minutes(2)))
struct BlueZBackendCLITests {
    static var binary: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("msgpipe")
    }

    /// `msgpipe arguments` with the system bus at `bus`; standard error is read line by line into `errors`.
    final class Command: @unchecked Sendable {
        let process = Process()
        private let stdout = Pipe()
        private let stderr = Pipe()
        private let lock = NSCondition()
        private var errorText = ""
        /// Standard error reached its end (the reader thread took everything the process wrote).
        private var errorEnded = false

        init(_ arguments: [String], bus: String) throws {
            process.executableURL = BlueZBackendCLITests.binary
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": bus]) { $1 }
            // Close-on-exec, so a dbus-daemon another test spawns meanwhile does not hold them open (the
            // child gets its own copies as 1 and 2).
            for pipe in [stdout, stderr] {
                for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
                    _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
                }
            }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = stdout
            process.standardError = stderr
            try process.run()
            let handle = stderr.fileHandleForReading
            Thread { [self] in
                while case let data = handle.availableData, !data.isEmpty {
                    lock.lock()
                    errorText += String(decoding: data, as: UTF8.self)
                    lock.broadcast()
                    lock.unlock()
                }
                lock.lock()
                errorEnded = true
                lock.broadcast()
                lock.unlock()
            }.start()
        }

        var errors: String { lock.withLock { errorText } }

        /// Waits until standard error shows `text` (at most `seconds`), on a thread of its own: the fake
        /// bluetoothd in this process needs the concurrency pool meanwhile.
        func waitForError(_ text: String, seconds: Double = 20) async -> Bool {
            try! await BlockingCall.run { self.blockingWaitForError(text, seconds: seconds) }
        }

        /// Standard output to the end and the exit status (killed after `seconds`), off the pool; ``errors``
        /// then holds all of standard error.
        func finish(seconds: Double = 30) async -> (output: Data, status: Int32) {
            try! await BlockingCall.run { self.blockingFinish(seconds: seconds) }
        }

        private func blockingWaitForError(_ text: String, seconds: Double) -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            lock.lock()
            defer { lock.unlock() }
            while !errorText.contains(text) {
                if !lock.wait(until: deadline) { return errorText.contains(text) }
            }
            return true
        }

        private func blockingFinish(seconds: Double) -> (output: Data, status: Int32) {
            let process = process
            let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: killer)
            let output = stdout.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            killer.cancel()
            let deadline = Date(timeIntervalSinceNow: seconds)
            lock.lock()
            while !errorEnded, lock.wait(until: deadline) {}
            lock.unlock()
            return (output, process.terminationStatus)
        }
    }

    @Test func listenThroughBluetoothdReceivesAMessageOf100KiBFromASubscribedCentral() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let listen = try Command(["listen", "--backend", "bluez", "--adapter", "hci0", "--name", "msgpipe-cli",
                                  "--count", "1", "--verbose"], bus: bus.address)
        #expect(await listen.waitForError("advertising 'msgpipe-cli' on hci0 (through bluetoothd)"), "\(listen.errors)")
        #expect(listen.errors.contains("backend: bluez"))
        #expect(fake.record.advertisement.withLock { $0?["LocalName"] } == .string("msgpipe-cli"))

        let ends = try await fake.acquire(device: BlueZPeripheralTests.device, mtu: 185)
        let central = try AcquiredLink(sending: ends.write, receiving: ends.notify,
                                       maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: 185))
        let transport = Transport(link: central)
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        // listen acknowledges a message once its output took it: standard output is read while the central sends.
        async let finished = listen.finish()
        try await transport.send(body, timeout: .seconds(20))
        let (output, status) = await finished
        await transport.close()
        #expect(status == 0, "\(listen.errors)")
        expectSameBytes(output, body)
    }

    @Test func listenKeepsServingAcrossABluetoothdRestartAndSaysSo() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let first = try await FakeBlueZ(address: bus.address)
        defer { first.stop() }
        let listen = try Command(["listen", "--backend", "bluez", "--adapter", "hci0", "--name", "msgpipe-restart",
                                  "--security", "medium", "--count", "1"], bus: bus.address)
        #expect(await listen.waitForError("advertising 'msgpipe-restart' on hci0 (through bluetoothd)"), "\(listen.errors)")
        #expect(first.record.agent.withLock { $0?.capability } == "NoInputNoOutput")
        let flags = first.record.application.withLock {
            $0?.tree["/org/msgpipe/app/service0/char0"]?["org.bluez.GattCharacteristic1"]?["Flags"]?.stringArray
        }
        #expect(flags == ["encrypt-write", "write-without-response"])

        first.stop()
        #expect(await listen.waitForError("bluetoothd left the bus"), "\(listen.errors)")
        let second = try await FakeBlueZ(address: bus.address)
        defer { second.stop() }
        #expect(await listen.waitForError("bluetoothd restarted: registered again"), "\(listen.errors)")
        #expect(second.record.advertisement.withLock { $0?["LocalName"] } == .string("msgpipe-restart"))
        #expect(second.record.agent.withLock { $0?.capability } == "NoInputNoOutput")

        let ends = try await second.acquire(device: BlueZPeripheralTests.device, mtu: 185)
        let central = try AcquiredLink(sending: ends.write, receiving: ends.notify,
                                       maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: 185))
        let transport = Transport(link: central)
        let body = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 1) }
        try await transport.send(body, timeout: .seconds(20))
        let (output, status) = await listen.finish()
        await transport.close()
        #expect(status == 0, "\(listen.errors)")
        expectSameBytes(output, body)
    }

    @Test func sendAsPeripheralThroughBluetoothdPushesAMessageToTheSubscribedCentral() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let body = (0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("msgpipe-bluez-send-\(getpid())")
        try Data(body).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let send = try Command(["send", "--backend", "bluez", "--adapter", "hci0", "--name", "msgpipe-push",
                                "--json", file.path], bus: bus.address)
        #expect(await send.waitForError("advertising 'msgpipe-push' on hci0 (through bluetoothd)"), "\(send.errors)")

        let ends = try await fake.acquire(device: BlueZPeripheralTests.device, mtu: 247)
        let central = try AcquiredLink(sending: ends.write, receiving: ends.notify,
                                       maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: 247))
        let transport = Transport(link: central)
        var messages = transport.messages.makeAsyncIterator()
        let message = await messages.next()
        let (output, status) = await send.finish()
        await transport.close()
        #expect(message?.body == body)
        #expect(status == 0, "\(send.errors)")
        let line = String(decoding: output, as: UTF8.self)
        #expect(line.contains("\"peer\":\"11:22:33:44:55:66\""), "\(line)")
        #expect(line.contains("\"bytes\":60000"), "\(line)")
    }

    /// The seeds' receiving phone through bluetoothd: it only subscribes (bluetoothd acquires only the notify
    /// descriptor) and gets every legacy value; the note says a bluetoothd with EATT may reorder them.
    @Test func sendAsPeripheralInTheLegacyFormatReachesACentralThatOnlySubscribes() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let body = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("msgpipe-bluez-legacy-\(getpid())")
        try Data(body).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let send = try Command(["send", "--backend", "bluez", "--adapter", "hci0", "--name", "msgpipe-plain",
                                "--format", "legacy", file.path], bus: bus.address)
        #expect(await send.waitForError("advertising 'msgpipe-plain' on hci0 (through bluetoothd)"), "\(send.errors)")

        let notify = try await BlueZPeripheralTests.acquireHalf(
            fake, "AcquireNotify", device: BlueZPeripheralTests.device, mtu: 185)
        defer { close(notify) }
        var values: [[UInt8]] = []
        while values.last.map({ !$0.starts(with: Array("End".utf8)) }) ?? true {
            var ready = pollfd(fd: notify, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 10_000) == 1 else {
                Issue.record("no End value after \(values.count) values")
                break
            }
            var buffer = [UInt8](repeating: 0, count: 600)
            let count = recv(notify, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            values.append(Array(buffer.prefix(count)))
        }
        let (_, status) = await send.finish()
        #expect(status == 0, "\(send.errors)")
        #expect(values.allSatisfy { $0.count <= AcquiredLink.maximumPacketSize(mtu: 185) })
        let first = try #require(values.first)
        #expect(first.starts(with: Array("Start".utf8)))
        let decoded = values.dropFirst().dropLast().reduce(Array(first.dropFirst(5))) { $0 + $1 } + (values.last ?? []).dropFirst(3)
        expectSameBytes(decoded, body)
        #expect(send.errors.contains("may carry values over several ATT channels (EATT)"), "\(send.errors)")
    }

    /// The fake's version cannot be told (it is not a bluetoothd): it is served as one before 5.76, one central
    /// at a time, so waiting for two subscribed centrals fails at once with the remedy instead of never ending.
    @Test func sendAsPeripheralToTwoCentralsThroughAnOldBluetoothdFailsWithTheRemedy() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let send = try Command(["send", "--backend", "bluez", "--adapter", "hci0", "--name", "msgpipe-push",
                                "--centrals", "2", "/dev/null"], bus: bus.address)
        let (_, status) = await send.finish()
        #expect(status != 0)
        #expect(send.errors.contains("(version unknown) hands every central the same acquired socket"), "\(send.errors)")
        #expect(send.errors.contains("upgrade BlueZ to 5.76 or later"), "\(send.errors)")
        #expect(fake.record.application.withLock { $0 == nil }, "nothing registered")
    }

    @Test func sendAsCentralThroughBluetoothdFindsThePeripheralByNameAndDelivers() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZRemote(address: bus.address)
        defer { fake.stop() }
        fake.announceWhenDiscovering(BlueZCentralTests.peripheral)
        let body = (0..<80_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("msgpipe-bluez-central-\(getpid())")
        try Data(body).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let send = try Command(["send", "--backend", "bluez", "--adapter", "hci0", "--to", "msgpipe-peer", "--verbose",
                                file.path], bus: bus.address)
        // The fake hands its ends of the acquired descriptors over once the CLI acquired them.
        var ends: (write: Int32, notify: Int32)?
        for _ in 0..<1000 where ends == nil {
            ends = fake.record.writeEnd.withLock { write in
                fake.record.notifyEnd.withLock { notify in
                    guard let w = write, let n = notify else { return nil }
                    write = nil
                    notify = nil
                    return (w, n)
                }
            }
            if ends == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let far = try #require(ends, "the CLI never acquired the characteristics: \(send.errors)")
        let peripheral = try AcquiredLink(sending: far.notify, receiving: far.write,
                                          maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: 185))
        let transport = Transport(link: peripheral)
        var messages = transport.messages.makeAsyncIterator()
        let message = await messages.next()
        let (_, status) = await send.finish()
        await transport.close()
        #expect(message?.body == body)
        #expect(status == 0, "\(send.errors)")
        #expect(send.errors.contains("backend: bluez"))
        #expect(fake.record.disconnects.withLock { $0 } == 1, "send disconnects the device it connected")
    }

    @Test func plainFormatsThroughBluetoothdWriteEveryPacketAsARequestSoExitZeroMeansDelivered() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZRemote(address: bus.address)
        defer { fake.stop() }
        fake.announceWhenDiscovering(BlueZCentralTests.peripheral)
        let line = Array(repeating: UInt8(ascii: "x"), count: 1000)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("msgpipe-bluez-lines-\(getpid())")
        try Data(line).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let send = try Command(["send", "--backend", "bluez", "--adapter", "hci0", "--to", "msgpipe-peer", "--profile", "msgpipe",
                                "--format", "lines", file.path], bus: bus.address)
        let (_, status) = await send.finish()
        #expect(status == 0, "\(send.errors)")
        var received: [UInt8] = []
        var types: Set<String> = []
        while fake.record.writes.count > 0, let write = await fake.record.writes.next() {
            received += write.value
            types.insert(write.type)
        }
        #expect(received == line + [0x0A], "every byte and the newline arrived through WriteValue")
        #expect(types == ["request"], "each packet was a Write Request the peer answered")
        #expect(fake.record.writeEnd.withLock { $0 } == nil, "nothing went through an acquired descriptor")
    }

    @Test func scanThroughBluetoothdListsTheAdvertiserWithRSSIAndService() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZRemote(address: bus.address)
        defer { fake.stop() }
        fake.announceWhenDiscovering(BlueZCentralTests.peripheral)
        let scan = try Command(["scan", "--backend", "bluez", "--adapter", "hci0", "--timeout", "1", "--json"], bus: bus.address)
        let (output, status) = await scan.finish()
        let text = String(decoding: output, as: UTF8.self)
        #expect(status == 0, "\(scan.errors)")
        #expect(text.contains("\"address\":\"C0:11:22:33:44:55\""), "\(text)")
        #expect(text.contains("\"name\":\"msgpipe-peer\""), "\(text)")
        #expect(text.contains("\"rssi\":-50"), "\(text)")
        #expect(text.lowercased().contains(BlueZDiscoveryTests.msgpipeService.lowercased()), "\(text)")
        #expect(fake.record.stops.withLock { $0 } == 1, "the discovery session ends with the scan")
    }

    @Test func backendBluezWithoutBluetoothdNamesTheRemedy() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let listen = try Command(["listen", "--backend", "bluez", "--adapter", "hci0"], bus: bus.address)
        let (_, status) = await listen.finish()
        #expect(status != 0)
        // Standard error is read on its own thread: wait for it rather than race the process's exit.
        #expect(await listen.waitForError("bluetoothd is not running", seconds: 5), "\(listen.errors)")
    }

    @Test func aMissingAdapterIsNamedWithTheRemedy() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let listen = try Command(["listen", "--backend", "bluez", "--adapter", "hci7"], bus: bus.address)
        let (_, status) = await listen.finish()
        #expect(status != 0)
        #expect(await listen.waitForError("no Bluetooth adapter hci7", seconds: 5), "\(listen.errors)")
    }
}
