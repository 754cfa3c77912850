import GATT
import MemoryLinks
public import Transport
/// A deterministic discrete-event simulator of one BLE connection on simulated time, driving two sans-I/O
/// ``PacketEndpoint``s: the central's and the peripheral's.
///
/// Each connection event starts at an anchor; central and peripheral alternate PDUs with T_IFS between them,
/// a side without data sending an empty PDU. The event ends when neither side has data, the per-event cap is
/// reached, or the next exchange would not fit before the next anchor (minus a margin). Packets are taken from
/// the endpoints into a small controller buffer, cut into LL fragments, and handed to the peer when their last
/// fragment arrived, after the seeded application-level faults. Timers fire at their exact simulated time.
/// Same configuration, faults, seed and endpoints: same run, bit for bit.
public struct BLESimulator<Central: PacketEndpoint, Peripheral: PacketEndpoint> {
    /// The central's endpoint (it sends first in every exchange).
    public private(set) var central: Central
    /// The peripheral's endpoint.
    public private(set) var peripheral: Peripheral
    /// The modelled connection.
    public let configuration: BLELinkConfiguration
    /// The injected faults.
    public let faults: SimulatedFaults
    /// What happened so far.
    public private(set) var statistics = SimulationStatistics()
    /// Simulated time of the last packet handed to the peripheral and to the central.
    public private(set) var lastDelivery: (toPeripheral: Duration, toCentral: Duration) = (.zero, .zero)

    private let airTime: AirTimeModel
    private let interval: Int64
    private var random: Xoshiro256StarStar
    private var clock: Int64 = 0
    private var isConnected = false
    private var nextAnchor: Int64 = 0
    private var disconnectAt: Int64?
    private var reconnectAt: Int64 = 0
    private var transmitQueues = [LinkLayerQueue(), LinkLayerQueue()]
    private var heldForReorder: [[UInt8]?] = [nil, nil]
    private var scratch: [UInt8] = []
    /// The packet size of the live connection (below the configured one until the MTU exchange).
    private var maximumPacketSize: Int

    /// A simulator at time zero with both endpoints connected.
    public init(
        configuration: BLELinkConfiguration, faults: SimulatedFaults = .none, seed: UInt64,
        central: Central, peripheral: Peripheral
    ) throws(SimulationError) {
        try configuration.validate()
        try faults.validate()
        self.configuration = configuration
        self.faults = faults
        self.airTime = AirTimeModel(configuration: configuration)
        self.interval = nanoseconds(configuration.connectionInterval)
        self.random = Xoshiro256StarStar(seed: seed)
        self.central = central
        self.peripheral = peripheral
        self.maximumPacketSize = configuration.maximumPacketSize
        connect()
    }

    /// The current simulated time.
    public var now: Duration { .nanoseconds(clock) }

    /// Lets the caller act on an endpoint between steps (offer messages, collect deliveries) at ``now``.
    public mutating func withCentral<Result>(_ body: (inout Central, Duration) throws -> Result) rethrows -> Result {
        try body(&central, now)
    }

    /// Lets the caller act on the peripheral's endpoint between steps at ``now``.
    public mutating func withPeripheral<Result>(_ body: (inout Peripheral, Duration) throws -> Result) rethrows
        -> Result
    {
        try body(&peripheral, now)
    }

    /// Runs the next thing that happens: a connection event, a drop or a reconnection, or a jump over idle
    /// events to the next timer. Returns false when nothing will ever happen again without outside input
    /// (connected, nothing to send, no timer armed).
    public mutating func step() throws(SimulationError) -> Bool {
        guard isConnected else {
            try fireTimers(through: reconnectAt)
            clock = max(clock, reconnectAt)
            connect()
            return true
        }
        let anchor = nextAnchor
        if let disconnectAt, disconnectAt <= anchor {
            try fireTimers(through: disconnectAt)
            clock = max(clock, disconnectAt)
            disconnect()
            return true
        }
        try fireTimers(through: anchor)
        clock = anchor
        try refillTransmitQueues()
        if transmitQueues[0].isEmpty && transmitQueues[1].isEmpty {
            return skipIdleEvents(from: anchor)
        }
        try runConnectionEvent(at: anchor)
        if maximumPacketSize < configuration.maximumPacketSize, isConnected { exchangeMTU() }
        return true
    }

    // MARK: Connection events

    private mutating func runConnectionEvent(at anchor: Int64) throws(SimulationError) {
        statistics.connectionEvents += 1
        let end = anchor + airTime.usableEventNanoseconds
        var pairs = 0
        while true {
            if pairs > 0 {
                if let disconnectAt, clock >= disconnectAt {
                    disconnect()
                    return
                }
                try fireTimers(through: clock)
                try refillTransmitQueues()
                if transmitQueues[0].isEmpty && transmitQueues[1].isEmpty { break }
            }
            if let cap = configuration.packetsPerEvent, pairs >= cap { break }
            let centralPayload = transmitQueues[0].nextPayload()
            let peripheralPayload = transmitQueues[1].nextPayload()
            let pair = airTime.pairNanoseconds(centralPayload: centralPayload, peripheralPayload: peripheralPayload)
            if pairs > 0 && clock + pair > end { break }

            clock += airTime.pduNanoseconds(payload: centralPayload)
            count(payload: centralPayload, direction: 0)
            if let packet = transmitQueues[0].transmitPDU() {
                deliver(packet, direction: 0)
            }
            clock += AirTimeModel.interFrameSpaceNanoseconds + airTime.pduNanoseconds(payload: peripheralPayload)
            count(payload: peripheralPayload, direction: 1)
            if let packet = transmitQueues[1].transmitPDU() {
                deliver(packet, direction: 1)
            }
            clock += AirTimeModel.interFrameSpaceNanoseconds
            pairs += 1
        }
        nextAnchor = anchor + interval
    }

