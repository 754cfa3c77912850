import Foundation
import Testing

/// The `--json` lines of `send`, `request` and `serve`: field names and JSON types, one object per line.
@Suite("msgpipe --json lines of send, request and serve")
struct JSONOutputCLITests {
    static func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "not an object: \($0)")
        }
    }

    @Test("send --json prints one line per acknowledged message: index, file, bytes, seconds")
    func sendLines() throws {
        let scratch = try ListenSendCLITests.Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--connections", "1"])
        let path = try scratch.file("in", Array("abc".utf8))
        let sent = try scratch.send(["--json", path], input: [])
        #expect(sent.status == 0, "\(sent.stderr)")
        _ = listener.finish()
        let text = String(decoding: sent.stdout, as: UTF8.self)
        #expect(!text.contains("\\/"), "slashes in paths stay as they are: \(text)")
        let lines = try Self.objects(text)
        #expect(lines.count == 1)
        #expect(lines.first?["index"] as? Int == 1)
        #expect(lines.first?["file"] as? String == path)
        #expect(lines.first?["bytes"] as? Int == 3)
        #expect(lines.first?["seconds"] is NSNumber)
        #expect(Set(lines.first?.keys.map { $0 } ?? []) == ["index", "file", "bytes", "seconds"])
    }

    @Test("request --json and serve --json: the response object and the server's request event")
    func requestAndServeLines() throws {
        let scratch = try ListenSendCLITests.Scratch()
        defer { scratch.remove() }
        let key = scratch.directory.appendingPathComponent("key").path
        #expect(try MsgPipeProcess.run(["keygen", "--out", key]).status == 0)
        let server = try ServeProcess(scratch.link + ["--key-file", key, "--exec", "printf 'a \"quoted\" answer'", "--json"])
        let answer = try MsgPipeProcess.run(
            ["request"] + scratch.link + ["--key-file", key, "--timeout", "10", "--id", "order-1", "--json"],
            input: Array("ping".utf8))
        #expect(answer.status == 0, "\(answer.stderr)")
        let response = try #require(try Self.objects(String(decoding: answer.stdout, as: UTF8.self)).first)
        #expect(Set(response.keys) == ["id", "status", "exitCode", "body", "exit"])
        #expect(response["id"] as? String == "order-1")
        #expect(response["status"] as? String == "ok")
        #expect(response["exitCode"] as? Int == 0)
        #expect(response["body"] as? String == "a \"quoted\" answer")
        #expect(response["exit"] as? Int == 0)
        let output = server.stop()
        let events = try Self.objects(output.stdout)
        let request = try #require(events.first { $0["event"] as? String == "request" }, "\(output.stdout)")
        #expect(Set(request.keys) == [
            "event", "id", "status", "exitCode", "ranCommand", "fromJournal", "requestBytes", "responseBytes",
        ])
        #expect(request["id"] as? String == "order-1")
        #expect(request["ranCommand"] as? Bool == true)
        #expect(request["fromJournal"] as? Bool == false)
        #expect(request["requestBytes"] is NSNumber && request["responseBytes"] is NSNumber)
    }

    @Test("request --json without a server prints id, error and exit")
    func requestFailureLine() throws {
        let scratch = try ListenSendCLITests.Scratch()
        defer { scratch.remove() }
        let key = scratch.directory.appendingPathComponent("key").path
        #expect(try MsgPipeProcess.run(["keygen", "--out", key]).status == 0)
        let failed = try MsgPipeProcess.run(
            ["request"] + scratch.link + ["--key-file", key, "--timeout", "2", "--id", "x", "--json"], input: [1])
        #expect(failed.status != 0)
        let line = try #require(try Self.objects(String(decoding: failed.stdout, as: UTF8.self)).first, "\(failed.stderr)")
        #expect(Set(line.keys) == ["id", "error", "exit"])
        #expect(line["id"] as? String == "x")
        #expect(line["error"] is String)
        #expect(line["exit"] as? Int == Int(failed.status))
    }
}
