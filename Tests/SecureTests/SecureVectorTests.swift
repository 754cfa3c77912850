import Crypto
import Framing
import Testing
@testable import Secure
import TestSupport

/// Fixed keys and ephemerals give exactly the bytes an independent implementation (Python `cryptography`,
/// Scripts/secure-vectors.py) computes; the same vectors are in PROTOCOL.md 6.7.
@Suite("secure handshake and record vectors")
struct SecureVectorTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let client: SecureCredentials
        let server: SecureCredentials
        let clientHello, serverHello, clientFinish, sealedToServer, sealedToClient, alertToClient: String
        /// The client's second record: `pay 12.50 EUR` with origin session 0102030405060708, id 5 (type 0x12).
        let originToServer: String
        /// Mode 3 (the client announces its key) or the older hellos.
        var announces = false
        /// A server that accepts this set instead of `server`'s pinned key.
        var authorized: AuthorizedKeys? = nil
        var testDescription: String { name }
    }

    static let vectors = [
        Vector(
            name: "pre-shared key", client: .psk, server: .psk,
            clientHello: "010101358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254",
            serverHello: "01020179a631eede1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89af85a51a243c4b282079c13ac6381da4cc25e6016e40faff05af3c2535d4e2f05d88ff7d",
            clientFinish: "01031d6237714075e4d066460ad8d7c436dedd3f12110972441acdce402309e1f54b",
            sealedToServer: "01100000000000000000133dd00e90bea91bebc40bdcdf630861eb8bf3c444e547ba31a56eda91",
            sealedToClient: "011000000000000000002bb89a70cf22b5a5e0fc3c826e964032f823b05f78b75792",
            alertToClient: "01110000000000000001a1d7c396e9cc9b7dea0645f70f6d013b8b",
            originToServer: "011200000000000000015ced729649069cb4152d7bd329c32e5afe596b764ae118c8c44e074ff41e137a47aed6357c89be080d"),
        Vector(
            name: "pinned X25519 identities", client: .clientPinned, server: .serverPinned,
            clientHello: "010102358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254",
            serverHello: "01020279a631eede1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89af85a51a6e7dba7636289294b6ec0dcaa84169d528bcad8b84dd537e57c80ffb79fcbe93",
            clientFinish: "010366b058f14bdadc23dc77210d4c62e24ea34ce856245fb95fe639c0944c9c8e06",
            sealedToServer: "0110000000000000000019f52cb29241fc047dcc4ab434d58f716c9b6a2500198bacbd61d59d2b",
            sealedToClient: "011000000000000000000d71244cbb160d77ee8390c3c7d5e895d2fa0fa2cf8eeba5",
            alertToClient: "01110000000000000001ecac813070c1558e86d6b8cb735a061baa",
            originToServer: "011200000000000000010f2f630e12c2b4a5475d6e84f0315ac816a48c648b838f5746f5db5b129b642dd66319799f6ef82a86"),
        announced("announced X25519 identity, server pinned its key", authorized: nil),
        announced("announced X25519 identity, server accepts a set of keys", authorized: vectorAuthorizedKeys),
    ]

    static func announced(_ name: String, authorized: AuthorizedKeys?) -> Vector {
        Vector(
            name: name, client: .clientPinned, server: .serverPinned,
            clientHello: "010103358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254"
                + "9b8d0c272243e0d66024a3a6d51b878ed04e30c7b9c801fe82eb8fa0219fa6f717ae77a6e5364cde6685bb0287529c5f",
            serverHello: "01020379a631eede1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89af85a51a92f9f126ba47c6c024eba9e605ddc520a13f129ce29526fc55b3d438dabd8a1f",
            clientFinish: "0103f53ba4ce3112010b2ae8ab18729e9290b02a1dccd276fb3e725255635ca8433e",
            sealedToServer: "01100000000000000000f31ef37b2cabca77b9be73b44715cf9e2bd3eae77c9887d2e3df8525f7",
            sealedToClient: "011000000000000000001e8f530e5684b4cb45b69945e9e77126818c41c23ed9e524",
            alertToClient: "01110000000000000001eb39bb92b6a29a433b7a83b3e776793ffc",
            originToServer: "011200000000000000018c6145879fb75bb0b9f7223809d0cd38fcfe237b4f7b3848c71aa203582e2351f1675e5f35b874dce0",
            announces: true,
            authorized: authorized)
    }

    @Test("handshake messages and sealed records match the pinned bytes", arguments: vectors)
    func pinnedBytes(vector: Vector) throws {
        let client = ClientHandshake(
            credentials: vector.client, ephemeral: fixedPrivateKey(0x20), announcesIdentity: vector.announces)
        var server = vector.authorized.map {
            ServerHandshake(identity: serverIdentity, authorizedKeys: $0, ephemeral: fixedPrivateKey(0x40))
        } ?? ServerHandshake(credentials: vector.server, ephemeral: fixedPrivateKey(0x40))
        #expect(Hex.string(client.hello) == vector.clientHello)
        let serverHello = try server.respond(to: client.hello)
        #expect(Hex.string(serverHello) == vector.serverHello)
        var (finish, clientSession) = try client.finish(serverHello: serverHello)
        #expect(Hex.string(finish) == vector.clientFinish)
        var serverSession = try server.complete(clientFinish: finish)
        #expect(server.peer?.key == (vector.client.mode == .preSharedKey ? nil : clientIdentity.publicKey))
        if vector.authorized != nil { #expect(server.peer?.name == "till-1") }

        let request = try clientSession.seal(Array("pay 12.50 EUR".utf8))
        #expect(Hex.string(request) == vector.sealedToServer)
        #expect(try serverSession.open(request) == .data(Array("pay 12.50 EUR".utf8)))
        let response = try serverSession.seal(Array("approved".utf8))
        #expect(Hex.string(response) == vector.sealedToClient)
        let alert = try serverSession.sealAlert(.replayed)
        #expect(Hex.string(alert) == vector.alertToClient)
        #expect(try clientSession.open(response) == .data(Array("approved".utf8)))
        #expect(try clientSession.open(alert) == .alert(.replayed))

        let origin = MessageOrigin(session: 0x0102_0304_0506_0708, id: 5)
        let queued = try clientSession.seal(Array("pay 12.50 EUR".utf8), origin: origin)
        #expect(Hex.string(queued) == vector.originToServer)
        #expect(try serverSession.open(queued) == .originated(Array("pay 12.50 EUR".utf8), origin: origin))
    }

    @Test("a peer implementation's records open: the Python vectors decrypt to the plaintexts")
    func foreignRecordsOpen() throws {
        var (_, server) = try establishedSessions(client: .psk, server: .psk, fixedEphemerals: true)
        #expect(try server.open(bytes(Self.vectors[0].sealedToServer)) == .data(Array("pay 12.50 EUR".utf8)))
    }

    @Test("identity public keys are the X25519 public keys of the fixed private keys")
    func publicKeys() {
        #expect(Hex.string(clientIdentity.publicKey.bytes)
            == "675dd574ed7789310b3d2e7681f3790b466c773b1521fecf36577958371ea52f")
        #expect(Hex.string(serverIdentity.publicKey.bytes)
            == "493e82fc74464a59268817623d2053c5eb8e2cc4a988b4fee179ec6b010d531d")
    }
}
