import BLESocket
import Glibc
public import SDBus

/// The version of the bluetoothd that owns org.bluez, where the box lets a normal user read it: the process
/// id behind the name (`GetConnectionUnixProcessID`), its executable from `/proc/PID/cmdline` (readable by
/// every user), and that executable's `--version` output. bluetoothd has no version on D-Bus.
///
/// It decides how many centrals one peripheral may serve at once: before 5.76 bluetoothd keeps ONE acquired
/// notify socket per characteristic for all centrals (and before 5.69 one write socket), so their packets mix
/// (``BlueZPeripheral`` then serves one central at a time).
public struct BlueZVersion: Sendable, Comparable, CustomStringConvertible {
    public let major: Int
    public let minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// The first version whose bluetoothd hands every central its own acquired write (5.69) and notify
    /// (5.76) socket, so that several centrals can be served at once.
    public static let perCentralSockets = BlueZVersion(major: 5, minor: 76)
    /// The first bluetoothd whose EATT (several ATT bearers per link, `[GATT] Channels`) is off unless asked
    /// for. Before it, values a peer sends over its bearers can arrive out of order, which the plain formats
    /// cannot repair.
    public static let eattOffByDefault = BlueZVersion(major: 5, minor: 67)

    /// Parses `bluetoothd --version`'s output ("5.66\n"); nil for anything else. At most 32 bytes are looked at.
    public init?(parsing output: some Collection<UInt8>) {
        let text = output.prefix(32).prefix { $0 != UInt8(ascii: "\n") }
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 2, let major = Self.number(parts[0]), let minor = Self.number(parts[1]) else { return nil }
        self.init(major: major, minor: minor)
    }

    private static func number(_ digits: some Collection<UInt8>) -> Int? {
        guard (1...4).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    public var description: String { "\(major).\(minor)" }

    public static func < (lhs: BlueZVersion, rhs: BlueZVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }

    /// The running bluetoothd's version, or nil when it cannot be told (another PID namespace, a process
    /// whose command line does not name a bluetoothd, no answer within 2 s).
    public static func running(bus: DBusConnection) async -> BlueZVersion? {
        guard let reply = try? await bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID", arguments: [.string("org.bluez")]),
            let pid = reply.first?.uint32Value, let executable = executable(pid: pid) else { return nil }
        // On a thread of its own: the child may take up to 2 s, no cooperative thread waits for it.
        guard let output = try? await BlockingCall.run({ versionOutput(of: executable) }) else { return nil }
        return BlueZVersion(parsing: output)
    }

    /// The first word of /proc/PID/cmdline when it is an absolute path ending in "/bluetoothd".
    static func executable(pid: UInt32) -> String? {
        let fd = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let first = buffer[..<count].prefix { $0 != 0 }
        guard let path = String(validating: first, as: UTF8.self), path.hasPrefix("/"), path.hasSuffix("/bluetoothd")
        else { return nil }
        return path
    }

    /// Runs `executable --version` (standard input and error /dev/null) and returns at most 32 bytes of its
    /// output, until it closes it; nil if it has not within `timeout`. The process is killed and reaped before
    /// this returns, so nothing it does can hold the caller.
    static func versionOutput(of executable: String, timeout: Duration = .seconds(2)) -> [UInt8]? {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { return nil }
        // Not inherited by anything else this process spawns meanwhile; the child's stdout is a dup2 of it.
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        defer { close(pipeFDs[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let arguments = [executable, "--version"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, executable, &actions, nil, &argv, environ)
        close(pipeFDs[1])
        guard spawned == 0 else { return nil }
        defer {
            // Whatever it did (answered, hung, kept writing): it is done. A process that already exited is
            // a zombie until waitpid, so its pid cannot belong to another process yet.
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        var output: [UInt8] = []
        var descriptor = pollfd(fd: pipeFDs[0], events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + timeout
        while output.count < 32 {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 32 - output.count)
            let count = read(pipeFDs[0], &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            output += chunk[..<count]
        }
        return output
    }
}
