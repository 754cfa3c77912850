/// A central's pipes to several peripherals, connected at once: each that came up with the peer it was asked
/// for, each that did not with its error. Each pipe reconnects as its options say; an unreachable peer never
/// holds the others back.
///
/// ```swift
/// let peers = await PeerPipes.connect(toEach: ["door", "hall"], options: options)
/// for failure in peers.unreachable { print("cannot connect to \(failure.peer): \(failure.error)") }
/// for pipe in peers.pipes { print(peers.peer(of: pipe) ?? "?") }
/// ```
public struct PeerPipes: Sendable {
    /// A peer that connected: the address it was asked for and its pipe.
    public struct Connected: Sendable {
        /// The peer as asked for (an advertised name, an address, `unix:PATH`).
        public let peer: String
        public let pipe: MessagePipe

        /// ``peer``, followed by the address the pipe reached when that differs (a name resolved to a device):
        /// `kiosk (AA:BB:CC:DD:EE:FF)`.
        public var name: String { peer == pipe.peer ? peer : "\(peer) (\(pipe.peer))" }
    }

    /// A peer that could not be connected, and the error its connect threw.
    public struct Unreachable: Sendable {
        public let peer: String
        public let error: any Error
    }

    /// The peers that connected, in the order they were asked for.
    public let connected: [Connected]
    /// The peers that could not be connected, in the order they were asked for.
    public let unreachable: [Unreachable]

    /// Splits one connect result per peer (`results[i]` for `peers[i]`) into the connected and the unreachable.
    public init(peers: [String], results: [Result<MessagePipe, any Error>]) {
        var connected: [Connected] = []
        var unreachable: [Unreachable] = []
        for (peer, result) in zip(peers, results) {
            switch result {
            case let .success(pipe): connected.append(Connected(peer: peer, pipe: pipe))
            case let .failure(error): unreachable.append(Unreachable(peer: peer, error: error))
            }
        }
        self.connected = connected
        self.unreachable = unreachable
    }

    /// Connects to every peer at once through `stack`, each as `MessagePipe.connect(to:over:options:)` does.
    public static func connect(toEach peers: [String], over stack: any PipeStack, options: MessagePipe.Options = .init()) async -> PeerPipes {
        PeerPipes(peers: peers, results: await MessagePipe.concurrently(peers) { peer in
            do {
                return .success(try await MessagePipe.connect(to: peer, over: stack, options: options))
            } catch {
                return .failure(error)
            }
        })
    }

    /// The connected pipes, in the order their peers were asked for.
    public var pipes: [MessagePipe] { connected.map(\.pipe) }

    /// The peer `pipe` was asked for; nil for a pipe that is not one of these.
    public func peer(of pipe: MessagePipe) -> String? {
        connected.first { $0.pipe === pipe }?.peer
    }

    /// Closes every connected pipe.
    public func close() async {
        for pipe in pipes { await pipe.close() }
    }
}
