import MsgPipe

/// MsgPipe.docc, Getting Started: two processes over a UNIX socket.
func doccTwoProcesses() async throws {
    let server = try await MessagePipe.listen(path: "/tmp/mp.sock")
    Task {
        for await central in server.centrals {
            for await message in central.messages { print(message.bytes.count) }
        }
    }
    let pipe = try await MessagePipe.connect(to: "unix:/tmp/mp.sock")
    try await pipe.send(Array("hello".utf8))    // returns once the peer acknowledged the whole message
    await pipe.close()
}

/// MsgPipe.docc, Getting Started: the same over Bluetooth.
func doccOverBluetooth() async throws {
    let server = try await MessagePipe.advertise(name: "kiosk")        // the peripheral
    let pipe = try await MessagePipe.connect(to: "kiosk")              // the central, on another box
    _ = (server, pipe)
}
