public import MsgPipe
import Synchronization

/// Taps into what the commands do, for a program that embeds them (msgpipe-lab's fault injection). None by
/// default: `msgpipe` itself never sets them.
public struct CommandTaps: Sendable {
    /// Told the total bytes `send` handed to the link so far.
    public var sentBytes: (@Sendable (Int) -> Void)?
    /// Told how many messages `listen` has kept so far, each time a batch is kept and before any of it is
    /// acknowledged (the lab kills listen there: kept, never acknowledged).
    public var kept: (@Sendable (Int) -> Void)?
    /// Sees every link event the receiving commands (`listen`, both roles) get, with the link it came from.
    public var received: (@Sendable (LinkEvent, any PipeLink) -> Void)?
    /// Replaces `request`'s exchange over an established Transport (handshake, sealed request, response).
    public var request: (@Sendable (
        _ body: [UInt8], _ id: RequestID, _ transport: Transport, _ credentials: SecureCredentials, _ timeout: Duration
    ) async throws -> ResponseEnvelope)?

    public init() {}

    private static let installed = Mutex(CommandTaps())

    /// The taps in effect; set them before a command runs.
    public static var current: CommandTaps {
        get { installed.withLock { $0 } }
        set { installed.withLock { $0 = newValue } }
    }
}
