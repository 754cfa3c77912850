import Exchange
import Secure
import Transport

/// `request --inject` faults: the request goes out sealed as usual, then changed in flight (`tamper`: one
/// ciphertext bit flipped) or sent twice at the transport level (`replay`); the second answer decides the
/// exit code. Uses the pure handshake API directly, below SecureChannel.
enum RequestFault: String, Sendable {
    case tamper
    case replay

    @Sendable func request(
        _ body: [UInt8], id: RequestID, over transport: Transport, credentials: SecureCredentials, timeout: Duration
    ) async throws -> ResponseEnvelope {
        let handshake = ClientHandshake(credentials: credentials)
        var (finish, session) = try handshake.finish(
            serverHello: try await transport.request(handshake.hello, timeout: timeout))
        try await transport.send(finish, timeout: timeout)
        var record = try session.seal(RequestEnvelope(id: id, body: body).encoded())
        switch self {
        case .tamper:
            record[record.count - 20] ^= 0x01
        case .replay:
            _ = try session.open(try await transport.request(record, timeout: timeout))
        }
        switch try session.open(try await transport.request(record, timeout: timeout)) {
        case let .data(bytes), let .originated(bytes, _): return try ResponseEnvelope(decoding: bytes)
        case let .alert(alert): throw SecureError.refusedByPeer(alert)
        }
    }
}
