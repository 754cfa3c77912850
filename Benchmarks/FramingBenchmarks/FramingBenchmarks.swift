import Benchmark
import Framing

/// 1 MiB of deterministic, incompressible-looking bytes.
let mebibyte: [UInt8] = {
    var state: UInt32 = 12_345
    return (0..<(1 << 20)).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}()

/// Each iteration moves 1 MiB: throughput (iterations/s) × 1.048576 = MB/s; mallocs are per MiB.
func configuration() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        warmupIterations: 3, scalingFactor: .one, maxDuration: .seconds(3), maxIterations: 1000)
}

/// Frames `payload` into packets of `packetSize`, handing each to `body`, reusing one packet buffer.
@inline(__always)
func frame(_ payload: [UInt8], packetSize: Int, _ body: (inout [UInt8]) -> Void) throws {
    let encoder = try MsgPipeEncoder(payload: payload, messageID: 1, packetSize: packetSize)
    var packet: [UInt8] = []
    packet.reserveCapacity(packetSize)
    for index in 0..<encoder.packetCount {
        try encoder.writePacket(index: index, into: &packet)
        body(&packet)
    }
}

let benchmarks: @Sendable () -> Void = {
    for mtu in [247, 23] {
        Benchmark("msgpipe frame 1 MiB at MTU \(mtu)", configuration: configuration()) { benchmark in
            let payload = mebibyte
            for _ in benchmark.scaledIterations {
                try frame(payload, packetSize: mtu - 3) { packet in blackHole(packet.count) }
            }
        }

        Benchmark("msgpipe frame + reassemble 1 MiB at MTU \(mtu)", configuration: configuration()) { benchmark in
            let payload = mebibyte
            for _ in benchmark.scaledIterations {
                var reassembler = MsgPipeReassembler()
                var delivered = 0
                try frame(payload, packetSize: mtu - 3) { packet in
                    reassembler.receive(packet[...], now: .zero) { event in
                        if case let .message(message) = event { delivered += message.body.count }
                    }
                }
                precondition(delivered == payload.count, "the benchmark lost its message")
            }
        }
    }
}
