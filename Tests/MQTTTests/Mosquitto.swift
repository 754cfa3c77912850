import Foundation
import Testing
import BLELink
import TestSupport

/// Debian's mosquitto on a free 127.0.0.1 port, with its persistence, password and ACL files in a temp
/// directory; restartable on the same port and store, stopped with SIGTERM. Nothing but loopback is used.
final class Mosquitto: @unchecked Sendable {
    static let binary = "/usr/sbin/mosquitto"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    let directory: URL
    let port: Int
    /// With `tls`: a second listener, TLS only, on this port.
    let tlsPort: Int?
    private var process: Process?

    /// A started broker, set up and started on a thread of its own (``BlockingCall.run(_:)``): starting runs
    /// mosquitto_passwd and waits for the port to accept. `users`: name and password (anonymous access is
    /// refused then); `acl`: the ACL file's lines; `tls`: the PEM certificate (chain) and key files of a second,
    /// TLS listener.
    static func started(
        users: [(String, String)] = [], acl: [String]? = nil, tls: (certificate: String, key: String)? = nil
    ) async throws -> Mosquitto {
        try await BlockingCall.run { try Mosquitto(users: users, acl: acl, tls: tls) }
    }

    private init(users: [(String, String)] = [], acl: [String]? = nil, tls: (certificate: String, key: String)? = nil) throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("mqtt-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Started as root, mosquitto runs as the user mosquitto: its store and log must be writable for it.
        _ = chmod(directory.path, 0o777)
        port = try Self.freePort()
        tlsPort = tls == nil ? nil : try Self.freePort()
        var config = [
            "listener \(port) 127.0.0.1",
            "persistence true",
            "persistence_location \(directory.path)/",
            "autosave_interval 1",
            "log_dest file \(directory.path)/mosquitto.log",
            "log_type all",
        ]
        if users.isEmpty {
            config.append("allow_anonymous true")
        } else {
            config.append("allow_anonymous false")
            let file = directory.appendingPathComponent("passwords").path
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            for (user, password) in users {
                let tool = Process()
                tool.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
                tool.arguments = ["-b", file, user, password]
                try tool.run()
                tool.waitUntilExit()
            }
            config.append("password_file \(file)")
        }
        if let acl {
            let file = directory.appendingPathComponent("acl").path
            try (acl.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            config.append("acl_file \(file)")
        }
        if let tls, let tlsPort {
            config += ["listener \(tlsPort) 127.0.0.1", "certfile \(tls.certificate)", "keyfile \(tls.key)"]
        }
        try (config.joined(separator: "\n") + "\n").write(
            to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        try startBlocking()
    }

    var url: String { "mqtt://127.0.0.1:\(port)/fleet" }

    /// Starts the broker (again, on the same port and store) and returns once it accepts connections.
    func start() async throws {
        try await BlockingCall.run { try self.startBlocking() }
    }

    /// SIGTERM (mosquitto saves its store), then waits for the exit.
    func stop() async {
        try! await BlockingCall.run { self.stopBlocking() }
    }

    private func startBlocking() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-c", directory.appendingPathComponent("mosquitto.conf").path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.runWithNoSignalBlocked()
        self.process = process
        // The previous broker on this port is gone (``awaitExit(_:)``), so a port that accepts is this one's;
        // one that exited (it could not bind) is a failure at once.
        let deadline = Date(timeIntervalSinceNow: 10)
        while Date() < deadline, Self.isAlive(process.processIdentifier) {
            if Self.accepts(port: port), tlsPort.map(Self.accepts(port:)) ?? true { return }
            usleep(20_000)
        }
        throw BrokerError.didNotStart(log)
    }

    private func stopBlocking() {
        guard let process, process.isRunning else { return }
        process.terminate()
        Self.awaitExit(process)
        self.process = nil
    }

    /// Stops the broker, deletes its store (sessions and queued messages: as a broker without persistence
    /// forgets them), and starts it again on the same port.
    func restartForgettingSessions() async throws {
        try await BlockingCall.run {
            self.stopBlocking()
            try? FileManager.default.removeItem(at: self.directory.appendingPathComponent("mosquitto.db"))
            try self.startBlocking()
        }
    }

    /// Waits up to 10 s for `process` to exit (a loaded machine can take seconds to save the store), then
    /// kills it and waits until it is gone: a broker started next on the same port must not find the old one
    /// still holding it. Reads /proc: Foundation notices an exit late.
    static func awaitExit(_ process: Process) {
        let pid = process.processIdentifier
        for _ in 0 ..< 1000 where isAlive(pid) { usleep(10_000) }
        guard isAlive(pid) else { return }
        kill(pid, SIGKILL)
        for _ in 0 ..< 1000 where isAlive(pid) { usleep(10_000) }
    }

    /// True while `pid` runs (not gone, not a zombie).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        return !status.contains("State:\tZ")
    }

