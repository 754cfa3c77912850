import GATT
import BLELink
import Benchmark
import Transport

/// GATTLink over a real `socketpair(AF_UNIX, SOCK_SEQPACKET)`: 1 MiB central to peripheral, as bare packets
/// of min(ATT_MTU - 3, 512) bytes (Write Commands) and as one Transport message (acknowledged). Wall clock is
/// the measurement; the custom metric is the payload throughput in kbit/s.
let benchmarks: @Sendable () -> Void = {
    let throughput = BenchmarkMetric.custom("throughput kbit/s", polarity: .prefersLarger, useScalingFactor: false)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, throughput], maxDuration: .seconds(20), maxIterations: 5)
    let size = 1 << 20

    for mtu in [517, 23] {
        Benchmark("GATTLink 1 MiB packets, MTU \(mtu)", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                let pair = try await ConnectedPair(mtu: mtu, takingConnectedEvents: true)
                let packetSize = ATTOpcode.maximumValueLength(mtu: mtu)
                let packet = [UInt8](repeating: 0x5A, count: packetSize)
                let count = (size + packetSize - 1) / packetSize
                let start = ContinuousClock.now
                async let sending: Void = { for _ in 0..<count { try await pair.central.send(packet) } }()
                var received = 0
                for await event in pair.peripheral.events {
                    if case let .packet(bytes) = event { received += bytes.count }
                    if received >= count * packetSize { break }
                }
                try await sending
                benchmark.measurement(throughput, kbps(received, since: start))
                await pair.close()
            }
        }

        Benchmark("Transport over GATTLink 1 MiB message, MTU \(mtu)", configuration: configuration) { benchmark in
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            for _ in benchmark.scaledIterations {
                let pair = try await ConnectedPair(mtu: mtu, takingConnectedEvents: false)
                let sender = Transport(link: pair.central)
                let receiver = Transport(link: pair.peripheral)
                let start = ContinuousClock.now
                async let delivered = receiver.messages.first { _ in true }
                try await sender.send(message)
                let body = await delivered?.body ?? []
                benchmark.measurement(throughput, kbps(body.count, since: start))
                blackHole(body)
                await sender.close()
                await receiver.close()
                await pair.close()
            }
        }
    }
}

private func kbps(_ bytes: Int, since start: ContinuousClock.Instant) -> Int {
    let elapsed = start.duration(to: .now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    return Int((Double(bytes) * 8 / 1_000 / seconds).rounded())
}

/// A central and a peripheral GATTLink connected over a fresh socketpair at `mtu`; their `.connected` events
/// are taken unless a Transport is to see them.
private struct ConnectedPair {
    let central = GATTLink()
    let peripheral = GATTLink()
    let serving: Task<Void, Never>

    init(mtu: Int, takingConnectedEvents: Bool) async throws {
        let (a, b) = try SeqPacketSocket.pair()
        let (centralBearer, peripheralBearer) = (try ATTBearer(adopting: a), try ATTBearer(adopting: b))
        let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 24, serverMTU: UInt16(mtu))
        serving = Task { [peripheral] in
            await peripheral.serve(peripheralBearer, info: info, configuration: .init(maximumMTU: mtu))
        }
        try await central.connect(centralBearer, mtu: mtu)
        guard takingConnectedEvents else { return }
        _ = await central.events.next()
        _ = await peripheral.events.next()
    }

    func close() async {
        await central.close()
        await peripheral.close()
        await serving.value
    }
}
