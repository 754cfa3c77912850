import BLELink
@testable import BlueZLink
import SDBus
import Foundation
import Glibc
import Testing

/// ``BlueZVersion``: what `bluetoothd --version` prints, and whether several centrals can be served.
@Suite struct BlueZVersionTests {
    @Test func parsesWhatBluetoothdPrints() {
        #expect(BlueZVersion(parsing: Array("5.66\n".utf8)) == BlueZVersion(major: 5, minor: 66))
        #expect(BlueZVersion(parsing: Array("5.79".utf8))?.description == "5.79")
        for bad in ["", "\n", "5", "5.", ".66", "5.66.1", "v5.66", "5.6x", "-5.66", "5.+6", "12345.1", "bluetoothd 5.66"] {
            #expect(BlueZVersion(parsing: Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func severalCentralsAtOnceFrom5_76() {
        #expect(BlueZVersion(major: 5, minor: 66) < .perCentralSockets)
        #expect(BlueZVersion(major: 5, minor: 75) < .perCentralSockets)
        #expect(!(BlueZVersion(major: 5, minor: 76) < .perCentralSockets))
        #expect(BlueZVersion(major: 6, minor: 0) > .perCentralSockets)
    }

    /// A stand-in bluetoothd: a shell script printing `output` (after `delay` seconds).
    static func script(_ body: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("msgpipe-bluetoothd-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("bluetoothd").path
        // Written through a close-on-exec descriptor: a process another test spawns meanwhile must not keep it
        // open for writing, or exec'ing the script fails with ETXTBSY.
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let text = Array(("#!/bin/sh\n" + body + "\n").utf8)
        let written = write(fd, text, text.count)
        close(fd)
        guard written == text.count else { throw POSIXError(.EIO) }
        return path
    }

    /// ``output(_:timeout:)`` of a script that answers: retried while it is nil, since exec'ing a file written
    /// a moment ago can still meet ETXTBSY (a sibling test's child between its fork and exec holds our
    /// descriptor), which versionOutput reports as no version, as it should.
    static func answer(_ path: String) async throws -> [UInt8]? {
        for _ in 0 ..< 50 {
            if let output = await output(path) { return output }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// `versionOutput` blocks its thread: the tests run it on one of its own, as ``BlueZVersion/running(bus:)``
    /// does, with a timeout a loaded CI machine's process start fits in (30 s) unless they test the timeout.
    static func output(_ path: String, timeout: Duration = .seconds(30)) async -> [UInt8]? {
        try! await BlockingCall.run { BlueZVersion.versionOutput(of: path, timeout: timeout) }
    }

    @Test func runsTheExecutableAndReadsWhatItPrints() async throws {
        let path = try Self.script(#"[ "$1" = --version ] && echo 5.79"#)
        let output = try #require(try await Self.answer(path))
        #expect(BlueZVersion(parsing: output) == BlueZVersion(major: 5, minor: 79))
        #expect(await Self.output("/nonexistent/bluetoothd") == nil)
    }

    @Test func aBluetoothdThatDoesNotAnswerIsKilledAfterTheTimeout() async throws {
        let path = try Self.script("exec sleep 60")
        let clock = ContinuousClock()
        let started = clock.now
        #expect(await Self.output(path, timeout: .milliseconds(500)) == nil)
        #expect(started.duration(to: clock.now) < .seconds(30))
    }

    @Test func atMost32BytesAreRead() async throws {
        let path = try Self.script("yes 5.66")
        #expect(try await Self.answer(path)?.count == 32)
    }

    @Test func onlyABluetoothdNamedByAnAbsolutePathIsRun() {
        // This test process is not a bluetoothd: its command line is not taken.
        #expect(BlueZVersion.executable(pid: UInt32(getpid())) == nil)
        #expect(BlueZVersion.executable(pid: UInt32.max) == nil)
    }
}
