@testable import BLELink
@testable import GATT
import MemoryLinks
import TestSupport
import Testing
import Transport

/// Transport's behaviour once more, over a real GATTLink pair on a socketpair instead of in-memory links:
/// acknowledged sends both ways, many messages, a 1 MiB message, request/response, seeded faults, and
/// resume after the socketpair is cut and a new one connected.
@Suite struct TransportOverGATTLinkTests {
    /// One way to run GATT under Transport: the service profile and the ATT MTU both sides offer.
    struct Setup: Sendable, CustomTestStringConvertible {
        var profile: GATTServiceProfile
        var mtu: Int
        var testDescription: String { "\(profile.name) at MTU \(mtu)" }
    }

    static let setups = [Setup(profile: .msgpipe, mtu: 23), Setup(profile: .msgpipe, mtu: 517),
                         Setup(profile: .nordicUART, mtu: 247)]

    /// Fast retransmission so seeded losses heal quickly.
    static var options: TransportOptions { .fastForTests }

    /// A Transport on each link of `pair` (optionally wrapped, e.g. in a fault injector); closes everything after `body`.
    static func withTransports<Central: Link, Peripheral: Link>(
        _ pair: LinkPair, central: Central, peripheral: Peripheral, options: TransportOptions = options,
        _ body: (_ central: Transport, _ peripheral: Transport) async throws -> Void
    ) async throws {
        let centralTransport = Transport(link: central, options: options)
        let peripheralTransport = Transport(link: peripheral, options: options)
        do {
            try await body(centralTransport, peripheralTransport)
        } catch {
            Issue.record(error)
        }
        await centralTransport.close()
        await peripheralTransport.close()
        await pair.close()
    }

    static func withTransports(
        _ setup: Setup, options: TransportOptions = options,
        _ body: (_ central: Transport, _ peripheral: Transport) async throws -> Void
    ) async throws {
        let pair = try await LinkPair(profile: setup.profile, serverMTU: setup.mtu, centralMTU: setup.mtu)
        try await withTransports(pair, central: pair.central, peripheral: pair.peripheral, options: options, body)
    }

    /// The first `count` messages `transport` delivers, in order.
    static func receive(_ count: Int, from transport: Transport) async -> [[UInt8]] {
        var bodies: [[UInt8]] = []
        for await message in transport.messages {
            bodies.append(message.body)
            if bodies.count == count { break }
        }
        return bodies
    }

    static func send(_ bodies: [[UInt8]], over transport: Transport) async throws {
        for body in bodies { try await transport.send(body) }
    }

    static func body(size: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    @Test(arguments: setups)
    func messagesArriveOnceAndInOrderBothWays(_ setup: Setup) async throws {
        let up = (0..<12).map { Self.body(size: $0 * 157, seed: UInt64($0)) }
        let down = (0..<12).map { Self.body(size: 3000 - $0 * 211, seed: UInt64(100 + $0)) }
        try await Self.withTransports(setup) { central, peripheral in
            async let atPeripheral = Self.receive(up.count, from: peripheral)
            async let atCentral = Self.receive(down.count, from: central)
            async let sendingDown: Void = Self.send(down, over: peripheral)
            try await Self.send(up, over: central)
            try await sendingDown
            #expect(await atPeripheral == up)
            #expect(await atCentral == down)
        }
    }

    /// 1 MiB at MTU 247 and 517; 128 KiB at MTU 23, where a debug build needs ~20 s for the 52 429 packets of
    /// 1 MiB (the release benchmark, Benchmarks/GATTLinkBenchmarks, moves 1 MiB at MTU 23 in ~1.4 s).
    @Test(arguments: setups)
    func largeMessageArrivesWhole(_ setup: Setup) async throws {
        let message = Self.body(size: setup.mtu == 23 ? 128 << 10 : 1 << 20, seed: 7)
        try await Self.withTransports(setup) { central, peripheral in
            async let received = Self.receive(1, from: peripheral)
            try await central.send(message)
            #expect(await received == [message])
        }
    }

    @Test(arguments: setups)
    func requestsAreAnsweredInOrder(_ setup: Setup) async throws {
        var options = Self.options
        options.sequentialRequests = true
        try await Self.withTransports(setup, options: options) { central, peripheral in
            let serving = Task { await peripheral.serveRequests { request in Array(request.body.reversed()) } }
            for index in 0..<5 {
                let request = Self.body(size: 40 * index + 1, seed: UInt64(index))
                let response = try await central.request(request, timeout: hangGuard)
                #expect(response == request.reversed())
            }
            serving.cancel()
        }
    }

    @Test(arguments: [UInt64(1), 2])
    func seededFaultsAroundGATTLinkLoseNoMessage(seed: UInt64) async throws {
        let pair = try await LinkPair(serverMTU: 185, centralMTU: 185)
        let faults = LinkFaults(drop: 0.05, duplicate: 0.02, reorder: 0.02, corrupt: 0.01)
        let central = FaultInjectingLink(base: pair.central, faults: faults, seed: seed)
        let peripheral = FaultInjectingLink(base: pair.peripheral, faults: faults, seed: seed ^ 0xFACE)
        let bodies = (0..<8).map { Self.body(size: 900 * $0, seed: seed + UInt64($0)) }
        try await Self.withTransports(pair, central: central, peripheral: peripheral) { central, peripheral in
            async let received = Self.receive(bodies.count, from: peripheral)
            try await Self.send(bodies, over: central)
            #expect(await received == bodies)
        }
        #expect(central.statistics.dropped > 0)
    }

    @Test(arguments: [23, 247])
    func messageResumesAcrossCutsOntoNewSocketpairs(mtu: Int) async throws {
        let pair = try await LinkPair(serverMTU: mtu, centralMTU: mtu)
        let cutting = FaultInjectingLink(base: pair.central, faults: LinkFaults(disconnectEveryPackets: 700), seed: 3,
                                         control: pair)
        let message = Self.body(size: (mtu - 3) * 2500, seed: 11)
        let after = Self.body(size: 100, seed: 12)
        try await Self.withTransports(pair, central: cutting, peripheral: pair.peripheral) { central, peripheral in
            async let received = Self.receive(2, from: peripheral)
            try await central.send(message)
            try await central.send(after)
            #expect(await received == [message, after])
        }
        let statistics = cutting.statistics
        #expect(statistics.disconnects >= 2, "the socketpair was cut and a new one connected")
        #expect(Double(statistics.packetsOffered) < 2500 * 1.3, "each cut costs what was in flight, not a restart")
    }
}
