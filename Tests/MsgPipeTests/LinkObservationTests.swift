import BLELink
import GATT
import Synchronization
import Testing
@testable import MsgPipe
@testable import MsgPipeCore

/// A central's bookkeeping of a peer's accepted parameter updates, fed by a fake event source through the
/// kernel stack's translation of mgmt events (no kernel).
struct LinkObservationTests {
    /// Stands in for the mgmt socket: hands out the observation's callback, records stop, and fails on demand.
    final class FakeSource: PeerUpdateSource {
        let isTrusted: Bool
        private let stops = Atomic<Int>(0)
        private let failure = Mutex<String?>(nil)
        init(trusted: Bool) { isTrusted = trusted }
        func stop() { stops.add(1, ordering: .relaxed) }
        var stopped: Bool { stops.load(ordering: .relaxed) > 0 }
        var stopReason: String? { failure.withLock { $0 } }
        /// Ends the source as the watch's thread does when its socket fails.
        func fail(_ reason: String) { failure.withLock { $0 = reason } }
    }

    final class Recorder: Sendable {
        let told = Mutex<[ConnectionParameters]>([])
        let deliver = Mutex<(@Sendable (NewConnectionParameter) -> Void)?>(nil)
        func fire(_ event: NewConnectionParameter) { deliver.withLock { $0 }?(event) }
    }

    static let peer = BluetoothPeer(address: BluetoothAddress("00:AA:01:00:00:00")!, type: .lePublic)
    static let other = BluetoothPeer(address: BluetoothAddress("00:AA:01:03:00:03")!, type: .lePublic)

    static func update(_ peer: BluetoothPeer, _ minimum: UInt16, _ maximum: UInt16) -> NewConnectionParameter {
        NewConnectionParameter(peer: peer, minimumInterval: minimum, maximumInterval: maximum, latency: 0, supervisionTimeout: 42)
    }

    func observe(trusted: Bool) -> (LinkObservation, Recorder, FakeSource) {
        let recorder = Recorder()
        let source = FakeSource(trusted: trusted)
        let observation = LinkObservation { peer, parameters in
            #expect(peer == Self.peer)
            recorder.told.withLock { $0.append(parameters) }
        }
        observation.connecting(controller: 1) { controller, deliver in
            #expect(controller == 1)
            recorder.deliver.withLock { $0 = KernelStack.acceptedParameters(deliver) }
            return source
        }
        return (observation, recorder, source)
    }

    @Test func thePeersUpdateReplacesTheRequestAndIsToldOnce() throws {
        let (observation, recorder, _) = observe(trusted: true)
        let requested = try ConnectionParameters(minimumInterval: 40, maximumInterval: 40, latency: 2, supervisionTimeout: 200)
        observation.requested(requested)
        observation.connected(to: Self.peer)
        var link = observation.parameters(preferredPHY: nil, carrier: .gatt)
        #expect(link.inForce == requested && !link.changedByPeer && link.seesPeerUpdates)
        #expect(!link.unknown.contains(LinkParameters.peerUpdatesUnseen))
        recorder.fire(Self.update(Self.other, 6, 6))  // another peer's link on the adapter
        recorder.fire(Self.update(Self.peer, 80, 120))
        link = observation.parameters(preferredPHY: nil, carrier: .gatt)
        #expect(link.changedByPeer && link.requested == requested)
        #expect(link.inForce?.description == "interval 100-150 ms, latency 0, supervision timeout 420 ms")
        #expect(recorder.told.withLock { $0.map(\.maximumInterval) } == [120])
    }

    @Test func anUpdateBeforeThePeerIsNamedCountsOnceItIs() {
        let (observation, recorder, _) = observe(trusted: true)
        recorder.fire(Self.update(Self.other, 6, 6))
        recorder.fire(Self.update(Self.peer, 80, 120))
        #expect(recorder.told.withLock { $0 }.isEmpty, "not told before the connection's peer is known")
        observation.connected(to: Self.peer)
        #expect(observation.parameters(preferredPHY: nil, carrier: .gatt).acceptedPeerRequest?.minimumInterval == 80)
        #expect(recorder.told.withLock { $0.map(\.minimumInterval) } == [80])
    }

    @Test func aNewConnectionForgetsTheLastOnesUpdateAndKeepsOneSource() {
        let (observation, recorder, _) = observe(trusted: true)
        observation.connected(to: Self.peer)
        recorder.fire(Self.update(Self.peer, 80, 120))
        observation.connecting(controller: 1) { _, _ in
            Issue.record("a second source was made")
            return nil
        }
        observation.connected(to: Self.peer)
        #expect(observation.parameters(preferredPHY: nil, carrier: .gatt).acceptedPeerRequest == nil)
    }

    @Test func withoutTheCapabilityNothingIsSeenAndTheSourceIsStopped() {
        let (observation, recorder, source) = observe(trusted: false)
        #expect(source.stopped)
        observation.connected(to: Self.peer)
        let link = observation.parameters(preferredPHY: nil, carrier: .gatt)
        #expect(!link.seesPeerUpdates && link.unknown.contains(LinkParameters.peerUpdatesUnseen))
        _ = recorder
    }

    @Test func aWatchThatEndsOnASocketErrorNoLongerClaimsToSeeUpdatesAndSaysWhy() {
        let (observation, _, source) = observe(trusted: true)
        observation.connected(to: Self.peer)
        #expect(observation.parameters(preferredPHY: nil, carrier: .gatt).seesPeerUpdates)
        source.fail("the mgmt socket hung up")
        for closed in [false, true] {
            if closed { observation.stop() }
            let link = observation.parameters(preferredPHY: nil, carrier: .gatt)
            #expect(!link.seesPeerUpdates, "pipe closed: \(closed)")
            #expect(link.unknown.contains { $0.hasPrefix("whether the peer changed them") && $0.contains("the mgmt socket hung up") })
            #expect(!link.unknown.contains(LinkParameters.peerUpdatesUnseen))
        }
    }

    @Test func valuesThatBreakARuleAreIgnoredAndStopEndsTheSource() {
        let (observation, recorder, source) = observe(trusted: true)
        observation.connected(to: Self.peer)
        recorder.fire(Self.update(Self.peer, 2, 2))
        #expect(observation.parameters(preferredPHY: nil, carrier: .gatt).acceptedPeerRequest == nil)
        observation.stop()
        #expect(source.stopped)
    }
}
