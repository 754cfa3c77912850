import Synchronization
import Testing
@testable import Exchange

/// ``RequestServer`` answering with a Swift handler instead of a command, without a journal or with one that fails
/// (ExchangePosixTests has the one on disk).
@Suite("request server with a handler")
struct RequestHandlerTests {
    static func request(_ id: String, _ body: String) throws -> [UInt8] {
        RequestEnvelope(id: try RequestID(id), body: Array(body.utf8)).encoded()
    }

    static func response(_ answer: (response: [UInt8], handled: HandledRequest)?) throws -> ResponseEnvelope {
        try ResponseEnvelope(decoding: try #require(answer).response)
    }

    @Test("without a journal every request runs the handler")
    func noJournalRunsEveryTime() async throws {
        let runs = Atomic<Int>(0)
        let server = RequestServer(journal: nil) { body in
            runs.add(1, ordering: .relaxed)
            return body
        }
        for _ in 0 ..< 2 {
            #expect(try Self.response(await server.answer(try Self.request("pay-1", "x"))).status == .ok)
        }
        #expect(runs.load(ordering: .relaxed) == 2)
    }

    /// A `RequestJournal` that cannot make anything durable (a full disk): every record throws.
    final class UnwritableJournal: RequestJournal {
        var recoveryNote: String? { nil }
        func entry(for id: RequestID) throws(ExchangeError) -> RequestJournalEntry? { nil }
        func recordStarted(_ id: RequestID, digest: [UInt8]) throws(ExchangeError) { throw .journal("disk full") }
        func recordCompleted(digest: [UInt8], response: ResponseEnvelope) throws(ExchangeError) {
            throw .journal("disk full")
        }
    }

    @Test("a journal that cannot record the start refuses the request and never runs the handler")
    func unrecordedStartRunsNothing() async throws {
        let runs = Atomic<Int>(0)
        let server = RequestServer(journal: UnwritableJournal()) { body in
            runs.add(1, ordering: .relaxed)
            return body
        }
        let refused = try Self.response(await server.answer(try Self.request("pay-1", "12.50")))
        #expect(refused.status == .refused)
        #expect(refused.body == Array("journal: disk full".utf8))
        #expect(runs.load(ordering: .relaxed) == 0)
    }

    @Test("a thrown error is command-failed with its description; a body over the limit fails too")
    func errorsAndLimits() async throws {
        struct Declined: Error, CustomStringConvertible { var description: String { "card declined" } }
        let server = RequestServer(journal: nil, limits: ExchangeLimits(maximumResponseSize: 4)) { body in
            if body == Array("no".utf8) { throw Declined() }
            return body
        }
        let declined = try Self.response(await server.answer(try Self.request("a", "no")))
        #expect(declined.status == .commandFailed)
        #expect(declined.exitCode == 1)
        #expect(declined.body == Array("card declined".utf8))
        let large = try Self.response(await server.answer(try Self.request("b", "too large")))
        #expect(large.status == .commandFailed)
        #expect(try Self.response(await server.answer(try Self.request("c", "fits"))).status == .ok)
    }
}
