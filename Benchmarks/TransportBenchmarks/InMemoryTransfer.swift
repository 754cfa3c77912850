import Benchmark
import Transport

/// Transport alone, no simulator and no link object: two endpoints joined in memory, driven through
/// `writeNextPacket(into:now:)` / `receive(_:now:)` with one reused packet buffer. Data goes a → b, acks and
/// the rest of the control traffic b → a, each packet handed over at once. Returns (data, control) packets.
func transferInMemory(_ body: [UInt8], packetSize: Int, buffer: inout [UInt8]) throws -> (data: Int, control: Int) {
    var sender = TransportEndpoint(session: 0xA)
    var receiver = TransportEndpoint(session: 0xB)
    var now = Duration.zero
    let tick = Duration.microseconds(1)
    sender.linkConnected(maximumPacketSize: packetSize, now: now)
    receiver.linkConnected(maximumPacketSize: packetSize, now: now)
    _ = try sender.submit(body, now: now)
    var packets = (data: 0, control: 0)
    var received = 0
    while received == 0 || !sender.isSendIdle {
        var progressed = false
        if sender.writeNextPacket(into: &buffer, now: now) {
            receiver.receive(buffer[...], now: now)
            packets.data += 1
            progressed = true
            now += tick
        }
        while receiver.writeNextPacket(into: &buffer, now: now) {
            sender.receive(buffer[...], now: now)
            packets.control += 1
            progressed = true
        }
        while let message = receiver.takeMessage() { received += message.body.count }
        while sender.pollEvent() != nil {}
        while receiver.pollEvent() != nil {}
        if !progressed {
            guard let next = [sender.nextTimeout, receiver.nextTimeout].compactMap({ $0 }).min() else { break }
            now = max(now, next)
            sender.handleTimeout(now: now)
            receiver.handleTimeout(now: now)
        }
    }
    precondition(received == body.count, "the benchmark lost its message")
    return packets
}

/// 1 MiB at MTU 23 and 247 over ``transferInMemory(_:packetSize:buffer:)``: mallocs per iteration divided by
/// the packets metric is the allocations per packet of the sender's and receiver's hot paths together.
func inMemoryBenchmarks() {
    let dataPackets = BenchmarkMetric.custom("data packets", polarity: .prefersSmaller, useScalingFactor: false)
    let controlPackets = BenchmarkMetric.custom("control packets", polarity: .prefersSmaller, useScalingFactor: false)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, dataPackets, controlPackets], warmupIterations: 1,
        scalingFactor: .one, maxDuration: .seconds(5), maxIterations: 20)
    var state: UInt32 = 12_345
    let mebibyte: [UInt8] = (0 ..< (1 << 20)).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
    for mtu in [23, 247] {
        Benchmark("Transport in memory 1 MiB at MTU \(mtu)", configuration: configuration) { benchmark in
            var buffer: [UInt8] = []
            buffer.reserveCapacity(mtu - 3)
            for _ in benchmark.scaledIterations {
                let packets = try transferInMemory(mebibyte, packetSize: mtu - 3, buffer: &buffer)
                benchmark.measurement(dataPackets, packets.data)
                benchmark.measurement(controlPackets, packets.control)
            }
        }
    }
}
