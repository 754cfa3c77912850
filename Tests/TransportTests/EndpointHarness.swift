import MemoryLinks
import Transport

/// Fault rates per packet (0...1) and an optional disconnect period for ``EndpointHarness``.
struct FaultProfile: Sendable, CustomStringConvertible {
    var loss = 0.0
    var duplicate = 0.0
    var reorder = 0.0
    var corrupt = 0.0
    var disconnectEvery: Duration?

    static let none = FaultProfile()
    var description: String {
        "loss \(loss) dup \(duplicate) reorder \(reorder) corrupt \(corrupt) disconnect \(String(describing: disconnectEvery))"
    }
}

/// Two endpoints joined by a simulated packet link on fake time: each direction sends one packet per
/// `packetTime`, delivered `latency` later, with seeded faults. Deterministic for a seed.
struct EndpointHarness {
    enum Side: Int { case a = 0, b = 1 }

    struct Arrival {
        var time: Duration
        var order: UInt64
        var to: Side
        var bytes: [UInt8]
    }

    var endpoints: [TransportEndpoint]
    var now: Duration = .zero
    var packetSize: Int
    var packetTime: Duration = .microseconds(700)
    var latency: Duration = .milliseconds(5)
    var faults: FaultProfile
    var rng: SplitMix64
    var arrivals: [Arrival] = []
    var transmitterFreeAt: [Duration] = [.zero, .zero]
    var connected = true
    var nextDisconnect: Duration?
    var reconnectAt: Duration?
    var order: UInt64 = 0
    var packetsSent = [0, 0]
    var bytesSent = [0, 0]
    var events: [[EndpointEvent]] = [[], []]
    /// ``EndpointEvent/peerSilent`` reports per side (not in `events`).
    var peerSilences = [0, 0]
    var delivered: [[ReceivedMessage]] = [[], []]
    /// When false, side's application does not take delivered messages (a stalled consumer).
    var consuming = [true, true]
    var maximumReceiverBytes = [0, 0]
    /// Prints every packet sent and delivered while true.
    var trace = false
    private var buffer: [UInt8] = []

    init(
        packetSize: Int = 20, faults: FaultProfile = .none, seed: UInt64 = 1,
        configuration: EndpointConfiguration = EndpointConfiguration(),
        receiverConfiguration: EndpointConfiguration? = nil
    ) {
        endpoints = [
            TransportEndpoint(configuration: configuration),
            TransportEndpoint(configuration: receiverConfiguration ?? configuration),
        ]
        self.packetSize = packetSize
        self.faults = faults
        rng = SplitMix64(seed: seed)
        for index in 0 ..< 2 { endpoints[index].linkConnected(maximumPacketSize: packetSize, now: .zero) }
        nextDisconnect = faults.disconnectEvery
    }

    @discardableResult
    mutating func submit(
        from side: Side, _ body: [UInt8], options: SendOptions = SendOptions()
    ) throws(TransportError) -> SubmissionID {
        try endpoints[side.rawValue].submit(body, options: options, now: now)
    }

    /// Runs until `done` holds or nothing can happen any more or `limit` of fake time passed.
    /// Returns true when `done` held.
    @discardableResult
    mutating func run(for limit: Duration = .seconds(600), until done: (EndpointHarness) -> Bool) -> Bool {
        let end = now + limit
        var steps = 0
        while now <= end, steps < 3_000_000 {
            steps += 1
            drainOutputs()
            if done(self) { return true }
            pump()
            guard let next = nextEventTime() else {
                drainOutputs()
                return done(self)
            }
            now = max(now, next)
            step()
        }
        return done(self)
    }

    private mutating func drainOutputs() {
        for index in 0 ..< 2 {
            while let event = endpoints[index].pollEvent() {
                switch event {
                case .messageAvailable: break
                case .peerSilent: peerSilences[index] += 1  // a request to the driver, counted apart
                default: events[index].append(event)
                }
            }
            maximumReceiverBytes[index] = max(maximumReceiverBytes[index], endpoints[index].receiverBufferedBytes)
            if consuming[index] {
                while let message = endpoints[index].takeMessage() { delivered[index].append(message) }
            }
        }
    }

