import Exchange
import Glibc
import MsgPipe
import Secure
import Synchronization
import TestSupport
import Testing

/// Requests over the connection library: ``PipeServer`` serving them with a handler (and a journal), and
/// ``MessagePipe/request(_:id:timeout:)`` from a central, over `unix:` sockets.
@Suite("serving requests over a PipeServer")
struct RequestServingTests {
    let shared = SecureCredentials.preSharedKey(PreSharedKey())

    static func journalDirectory() throws -> String {
        var template = Array("/tmp/msgpipe-requests-XXXXXX".utf8CString)
        return String(cString: try #require(mkdtemp(&template)))
    }

    func options(keyed: Bool) -> MessagePipe.Options {
        var options = MessagePipe.Options()
        if keyed { options.keys = .credentials(shared) }
        options.handshakeTimeout = hangGuard
        options.helloTimeout = hangGuard
        return options
    }

    @Test("a sealed request gets the handler's response; the same id again is answered from the journal", arguments: [true, false])
    func aRequestIsAnsweredAndARetryComesFromTheJournal(keyed: Bool) async throws {
        let path = MessagePipeTests.socketPath("requests")
        let journal = try Self.journalDirectory()
        let runs = Atomic<Int>(0)
        let server = try await MessagePipe.listen(path: path, options: options(keyed: keyed))
        let serving = Task {
            try await server.serveRequests(journal: journal) { body in
                runs.add(1, ordering: .relaxed)
                return Array("receipt:".utf8) + body
            }
        }
        let pipe = try await MessagePipe.connect(to: "unix:\(path)", options: options(keyed: keyed))
        #expect(pipe.isSealed == keyed)
        let id = try RequestID("order-1")
        let first = try await pipe.request(Array("12.50".utf8), id: id, timeout: hangGuard)
        #expect(first.status == .ok)
        #expect(first.body == Array("receipt:12.50".utf8))
        let again = try await pipe.request(Array("12.50".utf8), id: id, timeout: hangGuard)
        #expect(again == first)
        let reused = try await pipe.request(Array("1000.00".utf8), id: id, timeout: hangGuard)
        #expect(reused.status == .refused, "the same id with another body")
        #expect(runs.load(ordering: .relaxed) == 1)
        await pipe.close()
        serving.cancel()
        try await serving.value
    }

    @Test("within a timeout, connecting to a peer: the request is answered; a peer that never completes the handshake ends at the timeout, not the handshake's")
    func withinConnectingToAPeer() async throws {
        let path = MessagePipeTests.socketPath("within")
        let server = try await MessagePipe.listen(path: path, options: options(keyed: true))
        let serving = Task { try await server.serveRequests { body in Array("ok:".utf8) + body } }
        let response = try await MessagePipe.within(hangGuard, connectingTo: "unix:\(path)", options: options(keyed: true)) { pipe in
            try await pipe.request(Array("pay".utf8), timeout: hangGuard)
        }
        #expect(response.body == Array("ok:pay".utf8))
        serving.cancel()
        try await serving.value
        // A server without keys never answers the handshake: one second bounds it, not the given 60 s.
        let plainPath = MessagePipeTests.socketPath("within-plain")
        let plain = try await MessagePipe.listen(path: plainPath)
        var keyed = options(keyed: true)
        keyed.handshakeTimeout = .seconds(60)
        let started = ContinuousClock.now
        await #expect(throws: (any Error).self) {
            try await MessagePipe.within(.seconds(1), connectingTo: "unix:\(plainPath)", options: keyed) { _ in 0 }
        }
        // Under 30 s tells the 1 s bound from the 60 s handshake timeout with room for a loaded host.
        #expect(started.duration(to: .now) < .seconds(30))
        await plain.close()
    }

