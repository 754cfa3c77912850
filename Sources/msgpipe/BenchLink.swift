import BLELink
import GATT
import Logging
import Simulator
import Synchronization
import Transport

/// `msgpipe bench` on a real link (`--link unix:PATH`, or Bluetooth with `--to`): `centrals` concurrent
/// central connections from this process, each its own ``GATTLink`` and ``Transport``, each sending
/// `messages` messages of `size` bytes to a running `msgpipe listen`; a message counts once the listener
/// acknowledged it through Transport (its CRC and reassembly checked).
struct BenchLink {
    let link: LinkOptions
    let size: Int
    let messages: Int
    let centrals: Int
    let seed: UInt64

    /// What one central measured.
    struct Result: Sendable {
        var index: Int
        var peer = ""
        var mtu: Int?
        /// The LE PHYs, where the kernel tells them (msgpipe's own GATT on the kernel's ATT channel).
        var phy: LinkPHY?
        var messagesDelivered = 0
        var payloadBytes = 0
        var seconds = 0.0
        var error: String?

        var goodputKbps: Double { seconds > 0 ? Double(payloadBytes * 8) / seconds / 1000 : 0 }
        var succeeded: Bool { error == nil }
    }

    /// Runs every central at once; returns their results in order and the wall time of the whole run.
    func run() async -> (results: [Result], seconds: Double) {
        let started = ContinuousClock.now
        let results = await withTaskGroup(of: Result.self) { group in
            for index in 0 ..< centrals {
                group.addTask { await runCentral(index) }
            }
            var results: [Result] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.index < $1.index }
        }
        return (results, Self.seconds(ContinuousClock.now - started))
    }

    /// The message bodies: the simulator's deterministic contents for the seed (central `i` uses seed + i).
    func scenario(central index: Int) -> TransferScenario {
        TransferScenario(link: BLELinkConfiguration(), seed: seed &+ UInt64(index), messageSize: size, messageCount: messages)
    }

    private func runCentral(_ index: Int) async -> Result {
        var result = Result(index: index)
        let peerLink: PeerLink
        do {
            peerLink = try await link.makeCentralLink()
        } catch {
            result.error = "cannot connect to \(link.displayName): \(error)"
            return result
        }
        let packetSize = Mutex<Int?>(nil)
        let observed = ObservedLink(
            peerLink,
            onEvent: { event in
                switch event {
                case let .connected(maximumPacketSize), let .maximumPacketSizeChanged(maximumPacketSize):
                    packetSize.withLock { $0 = maximumPacketSize }
                default: break
                }
            },
            onSent: { _ in })
        var bearer: ATTBearer?
        do {
            result.peer = try await link.connect(peerLink, onBearer: { bearer = $0 })
        } catch {
            result.error = "cannot connect to \(link.displayName): \(error)"
            return result
        }
        if let info = peerLink.peerInfo, size > Int(info.maximumMessageSize) {
            result.error = "--size \(size) exceeds the listener's maximum message size of \(info.maximumMessageSize)"
            await peerLink.close()
            return result
        }
        var options = TransportOptions()
        options.endpoint.maximumMessageSize = max(options.endpoint.maximumMessageSize, size)
        let transport = Transport(link: observed, options: options, logger: Logger(label: "msgpipe.bench"))
        let scenario = scenario(central: index)
        let started = ContinuousClock.now
        for message in 0 ..< messages {
            do {
                try await transport.send(scenario.message(message))
            } catch {
                result.error = "message \(message): \(error)"
                break
            }
            result.messagesDelivered += 1
            result.payloadBytes += size
        }
        result.seconds = Self.seconds(ContinuousClock.now - started)
        // A packet is min(ATT_MTU - 3, 512) bytes: the MTU is known exactly below 512-byte packets.
        result.mtu = packetSize.withLock { $0 }.map { $0 < 512 ? $0 + 3 : ATTOpcode.maximumMTU }
        // After the transfer: a controller may move the link to 2M once it is up.
        result.phy = bearer?.phy
        await transport.close()
        await peerLink.close()
        return result
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
