import Glibc
import MsgPipe
import Synchronization
import TestSupport
import Testing

/// What a service on systemd gets from the library: readiness notifications, shutdown signals that cancel its
/// work, and the authorized keys reloaded on SIGHUP. One suite, serialized: the signals are the process's.
@Suite(.serialized)
struct ServiceSignalsTests {
    static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/msgpipe-service-XXXXXX".utf8CString)
        return String(cString: try #require(mkdtemp(&template)))
    }

    @Test func readyAndStoppingReachTheNotifySocket() throws {
        let path = try Self.temporaryDirectory() + "/notify"
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        setenv("NOTIFY_SOCKET", path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        func received() -> String {
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : ""
        }
        SystemdNotify.ready()
        #expect(received() == "READY=1")
        SystemdNotify.stopping()
        #expect(received() == "STOPPING=1")
    }

    @Test func aShutdownSignalRunsOnSignalAndCancelsTheWork() async throws {
        let signals = await ShutdownSignals()
        let stopped = Mutex(false)
        let result = await signals.cancellingOnSignal(onSignal: { stopped.withLock { $0 = true } }) { () async throws -> Int in
            kill(getpid(), SIGTERM)
            try await Task.sleep(for: hangGuard)
            return 1
        }
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(stopped.withLock { $0 })
        withExtendedLifetime(signals) {}
    }

    @Test func workThatEndsFirstReturnsItsValueAndASignalBeforeWaitingIsKept() async throws {
        let signals = await ShutdownSignals()
        #expect(try await signals.cancellingOnSignal { 7 }.get() == 7)
        let early = await ShutdownSignals()
        kill(getpid(), SIGINT)
        let result = await early.cancellingOnSignal { () async throws -> Int in
            try await Task.sleep(for: hangGuard)
            return 1
        }
        #expect(throws: CancellationError.self) { try result.get() }
        withExtendedLifetime(signals) {}
    }

    @Test func aShutdownSignalEndsServingRequestsAndRemovesTheSocketFile() async throws {
        let path = try Self.temporaryDirectory() + "/serve.sock"
        let answers = RequestServer(journal: nil) { body in body }
        let signalled = try await PipeServer.serveRequestsUntilShutdown(
            PipeAcceptor(at: .unix(path: path), options: MessagePipe.Options()), with: answers,
            onServing: { _ in
                #expect(access(path, F_OK) == 0)
                kill(getpid(), SIGTERM)
            })
        #expect(signalled)
        #expect(access(path, F_OK) != 0)
    }

    @Test func hangupReloadsTheKeyringAndReportsRevokedKeysOrARefusedFile() async throws {
        let phones = (0 ..< 2).map { _ in IdentityKey() }
        let path = try Self.temporaryDirectory() + "/authorized_keys"
        func write(_ text: String) throws {
            let file = try #require(fopen(path, "w"))
            fputs(text, file)
            fclose(file)
        }
        try write(phones.enumerated().map { "\($1.publicKey.text) phone-\($0)\n" }.joined())
        let keyring = try AuthorizedKeyring(path: path)
        let (outcomes, continuation) = AsyncStream<Result<[AuthorizedKeys.Entry], KeyFileError>>.makeStream()
        await PipeKeys.authorized(IdentityKey(), keyring).reloadOnHangup { _, outcome in continuation.yield(outcome) }
        var iterator = outcomes.makeAsyncIterator()
        try write("\(phones[1].publicKey.text) phone-1\n")
        kill(getpid(), SIGHUP)
        #expect(try await iterator.next()?.get().map(\.name) == ["phone-0"])
        try write("not a key\n")
        kill(getpid(), SIGHUP)
        let refused = await iterator.next()
        #expect(throws: KeyFileError.self) { try refused?.get() }
        #expect(keyring.keys.entries.map(\.name) == ["phone-1"])
    }
}
