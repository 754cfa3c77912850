import Simulator
import Benchmark
import Transport

/// Simulated transfers of the real Transport over the BLE air-time simulator. Wall clock measures the
/// simulator; the custom metrics carry the simulated results (efficiency in per mille of the link's
/// theoretical limit, goodput in kbit/s), which are deterministic for the fixed seeds.
let benchmarks: @Sendable () -> Void = {
    inMemoryBenchmarks()

    let efficiency = BenchmarkMetric.custom("efficiency ‰", polarity: .prefersLarger, useScalingFactor: false)
    let goodput = BenchmarkMetric.custom("goodput kbit/s", polarity: .prefersLarger, useScalingFactor: false)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, efficiency, goodput], maxDuration: .seconds(10), maxIterations: 5)

    let links: [(String, BLELinkConfiguration)] = [
        ("1M LL27 MTU23 10ms", BLELinkConfiguration(connectionInterval: .milliseconds(10))),
        (
            "2M LL251 MTU247 7.5ms",
            BLELinkConfiguration(phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500))
        ),
        (
            "2M LL251 MTU247 7.5ms encrypted",
            BLELinkConfiguration(
                phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500), encrypted: true)
        ),
        (
            "1M LL251 MTU247 30ms",
            BLELinkConfiguration(phy: .le1M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .milliseconds(30))
        ),
    ]
    let faultCases: [(String, SimulatedFaults)] = [
        ("no faults", .none),
        ("5% loss 2% dup 2% reorder 1% corrupt", SimulatedFaults(loss: 0.05, duplicate: 0.02, reorder: 0.02, corrupt: 0.01)),
        ("disconnect every 2 s", SimulatedFaults(disconnectEvery: .seconds(2))),
    ]

    for (linkName, link) in links {
        for (faultName, faults) in faultCases {
            Benchmark("Transport 1 MiB, \(linkName), \(faultName)", configuration: configuration) { benchmark in
                let scenario = TransferScenario(link: link, faults: faults, seed: 1, messageSize: 64 << 10, messageCount: 16)
                for _ in benchmark.scaledIterations {
                    let report = try SimulatedTransfer.run(
                        scenario, sender: TransportEndpoint(), receiver: TransportEndpoint())
                    benchmark.measurement(efficiency, Int((report.efficiency * 1_000).rounded()))
                    benchmark.measurement(goodput, Int(report.goodputKbps.rounded()))
                    blackHole(report)
                }
            }
        }
    }
}
