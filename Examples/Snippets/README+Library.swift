import MsgPipe

/// README, "the library": a central and a peripheral.
func readmeLibrary() async throws {
    // Central: find the peripheral advertising "kiosk", connect, subscribe; reconnects and resumes on its own.
    let pipe = try await MessagePipe.connect(to: "kiosk")
    try await pipe.send(Array("hello".utf8))          // returns once the peer acknowledged the whole message
    for await message in pipe.messages { print(message.bytes.count) }
    await pipe.close()

    // Peripheral: advertise "kiosk" and serve many centrals at once.
    let server = try await MessagePipe.advertise(name: "kiosk")
    for await central in server.centrals {
        Task { for await message in central.messages { try await central.send(message.bytes) } }  // echo
    }
}
