import BLELink
import Foundation
import Testing
import Transport

/// `msgpipe ... --backend bluez` end to end against the fake org.bluez on a private bus (the CLI finds it
/// through DBUS_SYSTEM_BUS_ADDRESS, as it finds bluetoothd on a stock box): the CLI registers its application,
/// the fake plays bluetoothd handing the descriptors of a subscribing central to it, and the test is that
/// central, speaking Transport over the other ends.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
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

        init(_ arguments: [String], bus: String) throws {
            process.executableURL = BlueZBackendCLITests.binary
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": bus]) { $1 }
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
            }.start()
        }

        var errors: String { lock.withLock { errorText } }

        /// Waits until standard error shows `text` (at most `seconds`), on a thread of its own: a blocked
        /// cooperative thread would starve the in-process fake org.bluez's tasks (a 2-core machine has two).
        func waitForError(_ text: String, seconds: Double = 20) async -> Bool {
            await Self.offThePool { self.waitForErrorBlocking(text, seconds: seconds) }
        }

        /// Standard output to the end and the exit status (killed after `seconds`), on a thread of its own.
        func finish(seconds: Double = 30) async -> (output: Data, status: Int32) {
            await Self.offThePool { self.finishBlocking(seconds: seconds) }
        }

        private static func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
            await withCheckedContinuation { continuation in Thread { continuation.resume(returning: body()) }.start() }
        }

        private func waitForErrorBlocking(_ text: String, seconds: Double) -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            lock.lock()
            defer { lock.unlock() }
            while !errorText.contains(text) {
                if !lock.wait(until: deadline) { return errorText.contains(text) }
            }
            return true
        }

        private func finishBlocking(seconds: Double) -> (output: Data, status: Int32) {
            let process = process
            let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: killer)
            let output = stdout.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            killer.cancel()
            return (output, process.terminationStatus)
        }
    }

    @Test func listenThroughBluetoothdReceivesAMessageOf100KiBFromASubscribedCentral() async throws {
        let bus = try PrivateBus()
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
        try await transport.send(body, timeout: .seconds(20))
        let (output, status) = await listen.finish()
        await transport.close()
        #expect(status == 0, "\(listen.errors)")
        #expect(Array(output) == body)
    }

    @Test func backendBluezWithoutBluetoothdNamesTheRemedy() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let listen = try Command(["listen", "--backend", "bluez", "--adapter", "hci0"], bus: bus.address)
        let (_, status) = await listen.finish()
        #expect(status != 0)
        #expect(listen.errors.contains("bluetoothd is not running"), "\(listen.errors)")
    }

    @Test func aMissingAdapterIsNamedWithTheRemedy() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let listen = try Command(["listen", "--backend", "bluez", "--adapter", "hci7"], bus: bus.address)
        let (_, status) = await listen.finish()
        #expect(status != 0)
        #expect(listen.errors.contains("no Bluetooth adapter hci7"), "\(listen.errors)")
    }
}
