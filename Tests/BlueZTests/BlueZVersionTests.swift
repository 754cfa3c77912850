@testable import BLELink
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
        try Data(("#!/bin/sh\n" + body + "\n").utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    /// `versionOutput` blocks its thread: the tests run it on one of its own, as ``BlueZVersion/running(bus:)``
    /// does, with a timeout a loaded CI machine's process start fits in (30 s) unless they test the timeout.
    static func output(_ path: String, timeout: Duration = .seconds(30)) async throws -> [UInt8]? {
        try await BlockingCall.run { BlueZVersion.versionOutput(of: path, timeout: timeout) }
    }

    @Test func runsTheExecutableAndReadsWhatItPrints() async throws {
        let path = try Self.script(#"[ "$1" = --version ] && echo 5.79"#)
        let output = try #require(try await Self.output(path))
        #expect(BlueZVersion(parsing: output) == BlueZVersion(major: 5, minor: 79))
        #expect(try await Self.output("/nonexistent/bluetoothd") == nil)
    }

    @Test func aBluetoothdThatDoesNotAnswerIsKilledAfterTheTimeout() async throws {
        let path = try Self.script("exec sleep 60")
        let clock = ContinuousClock()
        let started = clock.now
        #expect(try await Self.output(path, timeout: .milliseconds(500)) == nil)
        #expect(started.duration(to: clock.now) < .seconds(30))
    }

    @Test func atMost32BytesAreRead() async throws {
        let path = try Self.script("yes 5.66")
        #expect(try await Self.output(path)?.count == 32)
    }

    @Test func onlyABluetoothdNamedByAnAbsolutePathIsRun() {
        // This test process is not a bluetoothd: its command line is not taken.
        #expect(BlueZVersion.executable(pid: UInt32(getpid())) == nil)
        #expect(BlueZVersion.executable(pid: UInt32.max) == nil)
    }
}
