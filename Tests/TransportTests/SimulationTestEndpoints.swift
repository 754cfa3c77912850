import Simulator
@testable import Transport

/// Test-only endpoint: always has a full packet to send (a saturating source), never reads.
struct SaturatingTestEndpoint: PacketEndpoint {
    var packetSize = 0
    var counter: UInt8 = 0

    mutating func linkConnected(maximumPacketSize: Int, now: Duration) { packetSize = maximumPacketSize }
    mutating func maximumPacketSizeChanged(_ maximumPacketSize: Int, now: Duration) { packetSize = maximumPacketSize }
    mutating func linkDisconnected(now: Duration) {}
    mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration) {}
    mutating func writeNextPacket(into buffer: inout [UInt8], now: Duration) -> Bool {
        counter &+= 1
        buffer = [UInt8](repeating: counter, count: packetSize)
        return true
    }
    var nextTimeout: Duration? { nil }
    mutating func handleTimeout(now: Duration) {}
}

/// Test-only endpoint: counts what arrives and records connection changes and timer firings; sends nothing
/// unless packets are queued in `outgoing`.
struct RecordingTestEndpoint: PacketEndpoint {
    var received: [[UInt8]] = []
    var bytesReceived = 0
    var lastReceive = Duration.zero
    var connectionLog: [String] = []
    var outgoing: [[UInt8]] = []
    var timers: [Duration] = []
    var firedAt: [Duration] = []
    var keepPackets = true

    mutating func linkConnected(maximumPacketSize: Int, now: Duration) { connectionLog.append("up \(maximumPacketSize)") }
    mutating func maximumPacketSizeChanged(_ maximumPacketSize: Int, now: Duration) {
        connectionLog.append("mtu \(maximumPacketSize)")
    }
    mutating func linkDisconnected(now: Duration) { connectionLog.append("down") }
    mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration) {
        if keepPackets { received.append(Array(packet)) }
        bytesReceived += packet.count
        lastReceive = now
    }
    mutating func writeNextPacket(into buffer: inout [UInt8], now: Duration) -> Bool {
        guard !outgoing.isEmpty else { return false }
        buffer = outgoing.removeFirst()
        return true
    }
    var nextTimeout: Duration? { timers.min() }
    mutating func handleTimeout(now: Duration) {
        let due = timers.filter { $0 <= now }
        timers.removeAll { $0 <= now }
        firedAt += due.map { _ in now }
    }
}

/// Test-only message endpoint WITHOUT any reliability (the real one is TransportEndpoint): a message is cut
/// into packets `[index low byte, last flag][data]`; the receiver glues packets until the last flag. It lets
/// the transfer runner's accounting be tested on its own.
struct NaiveTestMessageEndpoint: SimulatedMessageEndpoint {
    var packetSize = 0
    var pending: [[UInt8]] = []
    var assembling: [UInt8] = []
    var delivered: [[UInt8]] = []
    let queueLimit = 8

    mutating func offer(_ message: [UInt8], now: Duration) -> Bool {
        guard pending.count < queueLimit, packetSize > 2 else { return false }
        let chunk = packetSize - 1
        var offset = 0
        while offset < message.count {
            let end = min(message.count, offset + chunk)
            pending.append([end == message.count ? 1 : 0] + message[offset..<end])
            offset = end
        }
        return true
    }
    mutating func takeDeliveredMessage() -> [UInt8]? { delivered.isEmpty ? nil : delivered.removeFirst() }
    mutating func takeSendFailures() -> Int { 0 }

    mutating func linkConnected(maximumPacketSize: Int, now: Duration) { packetSize = maximumPacketSize }
    mutating func maximumPacketSizeChanged(_ maximumPacketSize: Int, now: Duration) { packetSize = maximumPacketSize }
    mutating func linkDisconnected(now: Duration) { assembling = [] }
    mutating func receive(_ packet: ArraySlice<UInt8>, now: Duration) {
        guard let flag = packet.first else { return }
        assembling += packet.dropFirst()
        if flag == 1 {
            delivered.append(assembling)
            assembling = []
        }
    }
    mutating func writeNextPacket(into buffer: inout [UInt8], now: Duration) -> Bool {
        guard !pending.isEmpty else { return false }
        buffer = pending.removeFirst()
        return true
    }
    var nextTimeout: Duration? { nil }
    mutating func handleTimeout(now: Duration) {}
}
