@testable import Exchange
import Foundation
import Testing

/// `serve --json`'s line of a handled request: the bytes JSONEncoder made of it (keys sorted) before the line
/// moved into the library, so scripts reading it see no change.
@Suite("handled request line")
struct HandledRequestTests {
    /// The line as JSONEncoder writes it.
    struct Reference: Encodable {
        let event = "request"
        let id: String
        let status: String
        let exitCode: UInt8
        let ranCommand: Bool
        let fromJournal: Bool
        let requestBytes: Int
        let responseBytes: Int
    }

    @Test("the line is JSONEncoder's sorted-key object of the request, without the note", arguments: [
        HandledRequest(id: "order-1", status: .ok, exitCode: 0, ranCommand: true, fromJournal: false, requestBytes: 9, responseBytes: 12),
        HandledRequest(
            id: "a.b_c:9", status: .commandFailed, exitCode: 255, ranCommand: false, fromJournal: true, requestBytes: 0,
            responseBytes: 70_000, note: "exit 255 \"quoted\""),
        HandledRequest(id: "-", status: .outcomeUnknown, exitCode: 0, ranCommand: false, fromJournal: true, requestBytes: 1, responseBytes: 0),
    ])
    func matchesJSONEncoder(_ request: HandledRequest) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let reference = Reference(
            id: request.id, status: request.status.description, exitCode: request.exitCode, ranCommand: request.ranCommand,
            fromJournal: request.fromJournal, requestBytes: request.requestBytes, responseBytes: request.responseBytes)
        #expect(request.jsonLine == String(decoding: try encoder.encode(reference), as: UTF8.self))
    }
}
