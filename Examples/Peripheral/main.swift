// Peripheral: receives messages from several centrals at once and prints each one's size and sender.
//
//     swift run Peripheral kiosk                        # Bluetooth: advertises "kiosk"
//     swift run Peripheral unix:/tmp/mp.sock            # the same GATT over a UNIX socket
//
// Then, from another shell or box: `msgpipe send --to kiosk FILE` (or `--link unix:/tmp/mp.sock`).
import Foundation
import MsgPipe

/// Prints a line at once (unbuffered, also into a pipe).
@Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: Peripheral NAME|unix:PATH\n".utf8))
    exit(64)
}
let server = try await MessagePipe.serve(at: arguments[1])
say(server.description)
await withDiscardingTaskGroup { group in
    for await central in server.centrals {
        group.addTask {
            for await message in central.messages {
                say("\(central.peer): \(message.bytes.count) bytes")
            }
        }
    }
}
