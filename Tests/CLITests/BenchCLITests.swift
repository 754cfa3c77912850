import Foundation
import Testing

/// `msgpipe bench --link sim --json`: the fields machines read, determinism, exit codes.
@Suite("msgpipe bench")
struct BenchCLITests {
    static let fastLink = ["--phy", "2m", "--ll-payload", "251", "--mtu", "247", "--interval-ms", "7.5"]

    private func bench(_ arguments: [String]) throws -> (status: Int32, report: [String: Any], stdout: String) {
        let result = try MsgPipeProcess.run(["bench", "--link", "sim", "--json"] + arguments)
        let text = String(decoding: result.stdout, as: UTF8.self)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
        return (result.status, object ?? [:], text)
    }

    @Test("--json prints one object with the documented fields; a fault-free fast link is near its limit")
    func jsonFields() throws {
        let (status, report, text) = try bench(Self.fastLink + ["--size", "65536", "--messages", "2"])
        #expect(status == 0)
        #expect(text.split(separator: "\n").count == 1)
        for key in ["messages_sent", "messages_delivered", "messages_lost", "messages_duplicated",
                    "messages_corrupted", "payload_bytes", "seconds", "goodput_kbps", "limit_kbps", "efficiency"] {
            #expect(report[key] != nil, "missing \(key)")
        }
        #expect(report["messages_sent"] as? Int == 2)
        #expect(report["messages_delivered"] as? Int == 2)
        #expect(report["payload_bytes"] as? Int == 131_072)
        let efficiency = try #require(report["efficiency"] as? Double)
        #expect(efficiency >= 0.9 && efficiency <= 1)
    }

    @Test("the fault mix delivers every message exactly once, and the same seed gives the same report")
    func faultsDeterministic() throws {
        let arguments = Self.fastLink + ["--size", "20000", "--messages", "3", "--loss", "0.05", "--duplicate", "0.02",
                                         "--reorder", "0.02", "--corrupt", "0.01", "--seed", "9"]
        let first = try bench(arguments)
        let second = try bench(arguments)
        #expect(first.status == 0)
        #expect(first.report["messages_delivered"] as? Int == 3)
        #expect(first.report["messages_lost"] as? Int == 0)
        #expect(first.report["messages_duplicated"] as? Int == 0)
        #expect(first.report["messages_corrupted"] as? Int == 0)
        #expect(first.stdout == second.stdout)
        let other = try bench(Self.fastLink + ["--size", "20000", "--messages", "3", "--loss", "0.05", "--seed", "10"])
        #expect(other.stdout != first.stdout)
    }

    @Test("an impossible configuration is a usage error (64) naming the option", arguments: [
        ["--mtu", "5"], ["--phy", "3m"], ["--interval-ms", "-1"], ["--ll-payload", "300"],
    ])
    func invalid(arguments: [String]) throws {
        let result = try MsgPipeProcess.run(["bench", "--link", "sim"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("Error:"))
    }
}
