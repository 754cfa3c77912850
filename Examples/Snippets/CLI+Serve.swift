import Exchange
import MsgPipe
import Secure
import Transport

/// docs/CLI.md, serve "From Swift": a client's request and a terminal's serving, with a pre-shared key.
func cliServe(pipe: MessagePipe, transport: Transport, key: PreSharedKey, body: [UInt8]) async throws {
    // client: a connected pipe (MessagePipe.connect); its transport is nil only for the plain formats
    let channel = try await SecureChannel.initiate(over: pipe.transport!, credentials: .preSharedKey(key), timeout: .seconds(20))
    let response = try await ExchangeClient.request(body, id: RequestID("order-1017"), over: channel, timeout: .seconds(20))

    // terminal: per connection, over that connection's Transport
    let server = try RequestServer(stateDirectory: "/var/lib/terminal", runner: CommandRunner(command: "payment-backend"))
    let served = try await SecureChannel.accept(over: transport, credentials: .preSharedKey(key))
    await server.serve(served)
    _ = response
}

/// docs/CLI.md, serve "From Swift": only the phones in a key file.
func cliServeKnownPhones(central: MessagePipe) async throws {
    let identity = try KeyFiles.identity(at: "/etc/terminal/terminal.id")
    let keyring = try AuthorizedKeyring(path: "/etc/terminal/phones.keys")
    // per central of a PipeServer:
    let channel = try await keyring.accept(over: central.transport!, identity: identity)
    defer { keyring.ended(channel) }
    while let message = try await channel.receive() { handle(message.plaintext, from: channel.peer!.label) }
    // on SIGHUP: try await keyring.reload()
}

/// What the snippet above does with each message.
private func handle(_ plaintext: [UInt8], from peer: String) {}
