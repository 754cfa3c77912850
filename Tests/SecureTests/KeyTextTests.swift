import Testing
@testable import Secure

@Suite("key text formats")
struct KeyTextTests {
    @Test("a pre-shared key's text round-trips, with a trailing newline")
    func preSharedKeyText() throws {
        let key = PreSharedKey()
        #expect(key.text.hasPrefix("msgpipe-psk:"))
        #expect(key.text.count == "msgpipe-psk:".count + 64)
        #expect(try PreSharedKey(text: key.text + "\n") == key)
        #expect(vectorPSK.text == "msgpipe-psk:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
    }

    @Test("identity and public key texts round-trip; bare hex is a public key too")
    func identityText() throws {
        let identity = IdentityKey()
        #expect(try IdentityKey(text: identity.text).publicKey == identity.publicKey)
        #expect(try PeerPublicKey(text: identity.publicKey.text) == identity.publicKey)
        #expect(try PeerPublicKey(text: identity.publicKey.text.split(separator: ":")[1]) == identity.publicKey)
    }

    @Test("malformed key texts are refused with a clear error", arguments: [
        "", "msgpipe-psk:", "msgpipe-psk:00", "msgpipe-psk:" + String(repeating: "zz", count: 32),
        "msgpipe-x25519-private:" + String(repeating: "00", count: 32), String(repeating: "00", count: 32),
        "msgpipe-psk:" + String(repeating: "00", count: 33),
    ])
    func malformed(text: String) {
        #expect(throws: SecureError.self) { try PreSharedKey(text: text) }
    }

    @Test("a private key text is not accepted as a pre-shared key or peer key")
    func wrongKind() {
        let identity = IdentityKey()
        #expect(throws: SecureError.self) { try PreSharedKey(text: identity.text) }
        #expect(throws: SecureError.self) { try PeerPublicKey(text: identity.text) }
    }
}
