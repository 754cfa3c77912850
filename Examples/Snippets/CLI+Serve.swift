import MsgPipe

/// docs/CLI.md, serve "From Swift": a terminal serving requests and a client's request, with a pre-shared key.
func cliServe(key: PreSharedKey, body: [UInt8]) async throws {
    var options = MessagePipe.Options()
    options.keys = .credentials(.preSharedKey(key))

    // terminal: each central's requests, one at a time; a retried id is answered from the journal
    let terminal = try await MessagePipe.serve(at: "terminal", options: options)
    let server = try RequestServer(stateDirectory: "/var/lib/terminal", runner: CommandRunner(command: "payment-backend"))
    await terminal.serveRequests(with: server)

    // client: reconnects and resumes if the link drops; a retry with the same id runs nothing twice
    let pipe = try await MessagePipe.connect(to: "terminal", options: options)
    let response = try await pipe.request(body, id: RequestID("order-1017"), timeout: .seconds(20))
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
