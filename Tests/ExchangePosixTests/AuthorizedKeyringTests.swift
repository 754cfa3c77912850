@testable import Exchange
@testable import ExchangePosix
import Foundation
import MemoryLinks
import Secure
import TestSupport
import Testing
import Transport

/// Key files with their checks, and a keyring serving sealed sessions over MemoryLinks: reload revokes,
/// records that do not open are refused, resume delivers each message once.
@Suite("authorized keyring and key files")
struct AuthorizedKeyringTests {
    static let server = IdentityKey()
    static let phones = (0..<3).map { _ in IdentityKey() }

    static func fileText(_ indices: [Int]) -> String {
        indices.map { "\(phones[$0].publicKey.text) phone-\($0)\n" }.joined()
    }

    static func write(_ text: String, mode: Int = 0o644) -> String {
        let path = temporaryDirectory() + "/authorized_keys"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        chmod(path, mode_t(mode))
        return path
    }

    /// A client handshake with `phone` against `keyring`: both channels, or the client's error.
    static func connect(
        _ phone: IdentityKey, to keyring: AuthorizedKeyring, link: (MemoryLink, MemoryLink) = MemoryLink.pair()
    ) async throws -> (client: SecureChannel, server: SecureChannel) {
        let (clientTransport, serverTransport) = (Transport(link: link.0), Transport(link: link.1))
        let accepted = Task { try await keyring.accept(over: serverTransport, identity: Self.server) }
        do {
            let client = try await SecureChannel.initiate(
                over: clientTransport, credentials: .identity(phone, peer: Self.server.publicKey), timeout: hangGuard)
            return (client, try await accepted.value)
        } catch {
            _ = await accepted.result
            await clientTransport.close()
            await serverTransport.close()
            throw error
        }
    }

