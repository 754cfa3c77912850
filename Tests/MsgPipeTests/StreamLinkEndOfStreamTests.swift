@testable import BLELink
@testable import BLESocket
import Framing
import Glibc
import Logging
import MsgPipe
import Synchronization
import TestSupport
import Testing
import Transport

/// The end of a channel's stream: what arrived before the peer closed is all handed on, in order, before the
/// disconnect; and a stream the kernel punched a hole into ends there, with nothing after the hole handed on.
@Suite("StreamLink end of stream")
struct StreamLinkEndOfStreamTests {
    /// 64 KiB of text, as a phone app writes a line: 4 KiB SDUs, the newline alone in a 17th.
    static let text = (0 ..< 65536).map { UInt8(ascii: "a") + UInt8($0 % 26) }

    /// A socket pair whose first end has queued the line's 17 SDUs for the second and is closed.
    static func queuedLine() throws -> Int32 {
        let (a, b) = try SeqPacketSocket.pair()
        var size: Int32 = 1 << 20
        setsockopt(a, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var chunks = stride(from: 0, to: text.count, by: 4096).map { Array(text[$0 ..< min($0 + 4096, text.count)]) }
        chunks.append([UInt8(ascii: "\n")])
        for chunk in chunks {
            #expect(chunk.withUnsafeBytes { send(a, $0.baseAddress, $0.count, 0) } == chunk.count)
        }
        close(a)
        return b
    }

    /// The lines `link` carries until it ends, as listen's plain-format receiver decodes them.
    static func lines(on link: StreamLink) async -> [[UInt8]] {
        var messages: [[UInt8]] = []
        let failure = await PlainReceiving.receive(
            link.events, format: .lines, limits: PlainReceiving.limits(maximumMessageSize: 1 << 20),
            logger: Logger(label: "test")
        ) { (message: [UInt8]) async throws(CancellationError) -> Bool in
            messages.append(message)
            return true
        }
        #expect(failure == nil)
        await link.close()
        return messages
    }

    /// A phone app writes a line in 4 KiB SDUs, the newline alone in the last one, and closes the channel at
    /// once: the lines receiver gets the whole line (16 SDUs fill the link's inbox; the 17th and the close
    /// wait in the socket until the consumer made room).
    @Test func aLineWhoseNewlineArrivesJustBeforeTheCloseIsWhole() async throws {
        let link = try StreamLink(adopting: try Self.queuedLine(), sendUnit: 4096, framed: false)
        let messages = await Self.lines(on: link)
        #expect(messages.map(\.count) == [Self.text.count], "one whole line")
        #expect(messages.first.map { $0 == Self.text } == true, "byte for byte")
    }

    /// Linux reports the peer's disconnect on the next read even while SDUs that arrived before it are still
    /// queued, and only once: as ECONNRESET, or (after an L2CAP Disconnection Request, which also shuts the
    /// socket down) as a read of 0. The phone's last SDU, the newline, waits behind a full inbox when the
    /// disconnect comes: it is still read and handed on, and the line is whole.
    @Test(arguments: [(-1, ECONNRESET), (0, 0)])
    func anEndReportedBeforeQueuedSDUsLosesNoneOfThem(result: Int, code: Int32) async throws {
        // The peer is gone before anything is read, so every read sees its end. As Linux does, the 17th read
        // reports that end once, the next one returns the SDU still queued, and the end follows.
        let reads = Atomic<Int>(0)
        let link = try StreamLink(
            adopting: try Self.queuedLine(), sendUnit: 4096, framed: false, kernelDrops: { _ in 0 },
            receive: { fd, buffer in
                if reads.add(1, ordering: .relaxed).newValue == 17 { return (result, code) }
                return BearerCore.systemReceive(fd, buffer)
            })
        let messages = await Self.lines(on: link)
        #expect(reads.load(ordering: .relaxed) >= 18, "the end was injected")
        #expect(messages.map(\.count) == [Self.text.count], "one whole line")
        #expect(messages.first.map { $0 == Self.text } == true, "byte for byte")
    }

    /// Linux reports a channel's disconnect once, to whichever call comes first. When a send takes it, the
    /// closed socket reads EAGAIN from then on while poll says POLLHUP: the link still ends, and says so, rather
    /// than polling for ever (a sender then waited out its retries on a link it believed up).
    @Test func anEndASendTookFirstStillEndsTheLink() async throws {
        let (a, b) = try SeqPacketSocket.pair()
        // A UNIX socket whose peer closed reads 0; a closed L2CAP socket whose error went to a send reads EAGAIN.
        let link = try StreamLink(
            adopting: b, sendUnit: 1024, framed: false, kernelDrops: { _ in 0 },
            receive: { fd, buffer in
                let (count, code) = BearerCore.systemReceive(fd, buffer)
                return count == 0 ? (-1, EAGAIN) : (count, code)
            })
        var events = link.events.makeAsyncIterator()
        #expect(await events.next() == .connected(maximumPacketSize: 1024))
        #expect([UInt8(7)].withUnsafeBytes { send(a, $0.baseAddress, $0.count, 0) } == 1)
        #expect(await events.next() == .packet([7]))
        close(a)
        // The send fails, from the socket or from an end the link already saw.
        await #expect(throws: LinkError.self) { try await link.send([1]) }
        // A hang guard: without the end, closing the link is what ends the wait.
        let guardTask = Task {
            try await Task.sleep(for: hangGuard)
            await link.close()
        }
        let event = await events.next()
        guardTask.cancel()
        guard case let .disconnected(reason) = event else {
            Issue.record("the link did not end: \(String(describing: event))")
            await link.close()
            return
        }
        #expect(!reason.isEmpty)
        await link.close()
    }

    /// The kernel's drop count grows between two reads: the link ends naming the loss, and the packets read after
    /// the hole never reach the consumer.
    @Test func aKernelDropEndsTheStreamAndWithholdsWhatFollows() async throws {
        let (a, b) = try SeqPacketSocket.pair()
        let drops = Atomic<UInt32>(0)
        let link = try StreamLink(adopting: b, sendUnit: 1024, framed: false) { _ in drops.load(ordering: .relaxed) }
        var events = link.events.makeAsyncIterator()
        #expect(await events.next() == .connected(maximumPacketSize: 1024))
        for packet: [UInt8] in [[1], [2, 2]] {
            #expect(packet.withUnsafeBytes { send(a, $0.baseAddress, $0.count, 0) } == packet.count)
            #expect(await events.next() == .packet(packet))
        }
        drops.store(1, ordering: .relaxed)  // an SDU was lost before the next two
        for packet: [UInt8] in [[3], [4]] {
            #expect(packet.withUnsafeBytes { send(a, $0.baseAddress, $0.count, 0) } == packet.count)
        }
        guard case let .disconnected(reason) = await events.next() else {
            Issue.record("the link handed on a packet read after the hole")
            return
        }
        #expect(reason.contains("kernel dropped 1 packet"))
        #expect(await events.next() == nil)
        close(a)
        await link.close()
    }

    /// Linux counts drops per socket: a fresh socket reads 0, which the link takes as "no hole".
    @Test func aFreshSocketCountsNoDrop() throws {
        let (a, b) = try SeqPacketSocket.pair()
        #expect(BearerCore.socketDrops(a) == 0)
        close(a)
        close(b)
    }
}
