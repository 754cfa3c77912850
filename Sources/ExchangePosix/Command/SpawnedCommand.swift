import Exchange
import Glibc

/// `/bin/sh -c COMMAND` started with posix_spawn in a process group of its own, its standard input and
/// output on pipes (standard error is inherited), and its conversation run with `poll` on one thread.
struct SpawnedCommand {
    let processID: pid_t
    private var input: Int32
    private let output: Int32

    init(command: String) throws(ExchangeError) {
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        guard makePipe(&stdinPipe) else { throw Self.failure("pipe") }
        guard makePipe(&stdoutPipe) else {
            stdinPipe.forEach { _ = close($0) }
            throw Self.failure("pipe")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        // Nothing of serve's but stderr reaches the command (no sockets, no inherited pipes).
        _ = Self.addCloseFrom?(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGTERM)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let arguments: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", command].map { (text: String) in strdup(text) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, "/bin/sh", &actions, &attributes, arguments, environ)
        _ = close(stdinPipe[0])
        _ = close(stdoutPipe[1])
        guard status == 0 else {
            _ = close(stdinPipe[1])
            _ = close(stdoutPipe[0])
            throw .commandNotStarted("posix_spawn /bin/sh: \(String(cString: strerror(status)))")
        }
        processID = pid
        input = stdinPipe[1]
        output = stdoutPipe[0]
        _ = fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK)
        _ = fcntl(output, F_SETFL, fcntl(output, F_GETFL) | O_NONBLOCK)
    }

    /// Writes `stdin`, collects standard output until EOF, then reaps the process. Blocks the calling
    /// thread; ends early (killing the process group) at `deadline` (CLOCK_MONOTONIC nanoseconds), when
    /// `cancel` fires, or when the output passes `maximumOutput`.
    mutating func communicate(
        stdin: [UInt8], deadline: UInt64, maximumOutput: Int, cancel: CancelPipe
    ) -> CommandOutcome {
        var written = 0
        var collected: [UInt8] = []
        var ending: CommandOutcome?
        if stdin.isEmpty { closeInput() }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        conversation: while true {
            let now = Self.monotonicNanoseconds()
            guard now < deadline else {
                ending = .timedOut(output: collected)
                break
            }
            var descriptors = [
                pollfd(fd: output, events: Int16(POLLIN), revents: 0),
                pollfd(fd: cancel.readDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            if input >= 0 { descriptors.append(pollfd(fd: input, events: Int16(POLLOUT), revents: 0)) }
            let waitMilliseconds = Int32(min((deadline - now) / 1_000_000 + 1, UInt64(Int32.max)))
            if poll(&descriptors, nfds_t(descriptors.count), waitMilliseconds) < 0 {
                if errno == EINTR { continue }
                ending = .killedBySignal(SIGKILL, output: collected)
                break
            }
            if descriptors[1].revents != 0 {
                ending = .cancelled
                break
            }
            if input >= 0, descriptors.count == 3, descriptors[2].revents != 0 {
                let result = stdin.withUnsafeBytes { buffer in
                    write(input, buffer.baseAddress! + written, min(stdin.count - written, 65_536))
                }
                if result > 0 { written += result }
                if written == stdin.count || (result < 0 && errno != EAGAIN && errno != EINTR) { closeInput() }
            }
            if descriptors[0].revents != 0 {
                let result = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress!, $0.count) }
                if result == 0 { break conversation }
                if result > 0 {
                    collected += chunk.prefix(result)
                    if collected.count > maximumOutput {
                        ending = .outputTooLarge(limit: maximumOutput)
                        break
                    }
                } else if errno != EAGAIN, errno != EINTR {
                    break conversation
                }
            }
        }
        if ending != nil { kill(-processID, SIGKILL) }
        closeInput()
        _ = close(output)
        let status = reap()
        if let ending { return ending }
        if status & 0x7F == 0 { return .exited(code: (status >> 8) & 0xFF, output: collected) }
        return .killedBySignal(status & 0x7F, output: collected)
    }

    private mutating func closeInput() {
        guard input >= 0 else { return }
        _ = close(input)
        input = -1
    }

    private func reap() -> Int32 {
        var status: Int32 = 0
        while waitpid(processID, &status, 0) < 0, errno == EINTR {}
        return status
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which its Swift overlay does not export.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func failure(_ operation: String) -> ExchangeError {
        .commandNotStarted("\(operation): \(String(cString: strerror(errno)))")
    }
}
