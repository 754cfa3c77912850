// Push: the peripheral pushes one message to every central that subscribes, in the seeds' format (Start/End
// markers) on their characteristics: service FFF0, the central writes FFF2, the peripheral notifies FFF1.
//
//     swift run Push kiosk 2 '{"ticket":42}'            # Bluetooth: advertise "kiosk", wait for 2 centrals
//     swift run Push unix:/tmp/mp.sock 1 hello          # over a UNIX socket
//
// A phone app subscribes to FFF1 and joins the values from "Start" to "End". msgpipe's own central does it:
// `msgpipe listen --to kiosk --format legacy --profile custom:FFF0:FFF2:FFF1 --count 1`.
import Foundation
import MsgPipe

/// Prints a line at once (unbuffered, also into a pipe).
@Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
guard arguments.count == 4, let wanted = Int(arguments[2]), wanted > 0 else {
    FileHandle.standardError.write(Data("usage: Push NAME|unix:PATH CENTRALS MESSAGE\n".utf8))
    exit(64)
}
var options = MessagePipe.Options()
options.format = .legacy
options.profile = try .parse("custom:FFF0:FFF2:FFF1")
let server = try await MessagePipe.serve(at: arguments[1], options: options)
say(server.description)
var centrals: [MessagePipe] = []
for await central in server.centrals {
    centrals.append(central)
    if centrals.count == wanted { break }
}
// Each central is paced by its own link: a slow one does not hold the others.
await withTaskGroup(of: Void.self) { group in
    for central in centrals {
        group.addTask {
            do {
                try await central.send(Array(arguments[3].utf8), timeout: .seconds(30))
                say("\(central.peer): success")
            } catch {
                say("\(central.peer): \(error)")
            }
        }
    }
}
await server.close()
