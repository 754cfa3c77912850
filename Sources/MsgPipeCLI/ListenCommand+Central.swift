import ArgumentParser
import MsgPipe

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
        let group = await PeerPipes.connect(toEach: peers, options: options)
        if !several, let failure = group.unreachable.first {
            guard case MessagePipeError.notAuthenticated = failure.error else {
                printError(link.connectFailure(failure.error))
                throw ExitCode(1)
            }
            printError("\(cli: failure.error)")
            throw ExitCode(77)
        }
        for connected in group.connected {
            let pipe = connected.pipe
            printError("connected to \(several ? connected.name : pipe.peer)" + (bluetooth ? pipe.carrier.map { " over \($0.rawValue)" } ?? "" : ""))
            if !several, verbose, bluetooth, pipe.carrier != nil { printError("\(pipe.peer): \(pipe.linkParameters)") }
        }
        for failure in group.unreachable { printError("cannot connect to \(failure.peer): \(cli: failure.error)") }
        guard !group.connected.isEmpty else { throw ExitCode(1) }
        let byFolder = outDirectory != nil
        // Until a signal, --count messages (each peripheral then takes its last acknowledgement and ends the
        // connection, at most 2 s) or the pipes' end.
        let end = await signals.cancellingOnSignal { [group] in
            await inbox.receive(fromEach: group.pipes) { message, pipe in
                let peer = several ? group.peer(of: pipe) : nil
                let carrier = bluetooth ? pipe.carrier?.rawValue : nil
                return MessageOutput.Item(
                    message, from: pipe, peer: peer, carrier: carrier, parameters: carrier == nil ? nil : pipe.linkParameters,
                    folder: byFolder ? peer.map(MessageDirectory.folderName) : nil)
            }
        }
        try await finish(end.get(), inbox)
        if case .ended? = try? end.get(), let pipe = group.pipes.first(where: { $0.rejection != nil }) {
            await pipe.close()  // the rejection was logged by the pipe as it closed
            throw ExitCode(1)
        }
        if !group.unreachable.isEmpty {
            printError("not every peer was connected: \(group.unreachable.map(\.peer).joined(separator: ", "))")
            throw ExitCode(1)
        }
    }
}
