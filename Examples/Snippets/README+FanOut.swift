import MsgPipe

/// README, "one gateway, many modules": one central on several peripherals.
func readmeFanOut() async {
    let pipes = await MessagePipe.connect(toEach: ["door", "hall", "lobby"]).compactMap { try? $0.get() }
    let results = await MessagePipe.send(Array("open".utf8), to: pipes)   // one Result per pipe, in order
    _ = results
}
