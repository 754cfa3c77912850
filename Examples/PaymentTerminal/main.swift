// PaymentTerminal: serves payment requests over msgpipe, sealed end to end, each charged at most once.
//
//     swift run PaymentTerminal /tmp/terminal.sock terminal.key /tmp/terminal-state
//
// terminal.key comes from `msgpipe keygen --out terminal.key`. The GATT link here runs over a UNIX socket;
// over Bluetooth the same GATTLink takes the socket of a BLEPeripheral connection (as `msgpipe serve` does).
import GATT
import BLELink
import Exchange
import Foundation
import Secure
import Transport

/// Prints a line at once (unbuffered, also into a pipe).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: PaymentTerminal SOCKET_PATH KEY_FILE STATE_DIR\n".utf8))
    exit(64)
}
let credentials = SecureCredentials.preSharedKey(
    try PreSharedKey(text: try String(contentsOfFile: arguments[2], encoding: .utf8)))

// The payment backend: the request body (an amount) on stdin, the receipt on stdout. Retried order ids are
// answered from the journal in STATE_DIR and never charged twice, even after a crash.
let server = try RequestServer(
    stateDirectory: arguments[3],
    runner: CommandRunner(command: #"amount=$(cat); echo "$amount" >> charges.log; printf 'approved %s' "$amount""#))

let listener = try SeqPacketSocket.listen(path: arguments[1])
say("terminal ready on unix:\(arguments[1])")
while true {
    let bearer = try ATTBearer(adopting: try await SeqPacketSocket.accept(listener))
    let link = GATTLink()
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            let transport = Transport(link: link)
            do {
                let channel = try await SecureChannel.accept(over: transport, credentials: credentials)
                await server.serve(channel) { event in
                    if case let .handled(request) = event {
                        say("order \(request.id): \(request.status)\(request.fromJournal ? " (retry)" : "")")
                    }
                }
            } catch {
                say("connection refused: \(error)")
            }
            await transport.close()
        }
        // One central at a time: serve the GATT service until it disconnects, then take the next.
        await link.serve(bearer, info: MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 517))
        await link.close()
    }
}