    private mutating func skipIdleEvents(from anchor: Int64) -> Bool {
        let wakeUps = [central.nextTimeout.map(nanoseconds), peripheral.nextTimeout.map(nanoseconds), disconnectAt]
        guard let wake = wakeUps.compactMap({ $0 }).min() else {
            nextAnchor = anchor + interval
            return false
        }
        let eventsToSkip = max(1, (wake - anchor + interval - 1) / interval)
        nextAnchor = anchor + eventsToSkip * interval
        return true
    }

    private mutating func count(payload: Int, direction: Int) {
        if payload > 0 { statistics.dataPDUs[direction] += 1 } else { statistics.emptyPDUs[direction] += 1 }
    }

    /// Takes packets from each endpoint until its controller buffer is full or it has nothing to send.
    private mutating func refillTransmitQueues() throws(SimulationError) {
        let now = self.now
        let capacity = configuration.controllerBufferPackets
        while transmitQueues[0].count < capacity, central.writeNextPacket(into: &scratch, now: now) {
            try enqueueScratch(direction: 0)
        }
        while transmitQueues[1].count < capacity, peripheral.writeNextPacket(into: &scratch, now: now) {
            try enqueueScratch(direction: 1)
        }
    }

    private mutating func enqueueScratch(direction: Int) throws(SimulationError) {
        guard scratch.count <= maximumPacketSize else {
            throw .packetTooLarge(size: scratch.count, limit: maximumPacketSize)
        }
        transmitQueues[direction].append(scratch, fragments: airTime.fragments(ofPacketSize: scratch.count))
        statistics.packetsSent[direction] += 1
    }

    // MARK: Delivery and faults

    /// Applies the faults to a packet whose last fragment just arrived and hands the result to the receiver.
    private mutating func deliver(_ packet: [UInt8], direction: Int) {
        let draw = PacketFaultDraw(packetSize: packet.count, maximumDelay: 1, using: &random)
        let released = heldForReorder[direction]
        heldForReorder[direction] = nil
        if draw.loss < faults.loss {
            statistics.packetsLost += 1
        } else {
            var arriving = packet
            if draw.corrupt < faults.corrupt, !arriving.isEmpty {
                arriving = draw.corrupting(arriving)
                statistics.packetsCorrupted += 1
            }
            if draw.reorder < faults.reorder && released == nil {
                heldForReorder[direction] = arriving
                statistics.packetsReordered += 1
            } else {
                hand(arriving, direction: direction)
            }
            if draw.duplicate < faults.duplicate {
                hand(arriving, direction: direction)
                statistics.packetsDuplicated += 1
            }
        }
        if let released { hand(released, direction: direction) }
    }

    private mutating func hand(_ packet: [UInt8], direction: Int) {
        statistics.packetsDelivered[direction] += 1
        statistics.bytesDelivered[direction] += packet.count
        if direction == 0 {
            peripheral.receive(packet[...], now: now)
            lastDelivery.toPeripheral = now
        } else {
            central.receive(packet[...], now: now)
            lastDelivery.toCentral = now
        }
    }

    // MARK: Connection changes and timers

    private mutating func connect() {
        isConnected = true
        nextAnchor = clock
        disconnectAt = faults.disconnectEvery.map { clock + nanoseconds($0) }
        maximumPacketSize = configuration.bearer == .gatt
            ? ATTOpcode.maximumValueLength(mtu: configuration.initialATTMTU ?? configuration.attMTU)
            : configuration.maximumPacketSize
        central.linkConnected(maximumPacketSize: maximumPacketSize, now: now)
        peripheral.linkConnected(maximumPacketSize: maximumPacketSize, now: now)
    }

    /// The ATT MTU exchange completes: both endpoints may use the configured packet size from now on.
    private mutating func exchangeMTU() {
        maximumPacketSize = configuration.maximumPacketSize
        central.maximumPacketSizeChanged(maximumPacketSize, now: now)
        peripheral.maximumPacketSizeChanged(maximumPacketSize, now: now)
    }

    private mutating func disconnect() {
        isConnected = false
        statistics.disconnects += 1
        statistics.packetsLostToDisconnect += transmitQueues[0].removeAll() + transmitQueues[1].removeAll()
        statistics.packetsLostToDisconnect += heldForReorder.compactMap { $0 }.count
        heldForReorder = [nil, nil]
        disconnectAt = nil
        reconnectAt = clock + nanoseconds(faults.reconnectDelay)
        central.linkDisconnected(now: now)
        peripheral.linkDisconnected(now: now)
    }

    /// Fires every timer due up to `limit`, each at its own time, in time order.
    private mutating func fireTimers(through limit: Int64) throws(SimulationError) {
        while true {
            let centralDue = central.nextTimeout.map(nanoseconds)
            let peripheralDue = peripheral.nextTimeout.map(nanoseconds)
            guard let due = [centralDue, peripheralDue].compactMap({ $0 }).min(), due <= limit else { return }
            clock = max(clock, due)
            if let centralDue, centralDue <= clock {
                central.handleTimeout(now: now)
                if let next = central.nextTimeout.map(nanoseconds), next <= clock {
                    throw .timerDidNotAdvance(at: now)
                }
            }
            if let peripheralDue, peripheralDue <= clock {
                peripheral.handleTimeout(now: now)
                if let next = peripheral.nextTimeout.map(nanoseconds), next <= clock {
                    throw .timerDidNotAdvance(at: now)
                }
            }
        }
    }
}
