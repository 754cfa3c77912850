import Testing
@testable import Secure

@Suite("secure handshake")
struct SecureHandshakeTests {
    @Test("a wrong pre-shared key fails the handshake as not authenticated")
    func wrongPreSharedKey() throws {
        let client = ClientHandshake(credentials: .preSharedKey(PreSharedKey()))
        var server = ServerHandshake(credentials: .psk)
        let serverHello = try server.respond(to: client.hello)
        #expect {
            try client.finish(serverHello: serverHello)
        } throws: { error in
            guard case .notAuthenticated = error as? SecureError else { return false }
            return "\(error)".hasPrefix("not authenticated")
        }
    }

    @Test("a server that pinned another client key is not authenticated by the client (mode 2 hello)")
    func serverPinnedAnotherClient() throws {
        let client = ClientHandshake(credentials: .clientPinned, announcesIdentity: false)
        var server = ServerHandshake(credentials: .identity(serverIdentity, peer: IdentityKey().publicKey))
        let serverHello = try server.respond(to: client.hello)
        #expect(throws: SecureError.self) { try client.finish(serverHello: serverHello) }
    }

    @Test("a client that pinned another server key rejects the real server (mode 2 hello)")
    func clientPinnedAnotherServer() throws {
        let client = ClientHandshake(
            credentials: .identity(clientIdentity, peer: IdentityKey().publicKey), announcesIdentity: false)
        var server = ServerHandshake(credentials: .serverPinned)
        let serverHello = try server.respond(to: client.hello)
        #expect(throws: SecureError.notAuthenticated(
            "the server's identity is not the pinned peer key, or it did not pin ours")) {
            try client.finish(serverHello: serverHello)
        }
    }

    @Test("a forged ClientFinish is not authenticated by the server")
    func forgedClientFinish() throws {
        let client = ClientHandshake(credentials: .psk)
        var server = ServerHandshake(credentials: .psk)
        let serverHello = try server.respond(to: client.hello)
        var (finish, _) = try client.finish(serverHello: serverHello)
        finish[10] ^= 0x01
        #expect(throws: SecureError.notAuthenticated("the client's key confirmation does not match")) {
            try server.complete(clientFinish: finish)
        }
    }

    @Test("the client's Reject(not authenticated) is reported by the server as not authenticated")
    func clientRejects() throws {
        let client = ClientHandshake(credentials: .psk)
        var server = ServerHandshake(credentials: .psk)
        _ = try server.respond(to: client.hello)
        #expect(throws: SecureError.notAuthenticated("the client does not accept our key")) {
            try server.complete(clientFinish: HandshakeReject(.notAuthenticated).bytes)
        }
    }

    @Test("pre-shared key against identity keys is a mode mismatch on both sides")
    func modeMismatch() throws {
        let client = ClientHandshake(credentials: .psk)
        var server = ServerHandshake(credentials: .serverPinned)
        #expect(throws: SecureError.modeMismatch(local: .identity, peer: .preSharedKey)) {
            try server.respond(to: client.hello)
        }
    }

    @Test("a Reject as the server's answer is the peer's refusal")
    func serverRejects() throws {
        let client = ClientHandshake(credentials: .psk)
        #expect(throws: SecureError.refusedByPeer(.modeMismatch)) {
            try client.finish(serverHello: HandshakeReject(.modeMismatch).bytes)
        }
    }

    @Test("every truncation and every changed byte of the ServerHello is refused, never accepted")
    func serverHelloDamage() throws {
        let client = ClientHandshake(credentials: .psk)
        var server = ServerHandshake(credentials: .psk)
        let serverHello = try server.respond(to: client.hello)
        for count in 0..<serverHello.count {
            #expect(throws: SecureError.self) { try client.finish(serverHello: Array(serverHello.prefix(count))) }
        }
        for index in serverHello.indices {
            var damaged = serverHello
            damaged[index] ^= 0x80
            #expect(throws: SecureError.self) { try client.finish(serverHello: damaged) }
        }
    }

    @Test("every truncation of the ClientHello and an unknown version or mode are refused")
    func clientHelloDamage() throws {
        let hello = ClientHandshake(credentials: .psk).hello
        for count in 0..<hello.count {
            var server = ServerHandshake(credentials: .psk)
            #expect(throws: SecureError.self) { try server.respond(to: Array(hello.prefix(count))) }
        }
        var server = ServerHandshake(credentials: .psk)
        #expect(throws: SecureError.unsupportedVersion(2)) { try server.respond(to: [2] + hello.dropFirst()) }
        var unknownMode = hello
        unknownMode[2] = 9
        #expect(throws: SecureError.handshakeFailed("ClientHello names unknown mode 9")) {
            try server.respond(to: unknownMode)
        }
    }

    @Test("each connection derives fresh keys: the same plaintext seals differently")
    func freshKeysPerConnection() throws {
        var first = try establishedSessions(client: .psk, server: .psk)
        var second = try establishedSessions(client: .psk, server: .psk)
        #expect(try first.client.seal([1, 2, 3]) != second.client.seal([1, 2, 3]))
    }
}
