import Synchronization
import Testing
@testable import Exchange
@testable import ExchangePosix

@Suite("request server idempotency")
struct RequestServerTests {
    /// A server whose command appends a line to `log` and answers "receipt:" + the request.
    static func server(_ directory: String, log: String) throws -> RequestServer {
        try RequestServer(
            stateDirectory: directory + "/state",
            runner: CommandRunner(command: "echo ran >> \(log); printf receipt:; cat"))
    }

    /// A server on `directory` again, once the previous one let go of the journal's lock: an actor's last
    /// reference can go with a job that a loaded machine runs a moment after the caller dropped its own (a new
    /// process, as a restarted serve is, finds the lock free at once). 30 s is a hang guard.
    static func reopened(_ directory: String, log: String) async throws -> RequestServer {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while true {
            do {
                return try server(directory, log: log)
            } catch ExchangeError.journalInUse where clock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    static func request(_ id: String, _ body: String) throws -> [UInt8] {
        RequestEnvelope(id: try RequestID(id), body: Array(body.utf8)).encoded()
    }

    @Test("a handler with a journal in the state directory: a retried id is answered from it and the handler runs once")
    func handlerJournalAnswersRetries() async throws {
        let runs = Atomic<Int>(0)
        let server = try RequestServer(stateDirectory: temporaryDirectory() + "/state") { body in
            runs.add(1, ordering: .relaxed)
            return Array("receipt:".utf8) + body
        }
        let first = await server.answer(try Self.request("pay-1", "12.50"))
        #expect(try ResponseEnvelope(decoding: try #require(first).response).body == Array("receipt:12.50".utf8))
        #expect(first?.handled.ranCommand == true)
        let again = await server.answer(try Self.request("pay-1", "12.50"))
        #expect(again?.response == first?.response)
        #expect(again?.handled.fromJournal == true)
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    @Test("a retried id gets the same response and the command runs once, also after a restart")
    func retry() async throws {
        let directory = temporaryDirectory()
        let log = directory + "/log"
        var server: RequestServer? = try Self.server(directory, log: log)
        let first = await server!.handle(try Self.request("pay-1", "12.50"))
        #expect(first?.0 == ResponseEnvelope(id: try RequestID("pay-1"), status: .ok, body: Array("receipt:12.50".utf8)))
        #expect(first?.1.ranCommand == true)
        let again = await server!.handle(try Self.request("pay-1", "12.50"))
        #expect(again?.0 == first?.0)
        #expect(again?.1.fromJournal == true)
        server = nil
        let restarted = try await Self.reopened(directory, log: log)
        #expect(await restarted.handle(try Self.request("pay-1", "12.50"))?.0 == first?.0)
        #expect(lineCount(log) == 1)
    }

    @Test("the same id with a different body is refused, not run")
    func conflict() async throws {
        let directory = temporaryDirectory()
        let server = try Self.server(directory, log: directory + "/log")
        _ = await server.handle(try Self.request("pay-2", "1.00"))
        let conflicting = await server.handle(try Self.request("pay-2", "999.00"))
        #expect(conflicting?.0.status == .refused)
        #expect(lineCount(directory + "/log") == 1)
    }

    @Test("a second server on a state directory in use is refused with journalInUse, which names the remedy")
    func stateInUse() throws {
        let directory = temporaryDirectory()
        let first = try Self.server(directory, log: directory + "/log")
        let error = #expect(throws: ExchangeError.self) { try Self.server(directory, log: directory + "/log") }
        #expect(error == .journalInUse(path: directory + "/state"))
        #expect(error?.description.contains("another state directory") == true)
        _ = first
    }

    @Test("an id whose command was started but never recorded is answered outcome-unknown, never re-run")
    func startedOnly() async throws {
        let directory = temporaryDirectory()
        let log = directory + "/log"
        let body = Array("5.00".utf8)
        do {
            // What a serve killed while the command ran leaves behind.
            let journal = try IdempotencyJournal(directory: directory + "/state")
            try journal.recordStarted(try RequestID("pay-3"), digest: Array(SHA256Digest(body)))
        }
        let server = try Self.server(directory, log: log)
        let answer = await server.handle(try Self.request("pay-3", "5.00"))
        #expect(answer?.0.status == .outcomeUnknown)
        #expect(await server.handle(try Self.request("pay-3", "5.00"))?.0.status == .outcomeUnknown)
        #expect(lineCount(log) == 0)
    }

    @Test("command failure and malformed envelopes map to their statuses")
    func statuses() async throws {
        let directory = temporaryDirectory()
        let server = try RequestServer(stateDirectory: directory, runner: CommandRunner(command: "exit 4"))
        let failed = await server.handle(try Self.request("x", ""))
        #expect(failed?.0.status == .commandFailed)
        #expect(failed?.0.exitCode == 4)
        #expect(await server.handle([1, 2, 3])?.0.status == .refused)
    }
}
