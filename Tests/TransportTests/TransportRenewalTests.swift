import MemoryLinks
import Synchronization
import Testing
import TestSupport
import Transport

/// A peer that goes silent while the connection stays up (a peripheral's bluetoothd lost the central's
/// subscription, BlueZ issue #1452): Transport asks the link to renew its incoming path, and a renewal that
/// repairs it lets the message finish.
@Suite(.timeLimit(.minutes(1)))
struct TransportRenewalTests {
    /// A link that stops delivering the peer's packets after `hearing` of them (the connection stays up) until
    /// ``renewIncoming()`` is called, if `renewalRepairs`.
    final class GoesDeafLink: Link, Sendable {
        let base: MemoryLink
        let renewalRepairs: Bool
        private struct State {
            var heard = 0
            var deaf = false
            var repaired = false
            var renewals = 0
        }
        private let state = Mutex(State())
        private let hearing: Int

        init(_ base: MemoryLink, hearing: Int, renewalRepairs: Bool) {
            self.base = base
            self.hearing = hearing
            self.renewalRepairs = renewalRepairs
        }

        var renewals: Int { state.withLock { $0.renewals } }

        var events: AsyncFilterSequence<MemoryLink.Events> {
            base.events.filter { [self] event in admits(event) }
        }

        /// Whether `event` reaches Transport: not a packet while deaf.
        private func admits(_ event: LinkEvent) -> Bool {
            guard case .packet = event else { return true }
            return state.withLock { state in
                if state.deaf { return false }
                state.heard += 1
                if state.heard > hearing, !state.repaired { state.deaf = true }
                return !state.deaf
            }
        }

        func send(_ packet: [UInt8]) async throws { try await base.send(packet) }
        func close() async { await base.close() }

        func renewIncoming() async {
            let repairs = renewalRepairs
            state.withLock { state in
                state.renewals += 1
                if repairs { (state.deaf, state.repaired) = (false, true) }
            }
        }
    }

    static var options: TransportOptions {
        var options = TransportOptions.fastForTests
        options.endpoint.maximumRetransmissionTimeout = .milliseconds(200)
        options.endpoint.maximumRetries = 6
        return options
    }

    @Test func aSilentPeerMakesTransportRenewTheIncomingPathAndTheMessageFinishes() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 100)
        let deaf = GoesDeafLink(left, hearing: 3, renewalRepairs: true)
        let sender = Transport(link: deaf, options: Self.options)
        let receiver = Transport(link: right, options: Self.options)
        let body = payload(size: 20_000, seed: 7)
        async let received = receiver.messages.first { _ in true }
        try await sender.send(body)
        #expect(await received?.body == body)
        #expect(deaf.renewals >= 1)
        await sender.close()
        await receiver.close()
    }

    /// The control: the same silence with a renewal that repairs nothing fails the send (it does not hang and
    /// does not report success), after asking for renewals along the way.
    @Test func aSilenceNoRenewalRepairsFailsTheSendWithRetriesExhausted() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 100)
        let deaf = GoesDeafLink(left, hearing: 3, renewalRepairs: false)
        let sender = Transport(link: deaf, options: Self.options)
        let receiver = Transport(link: right, options: Self.options)
        await #expect {
            try await sender.send(payload(size: 20_000, seed: 8))
        } throws: { error in
            if case .retriesExhausted? = error as? TransportError { return true }
            return false
        }
        #expect(deaf.renewals == Self.options.endpoint.maximumRetries / 2)
        await sender.close()
        await receiver.close()
    }
}
