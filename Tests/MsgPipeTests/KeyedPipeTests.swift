import Exchange
import MsgPipe
import Secure
import TestSupport
import Testing
import Transport

/// End-to-end keys in the library (`MessagePipe.Options.keys`) over `unix:` sockets: who gets a pipe, who
/// sent each message, and that nothing of a peer without a right key is delivered or acknowledged.
@Suite("MessagePipe with end-to-end keys")
struct KeyedPipeTests {
    let server = IdentityKey()
    let phones = (0 ..< 3).map { _ in IdentityKey() }

    func keyring() throws -> AuthorizedKeyring {
        try AuthorizedKeyring(keys: AuthorizedKeys(phones.enumerated().map { index, phone in
            AuthorizedKeys.Entry(name: "phone-\(index)", key: phone.publicKey)
        }))
    }

    /// The hello, handshake and send deadlines here are hang guards, not speed limits: the whole suite runs in
    /// parallel on two busy cores, where 10 s once passed before a handshake was answered.
    static let guardTime = hangGuard

    func serverOptions(_ keyring: AuthorizedKeyring) -> MessagePipe.Options {
        var options = MessagePipe.Options()
        options.keys = .authorized(server, keyring)
        options.handshakeTimeout = Self.guardTime
        options.helloTimeout = Self.guardTime
        return options
    }

    func phoneOptions(_ phone: IdentityKey, timeout: Duration = Self.guardTime) -> MessagePipe.Options {
        var options = MessagePipe.Options()
        options.keys = .credentials(.identity(phone, peer: server.publicKey))
        options.handshakeTimeout = timeout
        options.reconnect.attempts = 0
        return options
    }

