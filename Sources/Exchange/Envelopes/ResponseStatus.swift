/// How a request ended, as the response envelope reports it.
public enum ResponseStatus: UInt8, Sendable, Equatable, CustomStringConvertible {
    /// The command exited 0; the body is its standard output.
    case ok = 0
    /// The command exited non-zero or was killed by a signal; the body is its standard output.
    case commandFailed = 1
    /// The command ran past serve's command timeout and was killed.
    case commandTimedOut = 2
    /// The server refused the request without running it (the body says why).
    case refused = 3
    /// A previous attempt with this id started the command, but serve stopped before its result was
    /// recorded. The command is not run again: whether it finished is unknown.
    case outcomeUnknown = 4

    public var description: String {
        switch self {
        case .ok: "ok"
        case .commandFailed: "command-failed"
        case .commandTimedOut: "command-timed-out"
        case .refused: "refused"
        case .outcomeUnknown: "outcome-unknown"
        }
    }
}
