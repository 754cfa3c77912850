import MemoryLinks
import MsgPipeCore
import TestSupport
import Testing

/// A central receiving from several peripherals (``PeerPipes``) over the memory backend: the reachable peers
/// connect, the unreachable ones are named with their error, and each message is told by its peer.
@Suite("PeerPipes: one central on several peripherals")
struct PeerPipesTests {
    @Test func theReachablePeersConnectInOrderAndTheUnreachableAreNamed() async throws {
        let stack = MemoryStack()
        let door = try await MessagePipe.serve(at: "door", over: stack, options: .patientForTests)
        let hall = try await MessagePipe.serve(at: "hall", over: stack, options: .patientForTests)
        var options = MessagePipe.Options()
        options.connectTimeout = .milliseconds(300)
        let peers = await PeerPipes.connect(toEach: ["door", "absent", "hall"], over: stack, options: options)
        #expect(peers.connected.map(\.peer) == ["door", "hall"])
        #expect(peers.connected.map(\.name) == ["door (memory:door)", "hall (memory:hall)"])
        #expect(peers.unreachable.map(\.peer) == ["absent"])
        #expect(peers.pipes.count == 2)

        // Each peripheral sends to its central; the central tells the messages apart by the peer it asked for.
        for (server, text) in [(door, "from the door"), (hall, "from the hall")] {
            var centrals = server.centrals.makeAsyncIterator()
            let central = try #require(await centrals.next())
            try await central.send(Array(text.utf8), timeout: hangGuard)
        }
        var received: [String: String] = [:]
        for pipe in peers.pipes {
            var messages = pipe.messages.makeAsyncIterator()
            let message = try #require(await messages.next())
            received[try #require(peers.peer(of: pipe))] = String(decoding: message.bytes, as: UTF8.self)
        }
        #expect(received == ["door": "from the door", "hall": "from the hall"])
        await peers.close()
        await door.close()
        await hall.close()
    }

    @Test func aPipeThatIsNotOneOfThemHasNoPeer() async throws {
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "door", over: stack, options: .patientForTests)
        let peers = await PeerPipes.connect(toEach: ["door"], over: stack)
        let other = try await MessagePipe.connect(to: "door", over: stack)
        #expect(peers.peer(of: other) == nil)
        #expect(peers.peer(of: try #require(peers.pipes.first)) == "door")
        #expect(peers.unreachable.isEmpty)
        await other.close()
        await peers.close()
        await server.close()
    }

    @Test func resultsAreSplitByPeerInOrder() async throws {
        struct Refused: Error {}
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "door", over: stack, options: .patientForTests)
        let pipe = try await MessagePipe.connect(to: "door", over: stack)
        let peers = PeerPipes(peers: ["a", "door", "c"], results: [.failure(Refused()), .success(pipe), .failure(Refused())])
        #expect(peers.connected.map(\.peer) == ["door"])
        #expect(peers.unreachable.map(\.peer) == ["a", "c"])
        #expect(peers.unreachable.allSatisfy { $0.error is Refused })
        await peers.close()
        await server.close()
    }
}