    @Test("three known phones each get a pipe named after their key; a stranger is refused with a typed error")
    func knownPhonesAreNamedAndAStrangerIsRefused() async throws {
        let path = MessagePipeTests.socketPath("keyed-known")
        let keyring = try keyring()
        var options = serverOptions(keyring)
        let refusals = Self.refusals(reportedBy: &options)
        let listening = try await MessagePipe.listen(path: path, options: options)
        for (index, phone) in phones.enumerated() {
            let pipe = try await MessagePipe.connect(to: "unix:\(path)", options: phoneOptions(phone))
            #expect(pipe.isSealed)
            try await pipe.send(Array("from \(index)".utf8), timeout: Self.guardTime)
            await pipe.close()
        }
        var names: [String: String] = [:]
        var centrals = listening.centrals.makeAsyncIterator()
        for _ in phones {
            let central = try #require(await centrals.next())
            var messages = central.messages.makeAsyncIterator()
            let message = try #require(await messages.next())
            #expect(message.sender == central.peerKey)
            names[message.sender?.name ?? "?"] = String(decoding: message.bytes, as: UTF8.self)
        }
        #expect(names == ["phone-0": "from 0", "phone-1": "from 1", "phone-2": "from 2"])
        await #expect {
            _ = try await MessagePipe.connect(to: "unix:\(path)", options: phoneOptions(IdentityKey()))
        } throws: { error in
            guard case MessagePipeError.notAuthenticated = error else { return false }
            return true
        }
        #expect(await nextEvent(of: refusals) != nil, "the refusal is reported")
        #expect(listening.refusedHandshakes == 1, "the refusal is counted")
        await listening.close()
    }

    /// The refusals `options` reports to its ``MessagePipe/Options/onRefusedHandshake``, in order, each at the
    /// instant the server counted it (just after the client learned of it): a test awaits the next one instead
    /// of polling the count against a deadline that a loaded host can overrun.
    static func refusals(reportedBy options: inout MessagePipe.Options) -> AsyncStream<ContinuousClock.Instant> {
        let (refusals, continuation) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
        options.onRefusedHandshake = { _, _ in continuation.yield(.now) }
        return refusals
    }

    @Test("a central without keys: its message is never acknowledged nor delivered, and the refusal is counted")
    func aKeylessCentralsMessageIsNeverAcknowledged() async throws {
        let path = MessagePipeTests.socketPath("keyed-keyless")
        var listenOptions = serverOptions(try keyring())
        let refusals = Self.refusals(reportedBy: &listenOptions)
        let listening = try await MessagePipe.listen(path: path, options: listenOptions)
        var options = MessagePipe.Options()
        options.reconnect.attempts = 0
        let stranger = try await MessagePipe.connect(to: "unix:\(path)", options: options)
        await #expect(throws: (any Error).self, "a send the listener did not take must not succeed") {
            try await stranger.send(Array("pay 100".utf8), timeout: .seconds(5))
        }
        await stranger.close()
        #expect(await nextEvent(of: refusals) != nil, "the refusal is reported")
        #expect(listening.refusedHandshakes == 1)
        #expect(listening.centrals.count == 0, "no pipe is handed out for it")
        await listening.close()
    }

    @Test("holding acknowledgements: a sealed message's send completes only after accept()")
    func heldAcknowledgementsWaitForAccept() async throws {
        let path = MessagePipeTests.socketPath("keyed-held")
        var options = serverOptions(try keyring())
        options.holdsAcknowledgements = true
        let listening = try await MessagePipe.listen(path: path, options: options)
        let phone = try await MessagePipe.connect(to: "unix:\(path)", options: phoneOptions(phones[1]))
        let sending = Task { try await phone.send(Array("held".utf8), timeout: Self.guardTime) }
        var centrals = listening.centrals.makeAsyncIterator()
        let central = try #require(await centrals.next())
        var messages = central.messages.makeAsyncIterator()
        let message = try #require(await messages.next())
        #expect(message.sender?.name == "phone-1")
        try await Task.sleep(for: .milliseconds(300))
        let waitingBefore = await central.transport?.messagesAwaitingAcceptance
        #expect(waitingBefore == 1, "the message waits for accept()")
        await message.accept()
        try await sending.value
        await phone.close()
        await listening.close()
    }

    @Test("revoking a key closes its open pipe: its messages end")
    func revocationEndsTheOpenPipe() async throws {
        let path = MessagePipeTests.socketPath("keyed-revoke")
        let keyring = try keyring()
        let listening = try await MessagePipe.listen(path: path, options: serverOptions(keyring))
        let phone = try await MessagePipe.connect(to: "unix:\(path)", options: phoneOptions(phones[2]))
        try await phone.send(Array("before".utf8), timeout: Self.guardTime)
        var centrals = listening.centrals.makeAsyncIterator()
        let central = try #require(await centrals.next())
        var messages = central.messages.makeAsyncIterator()
        #expect(await messages.next()?.bytes == Array("before".utf8))
        let kept = keyring.keys.entries.filter { $0.name != "phone-2" }
        let revoked = await keyring.replace(with: try AuthorizedKeys(kept))
        #expect(revoked.map(\.name) == ["phone-2"])
        #expect(await messages.next() == nil, "the revoked phone's pipe ends")
        #expect(keyring.liveSessions == 0)
        await phone.close()
        await listening.close()
    }

    @Test("a pre-shared key and a pinned server key carry sealed messages both ways")
    func preSharedAndPinnedKeysWorkBothWays() async throws {
        let shared = PreSharedKey()
        for (serverKeys, centralKeys) in [
            (PipeKeys.credentials(.preSharedKey(shared)), PipeKeys.credentials(.preSharedKey(shared))),
            (.credentials(.identity(server, peer: phones[0].publicKey)), .credentials(.identity(phones[0], peer: server.publicKey))),
        ] {
            let path = MessagePipeTests.socketPath("keyed-both")
            var options = MessagePipe.Options()
            options.handshakeTimeout = Self.guardTime
            options.helloTimeout = Self.guardTime
            options.keys = serverKeys
            let listening = try await MessagePipe.listen(path: path, options: options)
            options.keys = centralKeys
            let phone = try await MessagePipe.connect(to: "unix:\(path)", options: options)
            // Larger than Secure's own default limit (1 MiB): a pipe seals what its maximum message size allows.
            let big = seededBytes(1_200_000, seed: 3)
            try await phone.send(big, timeout: Self.guardTime)
            var centrals = listening.centrals.makeAsyncIterator()
            let central = try #require(await centrals.next())
            var received = central.messages.makeAsyncIterator()
            #expect(await received.next()?.bytes == big)
            try await central.send(Array("receipt".utf8), timeout: Self.guardTime)
            var replies = phone.messages.makeAsyncIterator()
            let reply = try #require(await replies.next())
            #expect(reply.bytes == Array("receipt".utf8))
            await phone.close()
            await listening.close()
        }
    }

    @Test("keys a side cannot use are a typed error: authorized keys on a central, keys with a plain format")
    func unusableKeysAreRefused() async throws {
        var options = MessagePipe.Options()
        options.keys = .authorized(server, try keyring())
        let path = MessagePipeTests.socketPath("keyed-unusable")
        let listening = try await MessagePipe.listen(path: path, options: .patientForTests)
        await #expect(throws: MessagePipeError.keysUnusable("authorized keys accept centrals: a central pins its peer's key")) {
            _ = try await MessagePipe.connect(to: "unix:\(path)", options: options)
        }
        await listening.close()
        options.format = .lines
        await #expect(throws: MessagePipeError.keysUnusable("end-to-end keys need the msgpipe format")) {
            _ = try await MessagePipe.listen(path: MessagePipeTests.socketPath("keyed-plain"), options: options)
        }
    }
}
