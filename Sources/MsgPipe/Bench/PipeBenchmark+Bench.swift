public import GATT
public import MsgPipeCore
import Simulator

extension PipeBenchmark {
    /// The benchmark `msgpipe bench` runs on a real link: transfer `t`'s message `m` is the simulator's message
    /// `m` for seed `seed + t` (`m` as a little-endian UInt32, then seeded bytes), so a receiver can check each.
    ///
    /// ```swift
    /// let report = try await PipeBenchmark(size: 65_536, messages: 16, seed: 1).run(.centrals([connector]))
    /// ```
    public init(size: Int, messages: Int, seed: UInt64) {
        self.init(size: size, messages: messages) { transfer, message in
            TransferScenario(link: BLELinkConfiguration(), seed: seed &+ UInt64(transfer), messageSize: size,
                             messageCount: messages).message(message)
        }
    }

    /// Which way a benchmark sends.
    public enum Side: Sendable {
        /// As centrals, one transfer per connector at once (`sendAsCentrals(_:)`).
        case centrals([PipeConnector])
        /// As the peripheral, to `centrals` subscribed centrals at once (`sendAsPeripheral(_:centrals:onReady:)`).
        case peripheral(PipeAcceptor, centrals: Int)

        /// Centrals for ``centrals(_:)``: one per entry of `peers` (`unix:PATH`, an address or an advertised
        /// name; a peer given twice gets two centrals), each connecting as `MessagePipe.connect(to:options:)` does.
        ///
        /// ```swift
        /// let report = try await bench.run(.centrals(connectingTo: ["door", "hall"], options: options))
        /// ```
        public static func centrals(connectingTo peers: [String], options: MessagePipe.Options) -> Self {
            .centrals(peers.map { PipeConnector(to: PipeAddress($0), options: options) })
        }
    }

    /// Runs the benchmark from `side`; `onReady` says where the peripheral listens or advertises. Throws only
    /// as the peripheral: what `sendAsPeripheral(_:centrals:onReady:)` throws. A central's failure is in its
    /// `Result.failure`.
    public func run(_ side: Side, onReady: @escaping @Sendable (String) -> Void = { _ in }) async throws -> Report {
        switch side {
        case let .centrals(connectors): await sendAsCentrals(connectors)
        case let .peripheral(acceptor, centrals): try await sendAsPeripheral(acceptor, centrals: centrals, onReady: onReady)
        }
    }

    /// The air-time limit one `Line` is measured against: the simulator's best case (LL payload 251, no
    /// per-event cap, GATT) at the line's MTU and its central's transmit PHY, since Linux tells a process
    /// neither the interval nor the LL data length.
    public struct Limit: Sendable, Equatable {
        /// The limit in kbit/s; nil where the MTU is unknown or the PHY is Coded (its coding is not told).
        public var kbps: Double?
        /// The PHY assumed: the measured transmit PHY, else the best case's (2M).
        public var phy: LEPHY
        /// True when `phy` was measured, not assumed.
        public var phyMeasured: Bool
        /// The LL payload assumed (251).
        public var linkLayerPayload: Int
        /// The interval assumed: the slowest one asked for, else the shortest there is (7.5 ms).
        public var interval: Duration
        /// The line's goodput as a fraction of `kbps` (0 for a zero limit); nil where `kbps` is.
        public var efficiency: Double?
    }
}

extension PipeBenchmark.Line {
    /// The limit this line is measured against, at `requestedInterval`, the slowest connection interval asked
    /// for (nil: none asked for).
    ///
    /// ```swift
    /// for line in report.lines { print(line.goodputKbps, line.limit(requestedInterval: nil).kbps ?? .nan) }
    /// ```
    public func limit(requestedInterval: Duration?) -> PipeBenchmark.Limit {
        let kbps = AirTimeModel.bestCaseLimitKbps(attMTU: mtu, phy: phy?.transmit, interval: requestedInterval)
        return PipeBenchmark.Limit(
            kbps: kbps, phy: phy?.transmit ?? AirTimeModel.bestCasePHY, phyMeasured: phy != nil,
            linkLayerPayload: AirTimeModel.bestCaseLinkLayerPayload,
            interval: requestedInterval ?? AirTimeModel.bestCaseInterval,
            efficiency: kbps.map { $0 > 0 ? goodputKbps / $0 : 0 })
    }
}
