import ArgumentParser
import MsgPipe
import MsgPipeStore

extension ListenCommand {
    /// `listen --to` / `--role central`: a pipe per peer (one `--to`, or several), connected at once, each
    /// reconnecting after every drop without limit (so Transport resumes); writes every message whole as it
    /// arrives, until a signal or `--count` messages. With several `--to` each message carries its `--to` as
    /// `peer` and its link's parameters (`--json`), or goes in that peer's folder (`--out-dir`); a peer that
    /// cannot be connected at first is named and the others are received from, and the exit code is then 1
    /// when they end.
    func receiveAsCentral(signals: ShutdownSignals) async throws {
        let several = link.hasSeveralPeers
        var options = try receiverOptions(asCentral: true)
        // Key files are checked before anything connects (keys pin one peer).
        if !several { options.keys = try secure.centralKeys() }
        let inbox = try openInbox()
        let peers: [String]
        do {
            peers = try link.peerAddresses()
        } catch {
            printError(link.connectFailure(error))
            throw ExitCode(1)
        }
        let bluetooth = (try? link.endpoint()) == .bluetooth
        var pipes: [MessagePipe] = []
        var names: [ObjectIdentifier: String] = [:]
        var unreachable: [String] = []
        for (peer, result) in zip(peers, await MessagePipe.connect(toEach: peers, options: options)) {
            switch result {
            case let .success(pipe):
                let name = !several ? pipe.peer : peer == pipe.peer ? peer : "\(peer) (\(pipe.peer))"
                printError("connected to \(name)" + (bluetooth ? pipe.carrier.map { " over \($0.rawValue)" } ?? "" : ""))
                if !several, verbose, bluetooth, pipe.carrier != nil { printError("\(pipe.peer): \(pipe.linkParameters)") }
                pipes.append(pipe)
                if several { names[ObjectIdentifier(pipe)] = peer }
            case let .failure(error) where several:
                printError("cannot connect to \(peer): \(cli: error)")
                unreachable.append(peer)
            case let .failure(error):
                guard case MessagePipeError.notAuthenticated = error else {
                    printError(link.connectFailure(error))
                    throw ExitCode(1)
                }
                printError("\(cli: error)")
                throw ExitCode(77)
            }
        }
        guard !pipes.isEmpty else { throw ExitCode(1) }
        let byFolder = outDirectory != nil
        // Until a signal, --count messages (each peripheral then takes its last acknowledgement and ends the
        // connection, at most 2 s) or the pipes' end.
        let end = await signals.cancellingOnSignal { [pipes, names] in
            await inbox.receive(fromEach: pipes) { message, pipe in
                let peer = names[ObjectIdentifier(pipe)]
                let carrier = bluetooth ? pipe.carrier?.rawValue : nil
                return MessageOutput.Item(
                    body: message.bytes, messageID: message.id, connection: pipe.connections, peer: peer, carrier: carrier,
                    sender: message.sender, parameters: carrier == nil ? nil : pipe.linkParameters,
                    folder: byFolder ? peer.map(MessageDirectory.folderName) : nil)
            }
        }
        try await finish(end.get(), inbox)
        if case .ended? = try? end.get(), let pipe = pipes.first(where: { $0.rejection != nil }) {
            await pipe.close()  // the rejection was logged by the pipe as it closed
            throw ExitCode(1)
        }
        if !unreachable.isEmpty {
            printError("not every peer was connected: \(unreachable.joined(separator: ", "))")
            throw ExitCode(1)
        }
    }
}
