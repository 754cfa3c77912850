import MemoryLinks
@testable import MsgPipe
@testable import MsgPipeCore
import Synchronization
import TestSupport
import Testing
import Transport

/// One central on several peers (``MessagePipe/send(_:to:timeout:)``) over in-memory links: a peer that
/// stalls or drops fails alone, and what the reachable peers acknowledged is delivered once, in order.
@Suite("sending one message to several pipes")
struct FanOutTests {
    /// A central's pipe over one end of a memory link; `receiving` the peer's Transport on the other end
    /// (nil: a peer that never answers).
    struct Peer {
        let pipe: MessagePipe
        let link: MemoryLink
        let receiver: Transport?
        let received: Task<[[UInt8]], Never>?

        init(_ name: String, answers: Bool) {
            let (central, peripheral) = MemoryLink.pair()
            pipe = MessagePipe(
                peer: name, transport: Transport(link: central), link: nil, reconnector: nil, peerInfo: nil,
                connections: { 1 })
            link = central
            let receiver = answers ? Transport(link: peripheral) : nil
            self.receiver = receiver
            received = receiver.map { receiver in
                Task { await receiver.messages.reduce(into: []) { $0.append($1.body) } }
            }
        }

        /// Everything the peer's Transport delivered, once it is closed.
        func delivered() async -> [[UInt8]] {
            await receiver?.close()
            return await received?.value ?? []
        }
    }

    static func message(_ number: Int) -> [UInt8] {
        (0 ..< 20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ number) }
    }

    @Test("a stalled and a dropped peer fail alone; the others get every message exactly once")
    func stalledAndDroppedPeersFailAlone() async throws {
        let peers = [
            Peer("door", answers: true), Peer("stalled", answers: false), Peer("hall", answers: true),
            Peer("dropped", answers: true), Peer("lobby", answers: true),
        ]
        let pipes = peers.map(\.pipe)
        var outcomes: [[Bool]] = []
        for number in 1 ... 3 {
            if number == 2 { await peers[3].link.disconnect(reason: "the peer went away") }
            // The timeout is what the stalled peer costs each round; the others need a fraction of it, also on a
            // busy machine (800 ms was too short for one CI run).
            let results = await MessagePipe.send(Self.message(number), to: pipes, timeout: .seconds(6))
            #expect(results.count == pipes.count)
            outcomes.append(results.map { if case .success = $0 { true } else { false } })
        }
        // Each round returns although one peer never answers: the reachable ones were not held back by it.
        #expect(outcomes == [
            [true, false, true, true, true],
            [true, false, true, false, true],
            [true, false, true, false, true],
        ])
        for (index, peer) in peers.enumerated() {
            let acknowledged = (1 ... 3).filter { outcomes[$0 - 1][index] }.map(Self.message)
            let delivered = await peer.delivered()
            if peer.receiver != nil {
                #expect(delivered == acknowledged, "\(peer.pipe.peer): delivered \(delivered.count), acknowledged \(acknowledged.count)")
            }
        }
        for pipe in pipes { await pipe.close() }
    }

    @Test("connecting to several peers gives one result per peer, in order; an absent one fails alone")
    func connectToSeveralPeers() async throws {
        let path = "/tmp/msgpipe-fanout-\(UInt32.random(in: 0 ... .max)).sock"
        let server = try await MessagePipe.listen(path: path, options: .patientForTests)
        let results = await MessagePipe.connect(toEach: ["unix:\(path)", "unix:/nonexistent/msgpipe-fanout.sock"])
        #expect(results.count == 2)
        let pipe = try results[0].get()
        #expect(pipe.peer == "unix:\(path)")
        #expect(throws: (any Error).self) { try results[1].get() }
        await pipe.close()
        await server.close()
    }
}
