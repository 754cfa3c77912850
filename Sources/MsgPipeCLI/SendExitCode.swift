import MsgPipe

/// The documented exit codes of `msgpipe send` (sysexits for usage and input errors).
enum SendExitCode: Int32 {
    /// Every message was acknowledged.
    case success = 0
    /// No connection, or the link failed and reconnecting did not bring it back.
    case linkFailure = 1
    /// A message was not acknowledged before the deadline (--timeout) or the peer stopped answering.
    case notAcknowledged = 2
    /// The peer refused a message for good (too large, or it speaks another format).
    case refused = 3
    /// Several `--to`: some peers acknowledged every message, others did not (each is named on stderr).
    case partialDelivery = 4
    /// Bad options (swift-argument-parser's usage error).
    case usage = 64
    /// An input cannot be carried in the chosen format (e.g. a newline with --format lines).
    case dataError = 65
    /// An input file cannot be opened.
    case noInput = 66
    /// `--spool`: the spool directory cannot be used (in use by another send, a damaged state file, a write
    /// or sync failed); nothing it held was lost.
    case spoolUnusable = 73
    /// Reading an input failed.
    case ioError = 74
    /// `--spool`: the spool is full (`--spool-limit`); the message was not queued, nothing queued was dropped.
    case spoolFull = 75
    /// End to end: the peer does not accept our key, is not the pinned peer, or wants keys we did not give
    /// (nothing was delivered).
    case notAuthenticated = 77
    /// A key file is missing, unreadable, world-writable or invalid (nothing was sent).
    case keyFile = 78

    /// The exit code for what stopped a peer's delivery.
    init(_ kind: PeerDelivery.Failure.Kind) {
        switch kind {
        case .link: self = .linkFailure
        case .notAcknowledged: self = .notAcknowledged
        case .refused: self = .refused
        case .notAuthenticated: self = .notAuthenticated
        case .unsendable: self = .dataError
        case .body: self = .ioError
        }
    }

    /// The summary printed by `send --help` (docs/CLI.md has the table).
    static let help = """
        Exit codes: 0 every message acknowledged, 1 link failure, 2 not acknowledged before --timeout, 3 refused \
        by the peer (too large, another --format), 4 partial delivery (several --to: some peers took every message, \
        others did not), 64 usage error, 65 an input the format cannot carry, 66 an input cannot be opened, 73 the \
        --spool directory cannot be used, 74 reading an input failed, 75 the --spool is full, 77 not authenticated (end to end, or the peer wants keys), 78 a bad key file.
        """
}