    @Test("a handler's error is a command-failed response carrying its description")
    func aThrowingHandlerFailsTheRequest() async throws {
        struct Declined: Error, CustomStringConvertible { var description: String { "declined" } }
        let path = MessagePipeTests.socketPath("declined")
        let server = try await MessagePipe.listen(path: path, options: options(keyed: true))
        let serving = Task { try await server.serveRequests { _ in throw Declined() } }
        let pipe = try await MessagePipe.connect(to: "unix:\(path)", options: options(keyed: true))
        let response = try await pipe.request(Array("pay".utf8), timeout: hangGuard)
        #expect(response.status == .commandFailed)
        #expect(response.body == Array("declined".utf8))
        await pipe.close()
        serving.cancel()
        try await serving.value
    }

    /// A keyed server's silent central (connected, no Transport hello) is refused once the handshake timeout
    /// passed, counted and reported, as a central with a wrong key is.
    @Test("a central that sends nothing within the handshake timeout is refused and reported")
    func aSilentCentralIsRefused() async throws {
        let path = MessagePipeTests.socketPath("silent")
        var serverOptions = options(keyed: true)
        serverOptions.handshakeTimeout = .seconds(2)
        let (refusals, refused) = AsyncStream.makeStream(of: String.self)
        serverOptions.onRefusedHandshake = { _, reason in refused.yield("\(reason)") }
        let server = try await MessagePipe.listen(path: path, options: serverOptions)
        let connector = PipeConnector(to: .unix(path: path), options: MessagePipe.Options())
        let silent = try await connector.makeLink()
        // On a loaded machine the server may close it before GATT's setup finished: silent either way.
        _ = try? await connector.connect(silent)
        // Awaited, not polled: the refusal comes 2 s after the connect, which a loaded host may start late.
        #expect(await nextEvent(of: refusals) == "secure handshake failed: no handshake within 2 s")
        #expect(server.refusedHandshakes == 1)
        await silent.close()
        await server.close()
    }

    /// The peripheral drops the link while the handler runs: the central reconnects, Transport resumes, and
    /// the response recorded before the drop reaches the requester once; nothing runs twice.
    @Test("a request survives a link dropped mid-request: one response, the handler ran once")
    func aRequestSurvivesADroppedLink() async throws {
        let path = MessagePipeTests.socketPath("request-drop")
        let journal = try Self.journalDirectory()
        let runs = Atomic<Int>(0)
        let latest = Mutex<(any PipeLink)?>(nil)
        var serverOptions = options(keyed: true)
        serverOptions.onLinkEvent = { event, link in
            if case .packet = event { latest.withLock { $0 = link } }
        }
        let server = try await MessagePipe.listen(path: path, options: serverOptions)
        let (handled, handledOne) = AsyncStream.makeStream(of: HandledRequest.self)
        let answers = try RequestServer(stateDirectory: journal) { body in
            if runs.add(1, ordering: .relaxed).newValue == 1 {
                await latest.withLock { $0 }?.disconnect()
                try await Task.sleep(for: .milliseconds(200))
            }
            return body.reversed()
        }
        let serving = Task {
            await server.serveRequests(with: answers) { event in
                if case let .handled(request) = event { handledOne.yield(request) }
            }
        }
        var clientOptions = options(keyed: true)
        clientOptions.reconnect = ReconnectPolicy(initial: .milliseconds(100), maximum: .milliseconds(500), attempts: 20)
        let pipe = try await MessagePipe.connect(to: "unix:\(path)", options: clientOptions)
        let response = try await pipe.request(Array("abc".utf8), id: RequestID("order-7"), timeout: hangGuard)
        #expect(response.status == .ok)
        #expect(response.body == Array("cba".utf8))
        #expect(pipe.connections == 2, "the link dropped and came back")
        let next = try await pipe.request(Array("xyz".utf8), id: RequestID("order-8"), timeout: hangGuard)
        #expect(next.body == Array("zyx".utf8), "the next request gets its own response, not a stray one")
        #expect(runs.load(ordering: .relaxed) == 2)
        // The server reports a request once its response went out: awaited, however late a loaded host runs it.
        #expect(await nextEvent(of: handled)?.id == "order-7")
        #expect(await nextEvent(of: handled)?.id == "order-8")
        await pipe.close()
        serving.cancel()
        await serving.value
    }
}
