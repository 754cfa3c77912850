import Crypto
import Framing
@testable import Secure

/// The fixed keys of the vectors (Scripts/secure-vectors.py): 32 consecutive bytes from `start`.
func fixedPrivateKey(_ start: UInt8) -> Curve25519.KeyAgreement.PrivateKey {
    try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: (0..<32).map { start + $0 })
}

let vectorPSK = try! PreSharedKey(bytes: Array(0..<32))
let clientIdentity = try! IdentityKey(privateBytes: (0..<32).map { 0x60 + $0 })
let serverIdentity = try! IdentityKey(privateBytes: (0..<32).map { 0x80 + $0 })


/// A finished handshake between fixed or fresh ephemerals: the two sessions, ready to seal and open.
func establishedSessions(
    client: SecureCredentials, server: SecureCredentials, fixedEphemerals: Bool = false,
    limits: SecureLimits = SecureLimits()
) throws -> (client: SecureSession, server: SecureSession) {
    let clientHandshake = fixedEphemerals
        ? ClientHandshake(credentials: client, limits: limits, ephemeral: fixedPrivateKey(0x20))
        : ClientHandshake(credentials: client, limits: limits)
    var serverHandshake = fixedEphemerals
        ? ServerHandshake(credentials: server, limits: limits, ephemeral: fixedPrivateKey(0x40))
        : ServerHandshake(credentials: server, limits: limits)
    let serverHello = try serverHandshake.respond(to: clientHandshake.hello)
    let (finish, clientSession) = try clientHandshake.finish(serverHello: serverHello)
    return (clientSession, try serverHandshake.complete(clientFinish: finish))
}

extension SecureCredentials {
    static let psk = SecureCredentials.preSharedKey(vectorPSK)
    static let clientPinned = SecureCredentials.identity(clientIdentity, peer: serverIdentity.publicKey)
    static let serverPinned = SecureCredentials.identity(serverIdentity, peer: clientIdentity.publicKey)
}

/// The vectors' client key as `till-1`, beside two other keys.
let vectorAuthorizedKeys = try! AuthorizedKeys(parsing: """
    # the shop's phones
    \(IdentityKey().publicKey.text) till-0
    msgpipe-x25519-public:675dd574ed7789310b3d2e7681f3790b466c773b1521fecf36577958371ea52f till-1
    \(Hex.string(IdentityKey().publicKey.bytes))\ttill-2
    """)
