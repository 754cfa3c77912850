import MsgPipe
import MsgPipeStore

/// MsgPipeStore.docc: keep each message before it is acknowledged.
func doccInbox() async throws {
    var options = MessagePipe.Options()
    options.holdsAcknowledgements = true
    let server = try await MessagePipe.advertise(name: "kiosk", options: options)
    let inbox = try MessageInbox(directory: "inbox")
    for await central in server.centrals {
        for await message in central.messages { try await inbox.keep(message) }
    }
}
