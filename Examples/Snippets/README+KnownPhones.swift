import MsgPipe

/// README, "only known phones": a peripheral that accepts only the listed keys.
func readmeKnownPhones() async throws {
    var options = MessagePipe.Options()
    options.keys = .authorized(try KeyFiles.identity(at: "box.id"), try AuthorizedKeyring(path: "phones.keys"))
    let server = try await MessagePipe.advertise(name: "till", options: options)
    for await phone in server.centrals {
        Task { for await message in phone.messages { print(message.sender?.label ?? "?", message.bytes.count) } }
    }
}
