import Crypto
import FuzzSupport
import Secure

/// Secure's parsers (PROTOCOL.md 6), with the fixed keys of the 6.7 vectors so every run is deterministic:
///
/// 1. The handshake messages: the whole input is decoded as ClientHello, ServerHello, ClientFinish and Reject;
///    what decodes must encode to exactly the same bytes. The responder answers it as a ClientHello, the
///    initiator takes it as a ServerHello, and the responder (after the vector ClientHello) as a ClientFinish:
///    each either refuses with a typed error or, for a well-formed message, proceeds.
/// 2. Sealed records: the input is opened by both sides of an established session; then it is read as a
///    script in which the initiator seals chunks (some with an origin) and the records reach the responder as they are, twice
///    (a replay), held back (reordered), dropped, or with a byte flipped. A record as sealed opens to its
///    plaintext once; a replayed one and a modified one are refused, never opened.
enum SecureFuzzTarget {
    static let credentials = SecureCredentials.preSharedKey(try! PreSharedKey(bytes: [UInt8](0...31)))
    static let clientEphemeral = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](32...63))
    static let serverEphemeral = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](64...95))

    static let client = ClientHandshake(credentials: credentials, ephemeral: clientEphemeral)

    /// The vector handshake, run once: the responder after the ClientHello, and both sessions.
    static let established: (responder: ServerHandshake, client: SecureSession, server: SecureSession) = {
        var server = ServerHandshake(credentials: credentials, ephemeral: serverEphemeral)
        let awaitingFinish: ServerHandshake
        do {
            let serverHello = try server.respond(to: client.hello)
            awaitingFinish = server
            let (finish, clientSession) = try client.finish(serverHello: serverHello)
            return (awaitingFinish, clientSession, try server.complete(clientFinish: finish))
        } catch {
            fatalError("the vector handshake failed: \(error)")
        }
    }()

    static func run(_ input: [UInt8]) {
        checkHandshakeMessages(input)
        checkRecords(input)
    }

    static func checkHandshakeMessages(_ input: [UInt8]) {
        func roundTrip<Message: Equatable>(_ message: Message?, _ encode: (Message, inout [UInt8]) -> Void) {
            guard let message else { return }
            var out: [UInt8] = []
            encode(message, &out)
            require(out == input, "\(message) decoded from \(input) encodes to \(out)")
        }
        roundTrip(try? ClientHello(decoding: input[...])) { $0.encode(into: &$1) }
        roundTrip(try? ServerHello(decoding: input[...])) { $0.encode(into: &$1) }
        roundTrip(try? ClientFinish(decoding: input[...])) { $0.encode(into: &$1) }
        roundTrip(try? HandshakeReject(decoding: input[...])) { $0.encode(into: &$1) }

        var server = ServerHandshake(credentials: credentials, ephemeral: serverEphemeral)
        if let serverHello = try? server.respond(to: input) {
            require((try? ServerHello(decoding: serverHello[...])) != nil, "the responder wrote a malformed ServerHello")
        }
        if (try? client.finish(serverHello: input)) != nil {
            // Only the vector ServerHello carries the confirmation our key derives.
            require(input.count == 67, "a ServerHello of \(input.count) bytes was accepted")
        }
        if (try? established.responder.complete(clientFinish: input)) != nil {
            require(input.count == 34, "a ClientFinish of \(input.count) bytes was accepted")
        }
    }

    static func checkRecords(_ input: [UInt8]) {
        var initiator = established.client
        var responder = established.server
        // The input as a record from the peer, on copies (the vector records open).
        var server = responder
        switch try? server.open(input) {
        case let .data(plaintext)?, let .originated(plaintext, _)?:
            require(plaintext.count <= server.limits.maximumPlaintextSize, "opened \(plaintext.count) bytes")
        default: break
        }
        var client = initiator
        _ = try? client.open(input)

        var script = FuzzScript(input)
        var held: [(record: [UInt8], expected: SecureSession.Opened)] = []
        var opened: Set<[UInt8]> = []
        while !script.isAtEnd {
            let operation = script.byte()
            if operation & 0x07 == 7 {
                guard !held.isEmpty else { continue }
                let (record, expected) = held.removeLast()
                deliver(record, expected: expected, to: &responder, opened: &opened)
                continue
            }
            let plaintext = Array(script.take(Int(operation >> 3)))
            let record: [UInt8]
            var expected = SecureSession.Opened.data(plaintext)
            do {
                switch operation & 0x07 {
                case 6: record = try initiator.sealAlert(.replayed)
                case 5:  // a queued message: its origin from the next bytes (session 0 made 1), sealed with it
                    let origin = MessageOrigin(
                        session: max(1, script.take(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }),
                        id: script.take(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                    record = try initiator.seal(plaintext, origin: origin)
                    expected = .originated(plaintext, origin: origin)
                default: record = try initiator.seal(plaintext)
                }
            } catch {
                fatalError("sealing \(plaintext.count) bytes failed: \(error)")
            }
            switch operation & 0x07 {
            case 0, 5: deliver(record, expected: expected, to: &responder, opened: &opened)
            case 1:
                deliver(record, expected: expected, to: &responder, opened: &opened)
                deliver(record, expected: expected, to: &responder, opened: &opened)
            case 2 where held.count < 70: held.append((record, expected))
            case 3: break  // lost
            case 6:
                guard case .alert(.replayed)? = try? responder.open(record) else { fatalError("a sealed alert did not open") }
            default:
                var modified = record
                let position = Int(script.byte()) % modified.count
                modified[position] ^= max(1, script.byte())
                let truncated = Array(modified.prefix(modified.count - Int(script.byte() & 0x03)))
                require((try? responder.open(truncated)) == nil, "a modified record opened: \(truncated)")
            }
        }
    }

    /// A record as sealed opens to its plaintext the first time, and is refused as a replay afterwards
    /// (or as too old for the window).
    static func deliver(
        _ record: [UInt8], expected: SecureSession.Opened, to server: inout SecureSession, opened: inout Set<[UInt8]>
    ) {
        let result: SecureSession.Opened
        do {
            result = try server.open(record)
        } catch .replayed {
            require(opened.contains(record), "a record never opened was refused as a replay")
            return
        } catch .outsideReplayWindow {
            return  // held back behind more than 64 newer records
        } catch {
            fatalError("a record as sealed was refused: \(error)")
        }
        require(opened.insert(record).inserted, "a record opened twice")
        require(result == expected, "\(expected) sealed opens to \(result)")
    }
}

@main
enum SecureFuzzerMain {
    static func main() {
        FuzzDriver.run(name: "SecureFuzzer", seeds: seeds, target: SecureFuzzTarget.run)
    }

    /// PROTOCOL.md 6.7 vectors (PSK and identity mode), a Reject, and record scripts.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        [
            ("psk-client-hello", hex("010101358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254")),
            ("psk-server-hello", hex("01020179a631eede1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89af85a51a"
                                     + "243c4b282079c13ac6381da4cc25e6016e40faff05af3c2535d4e2f05d88ff7d")),
            ("psk-client-finish", hex("01031d6237714075e4d066460ad8d7c436dedd3f12110972441acdce402309e1f54b")),
            ("psk-to-server", hex("01100000000000000000133dd00e90bea91bebc40bdcdf630861eb8bf3c444e547ba31a56eda91")),
            ("psk-to-client", hex("011000000000000000002bb89a70cf22b5a5e0fc3c826e964032f823b05f78b75792")),
            ("psk-alert", hex("01110000000000000001a1d7c396e9cc9b7dea0645f70f6d013b8b")),
            ("id-client-hello", hex("010102358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254")),
            ("id-server-hello", hex("01020279a631eede1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89af85a51a"
                                    + "6e7dba7636289294b6ec0dcaa84169d528bcad8b84dd537e57c80ffb79fcbe93")),
            ("id-client-finish", hex("010366b058f14bdadc23dc77210d4c62e24ea34ce856245fb95fe639c0944c9c8e06")),
            ("reject", hex("010405")),
            ("records", [0x18, 1, 2, 3, 0x09, 9, 0x12, 7, 7, 0x07, 0x0e, 8, 1, 0x04, 3, 0xff, 0x2a] + Array(0..<5) + [0x0b, 4, 5, 6, 7]),
        ]
    }
}
