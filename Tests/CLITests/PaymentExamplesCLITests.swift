import Foundation
import Testing

/// The README's examples as real processes: PaymentTerminal serves, PaymentClient pays twice with one order id.
@Suite("Payment examples")
struct PaymentExamplesCLITests {
    static func binary(_ name: String) -> URL {
        MsgPipeProcess.binary.deletingLastPathComponent().appendingPathComponent(name)
    }

    @Test("a retried order gets the same receipt and is charged once")
    func payTwice() throws {
        let directory = NSTemporaryDirectory() + "msgpipe-examples-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(try MsgPipeProcess.run(["keygen", "--out", directory + "/terminal.key"]).status == 0)
        let terminal = Process()
        terminal.executableURL = Self.binary("PaymentTerminal")
        terminal.arguments = ["unix:" + directory + "/socket", directory + "/terminal.key", directory + "/state"]
        terminal.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        terminal.standardOutput = output
        try terminal.run()
        defer {
            terminal.terminate()
            terminal.waitUntilExit()
        }
        var ready = ""
        while !ready.contains("terminal ready") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            ready += String(decoding: chunk, as: UTF8.self)
        }
        var receipts: [String] = []
        for _ in 0..<2 {
            let client = Process()
            client.executableURL = Self.binary("PaymentClient")
            client.arguments = ["unix:" + directory + "/socket", directory + "/terminal.key", "order-1017", "12.50"]
            let receipt = Pipe()
            client.standardOutput = receipt
            try client.run()
            receipts.append(String(decoding: receipt.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            client.waitUntilExit()
            #expect(client.terminationStatus == 0)
        }
        #expect(receipts == Array(repeating: "order-1017: ok: approved 12.50\n", count: 2))
        let charges = try String(contentsOfFile: directory + "/charges.log", encoding: .utf8)
        #expect(charges == "12.50\n")
    }
}
