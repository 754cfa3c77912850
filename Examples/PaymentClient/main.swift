// PaymentClient: sends one payment request to a PaymentTerminal and prints the receipt.
//
//     swift run PaymentClient /tmp/terminal.sock terminal.key order-1017 12.50
//
// Run it twice with the same order id: the second run gets the same receipt and nothing is charged again.
// Over Bluetooth, connect the GATTLink to the socket of a BLECentral connection instead (as `msgpipe request`).
import GATT
import BLELink
import Exchange
import Foundation
import Secure
import Transport

/// Prints a line at once (unbuffered, also into a pipe).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
guard arguments.count == 5 else {
    FileHandle.standardError.write(Data("usage: PaymentClient SOCKET_PATH KEY_FILE ORDER_ID AMOUNT\n".utf8))
    exit(64)
}
let credentials = SecureCredentials.preSharedKey(
    try PreSharedKey(text: try String(contentsOfFile: arguments[2], encoding: .utf8)))
let orderID = try RequestID(arguments[3])

let link = GATTLink()
try await link.connect(try ATTBearer(adopting: try SeqPacketSocket.connect(path: arguments[1])))
let transport = Transport(link: link)
do {
    // A fresh session key for this connection; a terminal with another key fails here as "not authenticated".
    let channel = try await SecureChannel.initiate(over: transport, credentials: credentials, timeout: .seconds(20))
    let response = try await ExchangeClient.request(
        Array(arguments[4].utf8), id: orderID, over: channel, timeout: .seconds(20))
    say("\(orderID): \(response.status): \(String(decoding: response.body, as: UTF8.self))")
    await transport.close()
    exit(response.status == .ok ? 0 : 1)
} catch {
    // A timeout or a dropped link: retry with the same order id; it will not be charged twice.
    say("\(orderID): \(error)")
    await transport.close()
    exit(2)
}