    var log: String { (try? String(contentsOf: directory.appendingPathComponent("mosquitto.log"), encoding: .utf8)) ?? "" }

    /// Kills a broker still running without waiting for it: a deinit may run on a pool thread.
    deinit {
        if let process, process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    enum BrokerError: Error { case didNotStart(String) }

    /// A port the kernel just handed out on 127.0.0.1 (closed again, so free for the broker).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw BrokerError.didNotStart("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// `mosquitto_sub` as the independent consumer: a persistent session (QoS 1, session kept for an hour), each
/// message one line `topic|user properties|payload`.
final class Consumer: @unchecked Sendable {
    struct Received: Equatable {
        var topic: String
        var properties: [String: String]
        var payload: String
    }

    private let process = Process()
    private let lock = NSCondition()
    private var text = ""
    private var arrivals: [ContinuousClock.Instant] = []
    let clientID = "consumer-\(UUID().uuidString.prefix(8))"
    let port: Int
    let topic: String

    init(port: Int, topic: String = "fleet/+/up", user: (String, String)? = nil) throws {
        self.port = port
        self.topic = topic
        try start(user: user)
    }

    private func start(user: (String, String)?) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        var arguments = [
            "-V", "mqttv5", "-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-c", "-x", "3600", "-i", clientID,
            "-t", topic, "-F", "%t|%P|%p",
        ]
        if let (name, password) = user { arguments += ["-u", name, "-P", password] }
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        // Weak: the consumer process is killed when the test drops its Consumer.
        Thread { [weak self] in
            while true {
                let data = handle.availableData
                guard !data.isEmpty, let self else { return }
                let now = ContinuousClock.now
                self.lock.lock()
                let chunk = String(decoding: data, as: UTF8.self)
                self.text += chunk
                self.arrivals += Array(repeating: now, count: chunk.count(where: { $0 == "\n" }))
                self.lock.broadcast()
                self.lock.unlock()
            }
        }.start()
    }

    /// When each line so far arrived (when the consumer process wrote it).
    var arrivalTimes: [ContinuousClock.Instant] {
        lock.lock()
        defer { lock.unlock() }
        return arrivals
    }

    /// Every line so far.
    var received: [Received] {
        lock.lock()
        defer { lock.unlock() }
        return text.split(separator: "\n").map { line in
            let parts = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            var properties: [String: String] = [:]
            for pair in (parts.count > 1 ? parts[1] : "").split(separator: " ") {
                if let colon = pair.firstIndex(of: ":") {
                    properties[String(pair[..<colon])] = String(pair[pair.index(after: colon)...])
                }
            }
            return Received(
                topic: String(parts[0]), properties: properties, payload: parts.count > 2 ? String(parts[2]) : "")
        }
    }

    /// Waits until messages with `count` different "id" properties arrived (true) or `seconds` passed: QoS 1
    /// may deliver a message twice (a broker restart), so a count of lines can be reached with one still missing.
    func waitFor(distinctIDs count: Int, seconds: Double = 20) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        func ids() -> Int { Set(received.compactMap { $0.properties["id"] }).count }
        while ids() < count, Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return ids() >= count
    }

    /// Waits until `count` messages arrived (true) or `seconds` passed (polling: no pool thread blocks).
    func waitFor(count: Int, seconds: Double = 20) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while received.count < count, Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return received.count >= count
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit { stop() }
}

/// Reads one retained message from `topic` (or nil within 3 s), on a thread of its own.
func retained(port: Int, topic: String) async -> String? {
    try! await BlockingCall.run { () -> String? in
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        process.arguments = ["-V", "mqttv5", "-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-C", "1", "-W", "3"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}

/// Waits for `process` to exit without blocking a pool thread.
func exited(_ process: Process, seconds: Double = 30) async -> Int32? {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    return process.isRunning ? nil : process.terminationStatus
}

/// A fresh short directory for sockets.
func scratchDirectory() throws -> URL {
    let url = URL(fileURLWithPath: "/tmp/mq-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
