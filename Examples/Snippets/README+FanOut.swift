import MsgPipe

/// README, "one gateway, many modules": one central on several peripherals.
func readmeFanOut() async {
    let pipes = await MessagePipe.connect(toEach: ["door", "hall", "lobby"]).compactMap { try? $0.get() }
    let results = await MessagePipe.send(Array("open".utf8), to: pipes)   // one Result per pipe, in order
    _ = results
}

/// PeerPipes' usage block: one central connecting to several peripherals, as `listen --to` x3 does.
func peerPipesUsage(options: MessagePipe.Options) async {
    let peers = await PeerPipes.connect(toEach: ["door", "hall"], options: options)
    for failure in peers.unreachable { print("cannot connect to \(failure.peer): \(failure.error)") }
    for pipe in peers.pipes { print(peers.peer(of: pipe) ?? "?") }
    await peers.close()
}
