import MemoryLinks
@testable import Secure
import TestSupport
import Testing
import Transport

/// A server that accepts a set of keys: the mode-3 handshake, without I/O and over MemoryLinks.
@Suite("handshake against authorized keys")
struct AuthorizedHandshakeTests {
    static let phones = (0..<3).map { _ in IdentityKey() }
    static let keys = try! AuthorizedKeys(phones.enumerated().map { AuthorizedKeys.Entry(name: "phone-\($0)", key: $1.publicKey) })

    static func server(_ keys: AuthorizedKeys = keys) -> ServerHandshake {
        ServerHandshake(identity: serverIdentity, authorizedKeys: keys)
    }

    static func client(_ identity: IdentityKey, pinning server: PeerPublicKey = serverIdentity.publicKey) -> ClientHandshake {
        ClientHandshake(credentials: .identity(identity, peer: server))
    }

    @Test("each known key completes the handshake and the server names it")
    func knownKeys() throws {
        for (index, phone) in Self.phones.enumerated() {
            let client = Self.client(phone)
            var server = Self.server()
            let (finish, _) = try client.finish(serverHello: try server.respond(to: client.hello))
            _ = try server.complete(clientFinish: finish)
            #expect(server.peer == AuthorizedKeys.Entry(name: "phone-\(index)", key: phone.publicKey))
        }
    }

    @Test("an unknown key is refused at the ClientHello, before any key is derived")
    func unknownKey() throws {
        let stranger = IdentityKey()
        var server = Self.server()
        #expect(throws: SecureError.notAuthenticated("the client's key \(stranger.publicKey.text) is not an authorized key")) {
            try server.respond(to: Self.client(stranger).hello)
        }
        #expect(server.peer == nil)
    }

    @Test("a client that pinned another server key is refused: its identity does not open")
    func clientPinnedAnotherServer() {
        var server = Self.server()
        #expect(throws: SecureError.notAuthenticated(
            "the client's identity is not sealed to our key (it pinned another server key)")) {
            try server.respond(to: Self.client(Self.phones[0], pinning: IdentityKey().publicKey).hello)
        }
    }

    @Test("every changed byte of a mode-3 ClientHello is refused or fails the client's check, never accepted")
    func damagedHello() throws {
        let client = Self.client(Self.phones[1])
        for index in client.hello.indices {
            var damaged = client.hello
            damaged[index] ^= 0x01
            var server = Self.server()
            guard let serverHello = try? server.respond(to: damaged) else { continue }
            // A changed ephemeral key is a different (valid) hello: the transcripts differ, so the client refuses.
            #expect(throws: SecureError.self) { try client.finish(serverHello: serverHello) }
        }
        for count in 0..<client.hello.count {
            var server = Self.server()
            #expect(throws: SecureError.self) { try server.respond(to: Array(client.hello.prefix(count))) }
        }
    }

    @Test("a set server refuses mode 1 and 2 hellos; a pinned server accepts mode 3 for its one key only")
    func modes() throws {
        var server = Self.server()
        #expect(throws: SecureError.modeMismatch(local: .announcedIdentity, peer: .preSharedKey)) {
            try server.respond(to: ClientHandshake(credentials: .psk).hello)
        }
        let modeTwo = ClientHandshake(credentials: .identity(Self.phones[0], peer: serverIdentity.publicKey), announcesIdentity: false)
        #expect(throws: SecureError.modeMismatch(local: .announcedIdentity, peer: .identity)) {
            try server.respond(to: modeTwo.hello)
        }
        var pinned = ServerHandshake(credentials: .identity(serverIdentity, peer: Self.phones[0].publicKey))
        let client = Self.client(Self.phones[0])
        let (finish, _) = try client.finish(serverHello: try pinned.respond(to: client.hello))
        _ = try pinned.complete(clientFinish: finish)
        var other = ServerHandshake(credentials: .identity(serverIdentity, peer: Self.phones[0].publicKey))
        #expect(throws: SecureError.self) { try other.respond(to: Self.client(Self.phones[1]).hello) }
    }

    @Test("an empty set refuses everyone")
    func emptySet() {
        var server = Self.server(AuthorizedKeys())
        #expect(throws: SecureError.self) { try server.respond(to: Self.client(Self.phones[0]).hello) }
    }
}

/// SecureChannel with authorized keys over Transports on an in-memory link.
@Suite("secure channel with authorized keys")
struct AuthorizedChannelTests {
    static func transports() -> (client: Transport, server: Transport) { SecureChannelTests.transports() }

    @Test("a known key delivers its sealed messages and the channel names the sender")
    func knownKeyDelivers() async throws {
        let (clientTransport, serverTransport) = Self.transports()
        async let accepted = SecureChannel.accept(
            over: serverTransport, identity: serverIdentity, authorizedKeys: AuthorizedHandshakeTests.keys)
        let client = try await SecureChannel.initiate(
            over: clientTransport, credentials: .identity(AuthorizedHandshakeTests.phones[2], peer: serverIdentity.publicKey),
            timeout: hangGuard)
        let server = try await accepted
        #expect(server.peer?.name == "phone-2")
        for body in [[], [1], Array(repeating: 7, count: 5000)] as [[UInt8]] {
            try await client.send(body, timeout: hangGuard)
            #expect(try await server.receive()?.plaintext == body)
        }
        await client.close()
        await server.close()
    }

    @Test("an unknown key is refused with one Reject and nothing it sends is delivered")
    func unknownKeyRefused() async throws {
        let (clientTransport, serverTransport) = Self.transports()
        async let accepted: Void = {
            await #expect(throws: SecureError.self) {
                _ = try await SecureChannel.accept(
                    over: serverTransport, identity: serverIdentity, authorizedKeys: AuthorizedHandshakeTests.keys)
            }
        }()
        await #expect(throws: SecureError.refusedByPeer(.notAuthenticated)) {
            _ = try await SecureChannel.initiate(
                over: clientTransport, credentials: .identity(IdentityKey(), peer: serverIdentity.publicKey),
                timeout: hangGuard)
        }
        await accepted
        await clientTransport.close()
        await serverTransport.close()
    }
}
