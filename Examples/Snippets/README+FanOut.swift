import MsgPipe

/// README, "one gateway, many modules": one central on several peripherals.
func readmeFanOut() async {
    let pipes = await MessagePipe.connect(toEach: ["door", "hall", "lobby"]).compactMap { try? $0.get() }
    let results = await MessagePipe.send(Array("open".utf8), to: pipes)   // one Result per pipe, in order
    _ = results
}

/// README, "one gateway, many modules": one central receiving from several peripherals.
func readmeReceiveFromSeveral() async {
    let peers = await PeerPipes.connect(toEach: ["door", "hall", "lobby"])
    for away in peers.unreachable { print("cannot connect to \(away.peer): \(away.error)") }
    for pipe in peers.pipes {
        Task { for await message in pipe.messages { print(peers.peer(of: pipe) ?? "?", message.bytes.count) } }
    }
}
