import MsgPipe

/// The exit codes of `msgpipe request` (listed in its --help and docs/CLI.md).
enum RequestExitCode: Int32, CaseIterable {
    /// A response arrived and the command succeeded (exit 0).
    case ok = 0
    /// Any other failure: bad input file, protocol error.
    case failure = 1
    /// The link could not be set up or dropped for good.
    case connectionFailed = 2
    /// The server ran the command and it failed (non-zero exit, killed, or timed out on the server).
    case commandFailed = 3
    /// No response within --timeout (the command may still run: retry with the same --id).
    case timeout = 4
    /// The server refused the request without running it (replayed, tampered, too large, id reused).
    case refused = 5
    /// The peer holds another key: the handshake failed and nothing ran.
    case notAuthenticated = 6
    /// A previous attempt with this id started the command but serve stopped before recording its result.
    case outcomeUnknown = 7
    /// A bad option, or a request larger than the limit (ArgumentParser's usage error).
    case usage = 64
    /// A key file is missing, unreadable, world-writable or invalid (`SecureOptions.keyFileExitCode`).
    case keyFile = 78

    static func forStatus(_ status: ResponseStatus) -> RequestExitCode {
        switch status {
        case .ok: .ok
        case .commandFailed, .commandTimedOut: .commandFailed
        case .refused: .refused
        case .outcomeUnknown: .outcomeUnknown
        }
    }

    /// The exit code for what stopped the request (the library's ``RequestFailureKind``).
    static func forError(_ error: any Error) -> RequestExitCode {
        switch RequestFailureKind(error) {
        case .notAuthenticated: .notAuthenticated
        case .refused: .refused
        case .link: .connectionFailed
        case .timedOut: .timeout
        case .other: .failure
        }
    }

    /// What `--help` says of this code: the list is made from every case, so none is left out.
    var summary: String {
        switch self {
        case .ok: "response received (command succeeded)"
        case .failure: "other error"
        case .connectionFailed: "connection failed"
        case .commandFailed: "command failed on the server"
        case .timeout: "timeout (retry with the same --id)"
        case .refused: "refused by the server"
        case .notAuthenticated: "not authenticated (wrong key)"
        case .outcomeUnknown: "outcome unknown (serve stopped while the command ran)"
        case .usage: "usage error"
        case .keyFile: "a key file is missing, unreadable, world-writable or invalid"
        }
    }

    static let helpText = "Exit codes: " + allCases.map { "\($0.rawValue) \($0.summary)" }.joined(separator: ", ") + "."
}
