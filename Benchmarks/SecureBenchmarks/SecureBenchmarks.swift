import Benchmark
import Secure

/// 64 KiB of deterministic bytes.
let payload: [UInt8] = (0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

func configuration() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        warmupIterations: 3, scalingFactor: .one, maxDuration: .seconds(3), maxIterations: 10_000)
}

/// Both sides of one handshake, returning the two sessions.
func handshake(_ client: SecureCredentials, _ server: SecureCredentials) throws -> (SecureSession, SecureSession) {
    let clientHandshake = ClientHandshake(credentials: client)
    var serverHandshake = ServerHandshake(credentials: server)
    let (finish, clientSession) = try clientHandshake.finish(serverHello: try serverHandshake.respond(to: clientHandshake.hello))
    return (clientSession, try serverHandshake.complete(clientFinish: finish))
}

let benchmarks: @Sendable () -> Void = {
    let psk = SecureCredentials.preSharedKey(PreSharedKey())
    let clientIdentity = IdentityKey()
    let serverIdentity = IdentityKey()

    Benchmark("handshake, pre-shared key (both sides)", configuration: configuration()) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try handshake(psk, psk)) }
    }
    Benchmark("handshake, pinned X25519 identities (both sides)", configuration: configuration()) { benchmark in
        let client = SecureCredentials.identity(clientIdentity, peer: serverIdentity.publicKey)
        let server = SecureCredentials.identity(serverIdentity, peer: clientIdentity.publicKey)
        for _ in benchmark.scaledIterations { blackHole(try handshake(client, server)) }
    }
    // Each iteration seals 64 KiB and opens it: throughput (iterations/s) x 64 KiB = bytes/s each way.
    Benchmark("seal + open 64 KiB", configuration: configuration()) { benchmark in
        var (client, server) = try handshake(psk, psk)
        for _ in benchmark.scaledIterations {
            blackHole(try server.open(try client.seal(payload)))
        }
    }
    Benchmark("seal 64 KiB", configuration: configuration()) { benchmark in
        var (client, _) = try handshake(psk, psk)
        for _ in benchmark.scaledIterations { blackHole(try client.seal(payload)) }
    }
}
