// Central: sends each file to a peripheral as one message and waits for its acknowledgement.
//
//     swift run Central kiosk photo.jpg                 # Bluetooth: the peripheral advertising "kiosk"
//     swift run Central unix:/tmp/mp.sock notes.txt     # the same GATT over a UNIX socket
//
// The pipe reconnects after a drop and resumes the message where it stopped.
import Foundation
import MsgPipe

/// Prints a line at once (unbuffered, also into a pipe).
@Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: Central PEER FILE...\n".utf8))
    exit(64)
}
let pipe = try await MessagePipe.connect(to: arguments[1])
say("connected to \(pipe.peer)")
for path in arguments.dropFirst(2) {
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    try await pipe.send(bytes, timeout: .seconds(60))
    say("\(path): \(bytes.count) bytes acknowledged")
}
await pipe.close()
