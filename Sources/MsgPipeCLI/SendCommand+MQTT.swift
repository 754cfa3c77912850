import ArgumentParser
import BLELink
import MsgPipe
import MsgPipeMQTT
import Synchronization

/// `msgpipe send --mqtt`: the downlink of a gateway. Each message published to `PREFIX/ID/down` is journaled,
/// sent to the central (as central: the peer; as peripheral: every connected central, or the one its `peer`
/// property names), and reported on `PREFIX/ID/ack` once acknowledged. Runs until SIGINT/SIGTERM (exit 0).
extension SendCommand {
    func runDownlink(url text: String, journal: String) async throws {
        let shutdown = ShutdownSignal()
        let downlink: MQTTDownlink
        do throws(MQTTGatewayError) {
            var options = MQTTGateway.Options()
            options.onNote = { printError("\($0)") }
            downlink = try await MQTTDownlink.connect(
                to: MQTTBrokerURL(text), gatewayID: gateway ?? hostName(), journal: journal, options: options)
        } catch {
            printError("\(error)")
            throw ExitCode(ListenCommand.exitCode(error))
        }
        for name in downlink.unreadableJournalFiles { printError("cannot read journal file \(name); left in place") }
        var options = try link.pipeOptions(format: .msgpipe, verbose: verbose)
        options.reconnect = ReconnectBackoff(initial: .milliseconds(250), maximum: .seconds(8), attempts: .max)
        let work: Task<Void, Never>
        if try link.role(role, default: .central) == .peripheral {
            let server: PipeServer
            do {
                server = try await PipeServer.serve(try link.acceptor(options))
            } catch {
                await downlink.close()
                printError("cannot serve on \(link.displayName): \(error)")
                throw ExitCode(SendExitCode.linkFailure.rawValue)
            }
            printError(server.description)
            let centrals = CentralRegistry()
            Task { for await pipe in server.centrals { centrals.add(pipe) } }
            work = Task { await Self.deliver(downlink, to: centrals) }
            shutdown.onSignal { Task { await server.close() } }
        } else {
            let pipe: MessagePipe
            do {
                pipe = try await MessagePipe.connect(to: try link.peerAddress(), options: options)
            } catch {
                await downlink.close()
                printError(link.connectFailure(error))
                throw ExitCode(SendExitCode.linkFailure.rawValue)
            }
            let centrals = CentralRegistry()
            centrals.add(pipe)
            work = Task { await Self.deliver(downlink, to: centrals) }
        }
        printError("sending what arrives on \(downlink.downTopic); acknowledgements on \(downlink.ackTopic)")
        SystemdNotify.ready()
        _ = await shutdown.wait()
        work.cancel()
        await downlink.close()
    }

    /// Sends each message to its central(s) and reports it once they acknowledged it: the named central, or
    /// (without a `peer` property) every connected central, at least one of which must take it. A message
    /// waits while none of its centrals is connected; a failed send is tried again a second later.
    private static func deliver(_ downlink: MQTTDownlink, to centrals: CentralRegistry) async {
        for await message in downlink.messages {
            while !Task.isCancelled {
                let targets = centrals.pipes(for: message.peer)
                if targets.isEmpty {
                    try? await Task.sleep(for: .milliseconds(200))
                    continue
                }
                let delivered = await withTaskGroup(of: Bool.self) { group in
                    for pipe in targets {
                        group.addTask {
                            do {
                                try await pipe.send(message.bytes)
                                return true
                            } catch {
                                printError("message \(message.id) to \(pipe.peer): \(error)")
                                return false
                            }
                        }
                    }
                    var any = false
                    for await ok in group { any = any || ok }
                    return any
                }
                if delivered { break }
                try? await Task.sleep(for: .seconds(1))
            }
            if Task.isCancelled { return }
            while !Task.isCancelled {
                do throws(MQTTGatewayError) {
                    try await downlink.acknowledged(message)
                    break
                } catch {
                    printError("\(error)")
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
}

/// The centrals a downlink message can go to, by peer.
final class CentralRegistry: Sendable {
    private let pipes = Mutex<[MessagePipe]>([])

    func add(_ pipe: MessagePipe) { pipes.withLock { $0.append(pipe) } }

    /// Every central, or the one named `peer` (the latest pipe of that peer).
    func pipes(for peer: String?) -> [MessagePipe] {
        pipes.withLock { pipes in
            guard let peer else {
                var latest: [String: MessagePipe] = [:]
                for pipe in pipes { latest[pipe.peer] = pipe }
                return Array(latest.values)
            }
            return pipes.last { $0.peer == peer }.map { [$0] } ?? []
        }
    }
}
