public import Transport
import Synchronization

/// Wraps a ``Link`` and injects seeded, reproducible faults into what it sends: drop, duplicate, reorder,
/// corrupt, delay, and (with a ``LinkConnectionControl``) disconnect and reconnect. Received events pass
/// through untouched; wrap both ends of a pair to disturb both directions.
///
/// The same seed and the same sequence of `send` calls (from one task) give the same faults.
public final class FaultInjectingLink<Base: Link>: Link {
    private struct HeldPacket {
        var packet: [UInt8]
        var remainingSends: Int
    }

    private struct State {
        var random: Xoshiro256StarStar
        var held: [HeldPacket] = []
        var statistics = LinkFaultStatistics()
    }

    /// What one `send` forwards, and whether the connection drops after it.
    private struct Plan {
        var packets: [[UInt8]] = []
        var disconnect = false
    }

    /// The wrapped link.
    public let base: Base
    /// The faults injected.
    public let faults: LinkFaults
    private let control: (any LinkConnectionControl)?
    private let state: Mutex<State>

    /// Wraps `base`; `control` (often `base` itself) performs the disconnect faults.
    public init(base: Base, faults: LinkFaults, seed: UInt64, control: (any LinkConnectionControl)? = nil) {
        self.base = base
        self.faults = faults
        self.control = control
        self.state = Mutex(State(random: Xoshiro256StarStar(seed: seed)))
    }

    /// The base link's events, unchanged.
    public var events: Base.Events { base.events }

    /// What was injected so far.
    public var statistics: LinkFaultStatistics { state.withLock { $0.statistics } }

    public func send(_ packet: [UInt8]) async throws {
        let plan = state.withLock { state -> Plan in self.plan(for: packet, in: &state) }
        for outgoing in plan.packets { try await base.send(outgoing) }
        if plan.disconnect, let control {
            await control.disconnect(reason: "fault injection")
            await control.reconnect()
        }
    }

    public func close() async { await base.close() }

    public func renewIncoming() async { await base.renewIncoming() }

    private func plan(for packet: [UInt8], in state: inout State) -> Plan {
        let draw = PacketFaultDraw(
            packetSize: packet.count, maximumDelay: faults.maximumDelayPackets, using: &state.random)
        var plan = Plan()
        let due = releaseDueHeldPackets(&state)
        state.statistics.packetsOffered += 1
        if draw.loss < faults.drop {
            state.statistics.dropped += 1
        } else {
            var outgoing = packet
            if draw.corrupt < faults.corrupt, !outgoing.isEmpty {
                outgoing = draw.corrupting(outgoing)
                state.statistics.corrupted += 1
            }
            if draw.reorder < faults.reorder {
                state.held.append(HeldPacket(packet: outgoing, remainingSends: 1))
                state.statistics.reordered += 1
            } else if draw.delay < faults.delay {
                state.held.append(HeldPacket(packet: outgoing, remainingSends: draw.delayPackets))
                state.statistics.delayed += 1
            } else {
                plan.packets.append(outgoing)
            }
            if draw.duplicate < faults.duplicate {
                plan.packets.append(outgoing)
                state.statistics.duplicated += 1
            }
        }
        plan.packets += due

        if let every = faults.disconnectEveryPackets, control != nil,
            state.statistics.packetsOffered % every == 0
        {
            plan.disconnect = true
            state.statistics.disconnects += 1
            state.statistics.lostInFlight += state.held.count
            state.held.removeAll()
        }
        state.statistics.packetsForwarded += plan.packets.count
        return plan
    }

    /// Counts one more send against every held packet and returns those now due, in the order they were held.
    private func releaseDueHeldPackets(_ state: inout State) -> [[UInt8]] {
        var due: [[UInt8]] = []
        var stillHeld: [HeldPacket] = []
        for var held in state.held {
            held.remainingSends -= 1
            if held.remainingSends <= 0 { due.append(held.packet) } else { stillHeld.append(held) }
        }
        state.held = stillHeld
        return due
    }
}
