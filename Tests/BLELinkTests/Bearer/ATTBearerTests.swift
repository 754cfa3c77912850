@testable import GATT
import Glibc
import Testing
@testable import BLELink
@testable import BLESocket

/// Two bearers over `socketpair(AF_UNIX, SOCK_SEQPACKET)`: the same code that drives an L2CAP socket.
func bearerPair(receiveCapacity: Int = 16) throws -> (ATTBearer, ATTBearer) {
    let (a, b) = try SeqPacketSocket.pair()
    return (try ATTBearer(adopting: a, receiveCapacity: receiveCapacity),
            try ATTBearer(adopting: b, receiveCapacity: receiveCapacity))
}

@Suite struct ATTBearerTests {
    @Test func pdusArriveWholeAndInOrder() async throws {
        let (a, b) = try bearerPair()
        defer { a.close(); b.close() }
        for index in 0..<100 { try await a.send(Array(repeating: UInt8(index), count: index + 1)[...]) }
        for index in 0..<100 {
            #expect(await b.receive() == .pdu(Array(repeating: UInt8(index), count: index + 1)))
        }
    }

    @Test func peerCloseIsDeliveredAfterQueuedPDUsThenTheStreamEnds() async throws {
        let (a, b) = try bearerPair()
        defer { b.close() }
        try await a.send([1, 2, 3][...])
        a.close()
        #expect(await b.receive() == .pdu([1, 2, 3]))
        guard case .disconnected = await b.receive() else {
            Issue.record("expected a disconnect")
            return
        }
        #expect(await b.receive() == nil)
        #expect(throws: ATTError.self) { try b.trySend([1][...]) }
    }

    @Test func fullSocketMakesTrySendAnswerNotReadyAndSendWaitsForTheReader() async throws {
        let (a, b) = try bearerPair(receiveCapacity: 4)
        defer { a.close(); b.close() }
        let packet = [UInt8](repeating: 0xAB, count: 200)
        var accepted = 0
        while try a.trySend(packet[...]) { accepted += 1 }
        #expect(accepted > 4, "the kernel buffers some packets")
        #expect(a.isReady == false)
        let sender = Task { try await a.send(packet[...]) }
        var received = 0
        while received < accepted + 1 {
            guard case .pdu(let pdu) = await b.receive() else { break }
            #expect(pdu == packet)
            received += 1
        }
        try await sender.value
        #expect(received == accepted + 1)
    }

    @Test func cancellingAWaitingSendThrowsCancelledAndSendsNothing() async throws {
        let (fd, peer) = try SeqPacketSocket.pair()
        let a = try ATTBearer(adopting: fd)
        defer { a.close(); Glibc.close(peer) }
        let packet = [UInt8](repeating: 1, count: 100)
        while try a.trySend(packet[...]) {}
        let sender = Task { try await a.send([9][...]) }
        sender.cancel()
        await #expect(throws: ATTError.cancelled) { try await sender.value }
    }

    @Test func closeEndsAWaitingReceiveAndFailsSends() async throws {
        let (a, b) = try bearerPair()
        defer { b.close() }
        let receiver = Task { await a.receive() }
        a.close()
        #expect(await receiver.value == nil)
        #expect(throws: ATTError.closed) { try a.trySend([1][...]) }
    }

    @Test func aUnixSocketCannotTellItsLinkSecurity() throws {
        let (a, b) = try bearerPair()
        defer { a.close(); b.close() }
        #expect(a.linkSecurity == nil)
    }

    @Test func closingAgainNeverWritesToDescriptorsTheBearerAlreadyClosed() async throws {
        let (a, b) = try bearerPair()
        a.close()
        guard case .disconnected = await b.receive() else {
            Issue.record("expected a disconnect")
            return
        }
        // The numbers a's thread freed (its socket and wake pipe) are among the lowest free ones: new sockets
        // probably get them.
        let sockets = try (0..<3).flatMap { _ in let (x, y) = try SeqPacketSocket.pair(); return [x, y] }
        defer { sockets.forEach { Glibc.close($0) }; b.close() }
        a.close()
        var byte: UInt8 = 0
        for fd in sockets {
            #expect(recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) == -1 && errno == EAGAIN, "a stray wake-up byte arrived")
        }
    }

    @Test func oversizedPacketIsCutJustAboveTheLargestMTU() async throws {
        let (fd, peer) = try SeqPacketSocket.pair()
        let bearer = try ATTBearer(adopting: peer)
        defer { bearer.close(); Glibc.close(fd) }
        let huge = [UInt8](repeating: 7, count: 4000)
        #expect(huge.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } == 4000)
        #expect(await bearer.receive() == .pdu(Array(huge.prefix(ATTOpcode.maximumMTU + 1))))
    }

    @Test func emptyPacketsAreIgnoredNotTakenForTheEndOfTheConnection() async throws {
        let (fd, peerFD) = try SeqPacketSocket.pair()
        let database = GATTServiceProfile.msgpipe.makeDatabase(info: LinkPair.info)
        let server = GATTServerConnection(bearer: try ATTBearer(adopting: fd), server: GATTServer(database: database))
        let running = Task { await server.run() }
        for _ in 0..<3 { #expect(Glibc.send(peerFD, nil, 0, 0) == 0) }
        let peer = try ATTBearer(adopting: peerFD)
        try await peer.send([0x02, 0x17, 0x00][...])  // Exchange MTU: the server answers, it did not hang up
        guard case let .pdu(answer)? = await peer.receive() else {
            Issue.record("the server took the empty packets for the end of the connection")
            return
        }
        #expect(answer.first == ATTOpcode.exchangeMTUResponse)
        peer.close()
        await running.value
    }

    @Test func slowConsumerWakesThePollThreadOncePerHalfInboxNotPerPDU() async throws {
        let (a, b) = try bearerPair(receiveCapacity: 8)
        defer { a.close(); b.close() }
        let count = 1000
        let sender = Task { for index in 0..<count { try await a.send([UInt8(truncatingIfNeeded: index)][...]) } }
        for index in 0..<count {
            #expect(await b.receive() == .pdu([UInt8(truncatingIfNeeded: index)]))
            try await Task.sleep(for: .microseconds(200))  // a consumer slower than the socket: the inbox stays full
        }
        try await sender.value
        // Reading pauses at 8 queued PDUs and resumes at 4: each resume needs 4 PDUs consumed since the pause.
        // (Resuming at 7, one free slot, wakes the thread for nearly every PDU a slow consumer takes.)
        #expect(b.receiveResumes <= count / 4)
    }

    @Test func listenerAcceptsAConnectionOnAPath() async throws {
        let path = "/tmp/msgpipe-att-test-\(getpid()).sock"
        let listener = try SeqPacketSocket.listen(path: path)
        defer { Glibc.close(listener); unlink(path) }
        let accepting = Task { try await SeqPacketSocket.accept(listener) }
        let client = try ATTBearer(adopting: try SeqPacketSocket.connect(path: path))
        let server = try ATTBearer(adopting: try await accepting.value)
        defer { client.close(); server.close() }
        try await client.send([0x0A, 0x03, 0x00][...])
        #expect(await server.receive() == .pdu([0x0A, 0x03, 0x00]))
    }

    @Test func cancelledAcceptThrowsCancelled() async throws {
        let path = "/tmp/msgpipe-att-test-cancel-\(getpid()).sock"
        let listener = try SeqPacketSocket.listen(path: path)
        defer { Glibc.close(listener); unlink(path) }
        let accepting = Task { try await SeqPacketSocket.accept(listener) }
        accepting.cancel()
        await #expect(throws: ATTError.cancelled) { try await accepting.value }
    }
}