    @Test("a missing, world-writable, non-regular or invalid file is a typed error naming it")
    func fileChecks() throws {
        let missing = temporaryDirectory() + "/none"
        #expect(throws: KeyFileError.missing(path: missing)) { try KeyFiles.authorizedKeys(at: missing) }
        let open = Self.write(Self.fileText([0]), mode: 0o666)
        #expect(throws: KeyFileError.worldWritable(path: open)) { try KeyFiles.authorizedKeys(at: open) }
        #expect(throws: KeyFileError.worldWritable(path: open)) { try KeyFiles.identity(at: open) }
        let directory = temporaryDirectory()
        #expect(throws: KeyFileError.notRegularFile(path: directory)) { try AuthorizedKeyring(path: directory) }
        let bad = Self.write(Self.fileText([0]) + "\(Self.phones[0].publicKey.text) again\n")
        #expect(throws: KeyFileError.invalid(path: bad, reason: "line 2: the key of line 1 again")) {
            try KeyFiles.authorizedKeys(at: bad)
        }
        let good = Self.write(Self.fileText([0, 1]), mode: 0o600)
        #expect(try KeyFiles.authorizedKeys(at: good).entries.map(\.name) == ["phone-0", "phone-1"])
        let identity = Self.write(Self.server.text + "\n", mode: 0o600)
        #expect(try KeyFiles.identity(at: identity).publicKey == Self.server.publicKey)
        #expect(throws: KeyFileError.self) { try KeyFiles.identity(at: good) }
    }

    @Test("a pre-shared key file gives the key of its first line, with the same checks")
    func preSharedKeyFile() throws {
        let key = PreSharedKey()
        let path = Self.write(key.text + "\nanything after the first line\n", mode: 0o600)
        #expect(try KeyFiles.preSharedKey(at: path).text == key.text)
        let identity = Self.write(Self.server.text + "\n", mode: 0o600)
        #expect {
            try KeyFiles.preSharedKey(at: identity)
        } throws: { error in
            guard case let .invalid(path, _)? = error as? KeyFileError else { return false }
            return path == identity
        }
        let open = Self.write(key.text + "\n", mode: 0o666)
        #expect(throws: KeyFileError.worldWritable(path: open)) { try KeyFiles.preSharedKey(at: open) }
    }

    @Test("a created key file is its owner's only, reads back its key, and is never replaced")
    func createdKeyFile() throws {
        let key = PreSharedKey()
        let path = temporaryDirectory() + "/psk"
        try KeyFiles.create(path, holding: key.text + "\n")
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o077 == 0)  // no one else may read it
        #expect(try KeyFiles.preSharedKey(at: path).text == key.text)
        #expect {
            try KeyFiles.create(path, holding: PreSharedKey().text + "\n")
        } throws: { error in
            guard case let .uncreatable(failed, _)? = error as? KeyFileError else { return false }
            return failed == path
        }
        #expect(try KeyFiles.preSharedKey(at: path).text == key.text)
        #expect {
            try KeyFiles.create(temporaryDirectory() + "/missing/psk", holding: "x")
        } throws: { error in
            if case .uncreatable? = error as? KeyFileError { true } else { false }
        }
    }

    @Test("a new key's text reads back as its key: a pre-shared key, or an identity with its public key")
    func newKeysReadBack() throws {
        let shared = KeyFiles.newKey(x25519: false)
        #expect(shared.publicKey == nil)
        #expect(try PreSharedKey(text: shared.secret).text == shared.secret)
        #expect(shared.secret != KeyFiles.newKey(x25519: false).secret, "each key is new")
        let identity = KeyFiles.newKey(x25519: true)
        let key = try IdentityKey(text: identity.secret)
        #expect(identity.publicKey == key.publicKey.text)
        let path = temporaryDirectory() + "/box.id"
        try KeyFiles.create(path, holding: identity.secret + "\n")
        #expect(try KeyFiles.identity(at: path).publicKey.text == identity.publicKey)
    }

    @Test("a file larger than the limit is refused")
    func tooLarge() {
        let path = Self.write(String(repeating: "#\n", count: KeyFiles.maximumSize / 2 + 1))
        #expect(throws: KeyFileError.tooLarge(path: path, size: KeyFiles.maximumSize + 2, limit: KeyFiles.maximumSize)) {
            try KeyFiles.authorizedKeys(at: path)
        }
    }

    @Test("after a reload a removed key's live session is closed and its new handshake refused; others go on")
    func reloadRevokes() async throws {
        let path = Self.write(Self.fileText([0, 1, 2]))
        let keyring = try AuthorizedKeyring(path: path)
        let kept = try await Self.connect(Self.phones[0], to: keyring)
        let revoked = try await Self.connect(Self.phones[1], to: keyring)
        #expect(keyring.liveSessions == 2)
        try await revoked.client.send([1], timeout: hangGuard)
        #expect(try await revoked.server.receive()?.plaintext == [1])

        try Self.fileText([0, 2]).write(toFile: path, atomically: true, encoding: .utf8)
        let removed = try await keyring.reload()
        #expect(removed.map(\.name) == ["phone-1"])
        #expect(keyring.liveSessions == 1)
        // The revoked session is closed: its server side ends, its client cannot deliver anything more.
        #expect(try await revoked.server.receive() == nil)
        await #expect(throws: (any Error).self) { try await revoked.client.send([2], timeout: .seconds(2)) }
        await #expect(throws: SecureError.refusedByPeer(.notAuthenticated)) {
            _ = try await Self.connect(Self.phones[1], to: keyring)
        }
        #expect(keyring.refusedHandshakes == 1)
        // The kept key's session goes on.
        try await kept.client.send([3], timeout: hangGuard)
        #expect(try await kept.server.receive()?.plaintext == [3])
        await kept.client.close()
        await kept.server.close()
    }

    @Test("a reload of a file that fails its checks keeps the keys")
    func failedReloadKeeps() async throws {
        let path = Self.write(Self.fileText([0]))
        let keyring = try AuthorizedKeyring(path: path)
        try "not a key line\n".write(toFile: path, atomically: true, encoding: .utf8)
        await #expect(throws: KeyFileError.self) { try await keyring.reload() }
        #expect(keyring.keys.entries.map(\.name) == ["phone-0"])
    }

    @Test("tampered and replayed records of a known key are refused and not delivered")
    func tamperedAndReplayed() async throws {
        let keyring = AuthorizedKeyring(keys: try AuthorizedKeys(parsing: Self.fileText([0])))
        let (a, b) = MemoryLink.pair()
        let (clientTransport, serverTransport) = (Transport(link: a), Transport(link: b))
        async let accepted = keyring.accept(over: serverTransport, identity: Self.server)
        let handshake = ClientHandshake(credentials: .identity(Self.phones[0], peer: Self.server.publicKey))
        let (finish, session) = try handshake.finish(
            serverHello: try await clientTransport.request(handshake.hello, timeout: hangGuard))
        var client = session
        try await clientTransport.send(finish)
        let server = try await accepted
        #expect(server.peer?.name == "phone-0")
        let delivered = Task { () -> [[UInt8]] in
            var delivered: [[UInt8]] = []
            while delivered.last != Array("pay 7".utf8) {
                do {
                    guard let message = try await server.receive() else { return delivered }
                    delivered.append(message.plaintext)
                } catch {
                    continue  // refused: counted, not delivered
                }
            }
            return delivered
        }
        let record = try client.seal(Array("pay 5".utf8))
        try await clientTransport.send(record)
        try await clientTransport.send(record)
        var tampered = try client.seal(Array("pay 6".utf8))
        tampered[tampered.count - 1] ^= 1
        try await clientTransport.send(tampered)
        try await clientTransport.send(try client.seal(Array("pay 7".utf8)))
        #expect(await delivered.value == [Array("pay 5".utf8), Array("pay 7".utf8)])
        #expect(await server.statistics.rejectedReplays == 1)
        #expect(await server.statistics.rejectedTampered == 1)
        await clientTransport.close()
        await server.close()
    }

    @Test("sealed messages across link drops and resumes are delivered exactly once, in order")
    func resumeExactlyOnce() async throws {
        let keyring = AuthorizedKeyring(keys: try AuthorizedKeys(parsing: Self.fileText([0, 1])))
        let link = MemoryLink.pair()
        let (client, server) = try await Self.connect(Self.phones[1], to: keyring, link: link)
        let count = 40
        let receiving = Task { () -> [[UInt8]] in
            var received: [[UInt8]] = []
            while received.count < count, let message = try await server.receive() { received.append(message.plaintext) }
            return received
        }
        let dropping = Task {
            for _ in 0..<4 {
                try await Task.sleep(for: .milliseconds(15))
                await link.0.disconnect(reason: "test drop")
                try await Task.sleep(for: .milliseconds(10))
                await link.0.reconnect()
            }
        }
        for index in 0..<count {
            try await client.send(Array(repeating: UInt8(index), count: 300 + index), timeout: hangGuard)
        }
        try await dropping.value
        let received = try await receiving.value
        #expect(received == (0..<count).map { Array(repeating: UInt8($0), count: 300 + $0) })
        #expect(await server.statistics.rejected == 0)
        await client.close()
        await server.close()
    }
}
