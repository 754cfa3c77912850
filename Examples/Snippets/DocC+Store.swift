import MsgPipe

/// MsgPipe.docc DurableStorage: keep each message before it is acknowledged.
func doccInbox() async throws {
    var options = MessagePipe.Options()
    options.holdsAcknowledgements = true
    let server = try await MessagePipe.advertise(name: "kiosk", options: options)
    let inbox = try MessageInbox(directory: "inbox")
    for await central in server.centrals {
        for await message in central.messages { try await inbox.keep(message) }
    }
}

/// MsgPipe.docc DurableStorage: queue messages durably, deliver them when the peer is in range.
func doccOutbox() async throws {
    let outbox = try MessageOutbox(directory: "/var/spool/readings")
    try outbox.enqueue(Array("21.5 C".utf8))
    var options = MessagePipe.Options()
    options.reconnect.attempts = 1000
    let report = try await outbox.deliver(to: "kitchen", options: options)
    print("\(report.delivered) delivered, \(outbox.entries.count) still queued")
}
