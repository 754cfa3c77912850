import Exchange
import Secure
import Transport

/// The exit codes of `msgpipe request` (listed in its --help and the README).
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

    static func forStatus(_ status: ResponseStatus) -> RequestExitCode {
        switch status {
        case .ok: .ok
        case .commandFailed, .commandTimedOut: .commandFailed
        case .refused: .refused
        case .outcomeUnknown: .outcomeUnknown
        }
    }

    static func forError(_ error: any Error) -> RequestExitCode {
        switch error {
        case is RequestDeadlineError: return .timeout
        case let error as SecureError:
            switch error {
            case .notAuthenticated, .modeMismatch, .refusedByPeer(.notAuthenticated), .refusedByPeer(.modeMismatch):
                return .notAuthenticated
            case .refusedByPeer: return .refused
            case .closedDuringHandshake: return .connectionFailed
            default: return .failure
            }
        case let error as TransportError:
            switch error {
            case .responseTimedOut, .deadlineExceeded: return .timeout
            case .retriesExhausted, .linkStalled, .link, .closed, .packetSizeTooSmall: return .connectionFailed
            default: return .failure
            }
        case is ExchangeError: return .failure
        default: return .connectionFailed  // ATT and Bluetooth errors while connecting
        }
    }

    static let helpText = """
        Exit codes: 0 response received (command succeeded), 1 other error, 2 connection failed, \
        3 command failed on the server, 4 timeout (retry with the same --id), 5 refused by the server, \
        6 not authenticated (wrong key), 7 outcome unknown (serve stopped while the command ran).
        """
}

/// The overall `--timeout` of `msgpipe request` passed.
struct RequestDeadlineError: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "no response within \(seconds) s" }
}
