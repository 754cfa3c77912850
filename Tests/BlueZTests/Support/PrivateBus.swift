import Foundation
import Glibc
import Synchronization
import Testing
import BLELink
import BlueZLink
import SDBus

/// A private `dbus-daemon` for one test: a temporary config with a UNIX socket in a temporary directory and a
/// policy that allows everything, started with `--print-address`. Stopped (and its directory removed) by
/// ``stop()``.
final class PrivateBus: Sendable {
    let address: String
    private let pid: pid_t
    private let stopped = Mutex(false)
    private let directory: URL

    /// Where dbus-daemon is, or nil (then the D-Bus tests are skipped).
    static let daemonPath: String? = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon", "/usr/local/bin/dbus-daemon"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static var isAvailable: Bool { daemonPath != nil }

    /// A started bus, its daemon started and its address read on a thread of its own (``BlockingCall.run(_:)``).
    static func started() async throws -> PrivateBus {
        try await BlockingCall.run { try PrivateBus() }
    }

    /// Blocks until dbus-daemon printed its address: use ``started()`` from a test.
    private init() throws {
        guard let daemon = Self.daemonPath else { throw PrivateBusError.missing }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("msgpipe-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(directory.path)/bus</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow receive_sender="*"/>
          </policy>
        </busconfig>
        """.write(to: config, atomically: true, encoding: .utf8)
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { throw PrivateBusError.noAddress }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [daemon, "--config-file=\(config.path)", "--print-address", "--nofork", "--nopidfile"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, daemon, &actions, nil, &argv, environ)
        close(pipeFDs[1])
        defer { close(pipeFDs[0]) }
        guard status == 0 else { throw PrivateBusError.noAddress }
        self.pid = pid
        // The first line is the address.
        var line = [UInt8]()
        var byte: UInt8 = 0
        while read(pipeFDs[0], &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        guard !line.isEmpty else {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw PrivateBusError.noAddress
        }
        address = String(decoding: line, as: UTF8.self)
    }

    func stop() {
        guard let pid = stopped.withLock({ stopped -> pid_t? in
            defer { stopped = true }
            return stopped ? nil : self.pid
        }) else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        try? FileManager.default.removeItem(at: directory)
    }
}
enum PrivateBusError: Error, CustomStringConvertible {
    case missing
    case noAddress

    var description: String {
        switch self {
        case .missing: "dbus-daemon is not installed (apt install dbus-daemon): D-Bus tests skipped"
        case .noAddress: "dbus-daemon printed no address"
        }
    }
}
