// PaymentClient: sends one payment request to a PaymentTerminal and prints the receipt.
//
//     swift run PaymentClient terminal terminal.key order-1017 12.50             # Bluetooth, by name
//     swift run PaymentClient unix:/tmp/terminal.sock terminal.key order-1017 12.50
//
// Run it twice with the same order id: the second run gets the same receipt and nothing is charged again.
import Exchange
import Foundation
import MsgPipe
import Secure

let arguments = CommandLine.arguments
guard arguments.count == 5 else {
    FileHandle.standardError.write(Data("usage: PaymentClient PEER KEY_FILE ORDER_ID AMOUNT\n".utf8))
    exit(64)
}
let key = try PreSharedKey(text: try String(contentsOfFile: arguments[2], encoding: .utf8))
let orderID = try RequestID(arguments[3])

var options = MessagePipe.Options()
options.keys = .credentials(.preSharedKey(key))
do {
    // A terminal with another key fails here as "not authenticated".
    let pipe = try await MessagePipe.connect(to: arguments[1], options: options)
    // A link that drops meanwhile is reconnected and the request resumed: it reaches the terminal once.
    let response = try await pipe.request(Array(arguments[4].utf8), id: orderID, timeout: .seconds(20))
    print("\(orderID): \(response.status): \(String(decoding: response.body, as: UTF8.self))")
    await pipe.close()
    exit(response.status == .ok ? 0 : 1)
} catch {
    // A timeout or a lost link: retry with the same order id; it will not be charged twice.
    print("\(orderID): \(error)")
    exit(2)
}