    /// Lets every free transmitter send its next packet.
    private mutating func pump() {
        guard connected else { return }
        for index in 0 ..< 2 where transmitterFreeAt[index] <= now {
            guard endpoints[index].writeNextPacket(into: &buffer, now: now) else { continue }
            precondition(buffer.count <= packetSize, "endpoint wrote \(buffer.count) > \(packetSize)")
            packetsSent[index] += 1
            bytesSent[index] += buffer.count
            transmitterFreeAt[index] = now + packetTime
            if trace { print("\(now) \(index == 0 ? "A" : "B") sends \(buffer.map { String($0, radix: 16) })") }
            schedule(buffer, to: index == 0 ? .b : .a)
        }
    }

    private mutating func schedule(_ packet: [UInt8], to side: Side) {
        if chance(faults.loss) { return }
        var bytes = packet
        if chance(faults.corrupt) {
            let position = Int.random(in: 0 ..< bytes.count, using: &rng)
            bytes[position] ^= UInt8(1 << Int.random(in: 0 ..< 8, using: &rng))
        }
        var time = now + latency
        if chance(faults.reorder) { time += packetTime * Int.random(in: 2 ... 3, using: &rng) }
        add(Arrival(time: time, order: 0, to: side, bytes: bytes))
        if chance(faults.duplicate) { add(Arrival(time: time + packetTime / 2, order: 0, to: side, bytes: bytes)) }
    }

    private mutating func add(_ arrival: Arrival) {
        var arrival = arrival
        order += 1
        arrival.order = order
        let index = arrivals.firstIndex { ($0.time, $0.order) > (arrival.time, arrival.order) } ?? arrivals.count
        arrivals.insert(arrival, at: index)
    }

    private mutating func chance(_ probability: Double) -> Bool {
        probability > 0 && Double.random(in: 0 ..< 1, using: &rng) < probability
    }

    private func nextEventTime() -> Duration? {
        var candidates: [Duration] = []
        if let first = arrivals.first { candidates.append(first.time) }
        for index in 0 ..< 2 {
            if let timeout = endpoints[index].nextTimeout { candidates.append(timeout) }
            if connected && transmitterFreeAt[index] > now { candidates.append(transmitterFreeAt[index]) }
        }
        if let nextDisconnect, connected, !arrivals.isEmpty || candidates.count > 0 { candidates.append(nextDisconnect) }
        if let reconnectAt { candidates.append(reconnectAt) }
        return candidates.min()
    }

    private mutating func step() {
        if let reconnectAt, reconnectAt <= now {
            self.reconnectAt = nil
            connected = true
            for index in 0 ..< 2 { endpoints[index].linkConnected(maximumPacketSize: packetSize, now: now) }
        }
        if connected, let nextDisconnect, nextDisconnect <= now, let period = faults.disconnectEvery {
            connected = false
            arrivals.removeAll()
            self.nextDisconnect = now + period
            reconnectAt = now + .milliseconds(50)
            for index in 0 ..< 2 { endpoints[index].linkDisconnected(now: now) }
        }
        while let first = arrivals.first, first.time <= now {
            arrivals.removeFirst()
            if trace { print("\(now) \(first.to) gets \(first.bytes.map { String($0, radix: 16) })") }
            endpoints[first.to.rawValue].receive(first.bytes[...], now: now)
            if trace { print("   -> \(endpoints[first.to.rawValue].debugSummary)") }
        }
        for index in 0 ..< 2 {
            if let timeout = endpoints[index].nextTimeout, timeout <= now { endpoints[index].handleTimeout(now: now) }
        }
    }

    /// Payload efficiency of side a's transmissions: body bytes over the bytes its packet slots could carry.
    func efficiency(bodyBytes: Int) -> Double {
        Double(bodyBytes) / Double(packetsSent[0] * packetSize)
    }
}

/// Deterministic test payloads.
func payload(size: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    return (0 ..< size).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
}
