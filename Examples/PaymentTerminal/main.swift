// PaymentTerminal: serves payment requests, sealed end to end, each charged at most once.
//
//     swift run PaymentTerminal terminal terminal.key /tmp/terminal-state             # Bluetooth: advertises
//     swift run PaymentTerminal unix:/tmp/terminal.sock terminal.key /tmp/terminal-state
//
// terminal.key comes from `msgpipe keygen --out terminal.key`.
import Exchange
import Foundation
import MsgPipe
import Secure

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: PaymentTerminal NAME|unix:PATH KEY_FILE STATE_DIR\n".utf8))
    exit(64)
}
/// Prints a line at once (unbuffered, also into a pipe).
@Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let key = try PreSharedKey(text: try String(contentsOfFile: arguments[2], encoding: .utf8))

// The payment backend: the request body (an amount) on stdin, the receipt on stdout. Retried order ids are
// answered from the journal in STATE_DIR and never charged twice, even after a crash.
let server = try RequestServer(
    stateDirectory: arguments[3],
    runner: CommandRunner(command: #"amount=$(cat); echo "$amount" >> charges.log; printf 'approved %s' "$amount""#))

var options = MessagePipe.Options()
options.keys = .credentials(.preSharedKey(key))  // a phone with another key is refused before it can send
let terminal = try await MessagePipe.serve(at: arguments[1], options: options)
say("terminal ready: \(terminal.description)")
await terminal.serveRequests(with: server) { event in
    if case let .handled(request) = event {
        say("order \(request.id): \(request.status)\(request.fromJournal ? " (retry)" : "")")
    }
}
