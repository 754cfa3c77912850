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

    @Test("--bearer channel simulates an LE credit-based channel and reports GATT's limit on the same air beside its own")
    func channelBesideGATT() throws {
        let air = ["--phy", "1m", "--ll-payload", "27", "--mtu", "23", "--size", "65536"]
        let (status, report, _) = try bench(air + ["--bearer", "channel", "--channel-mps", "23"])
        #expect(status == 0)
        #expect(report["bearer"] as? String == "channel")
        #expect(report["messages_delivered"] as? Int == 1)
        let limit = try #require(report["limit_kbps"] as? Double)
        let gatt = try #require(report["gatt_limit_kbps"] as? Double)
        #expect(limit > 1.1 * gatt, "a channel whose K-frames fill 27-byte LL PDUs beats 20-byte ATT values")
        let bad = try MsgPipeProcess.run(["bench", "--link", "sim", "--bearer", "radio"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--bearer must be gatt or channel"), "\(bad.stderr)")
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

    @Test("--phy coded simulates LE Coded at S=8: every message arrives, near a limit a fifth of 1M's")
    func codedPHY() throws {
        let air = ["--ll-payload", "27", "--mtu", "23", "--interval-ms", "30", "--size", "4096"]
        let (status, report, _) = try bench(air + ["--phy", "coded"])
        #expect(status == 0)
        #expect(report["phy"] as? String == "coded")
        #expect(report["messages_delivered"] as? Int == 1)
        let limit = try #require(report["limit_kbps"] as? Double)
        let oneM = try #require(try bench(air + ["--phy", "1m"]).report["limit_kbps"] as? Double)
        #expect(limit > 0.15 * oneM && limit < 0.25 * oneM, "coded \(limit) kbit/s, 1M \(oneM) kbit/s")
        let efficiency = try #require(report["efficiency"] as? Double)
        #expect(efficiency > 0.5 && efficiency <= 1, "\(report)")
        let tooLong = try MsgPipeProcess.run(["bench", "--link", "sim", "--phy", "coded", "--ll-payload", "251", "--mtu", "247"])
        #expect(tooLong.status == 64, "\(tooLong.stderr)")
        #expect(tooLong.stderr.contains("does not fit into a"), "\(tooLong.stderr)")
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

/// `msgpipe bench --link unix:PATH` against a running `listen`: the full Transport, one or several centrals.
@Suite("msgpipe bench over a real link")
struct BenchRealLinkCLITests {
    typealias Scratch = ListenSendCLITests.Scratch

    @Test("bench --link unix:PATH sends every message intact to listen and reports it", arguments: [1, 2])
    func unixBench(centrals: Int) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--json", "--connections", "\(centrals)", "--max-centrals", "\(centrals)"])
        let result = try MsgPipeProcess.run(
            ["bench"] + scratch.link + ["--json", "--size", "100000", "--messages", "2", "--centrals", "\(centrals)"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == (centrals == 1 ? 1 : centrals + 1))
        let reports = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
        for report in reports {
            for key in ["messages_sent", "messages_delivered", "payload_bytes", "seconds", "goodput_kbps",
                        "limit_kbps", "efficiency", "mtu", "phy", "interval_ms", "ll_payload", "centrals", "completed"] {
                #expect(report[key] != nil, "missing \(key)")
            }
            #expect(report["completed"] as? Bool == true)
            #expect(report["mtu"] as? Int == 517)
            #expect(report["phy"] as? String == "unknown", "a UNIX socket has no PHY")
            #expect((report["limit_assumes"] as? String)?.hasPrefix("phy 2m, ") == true, "\(report)")
        }
        let total = try #require(reports.last)
        #expect(total["messages_delivered"] as? Int == 2 * centrals)
        #expect(total["payload_bytes"] as? Int == 200_000 * centrals)

        let heard = listener.finish()
        #expect(heard.status == 0, "\(heard.stderr)")
        let messages = try ListenSendCLITests.messages(heard.stdout)
        #expect(messages.count == 2 * centrals)
        #expect(messages.allSatisfy { $0.bytes == 100_000 && $0.body.count == 100_000 })
        // The simulator's message contents: the index in the first four bytes, little-endian.
        #expect(messages.filter { Array($0.body.prefix(4)) == [1, 0, 0, 0] }.count == centrals)
    }

    @Test("bench --role peripheral: serves on PATH and sends every message to each subscribed central", arguments: [1, 2])
    func unixBenchAsPeripheral(centrals: Int) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let bench = try RunningMsgPipe(
            ["bench", "--role", "peripheral", "--json", "--size", "100000", "--messages", "2", "--centrals", "\(centrals)"]
                + scratch.link)
        #expect(bench.waitForError(containing: "listening on unix:"), "no ready line: \(bench.stderrSoFar)")
        let listeners = try (0 ..< centrals).map { _ in
            try RunningMsgPipe(["listen", "--role", "central", "--json", "--count", "2"] + scratch.link)
        }
        for listener in listeners {
            let heard = listener.finish()
            #expect(heard.status == 0, "listen --role central: \(heard.stderr)")
            let messages = try ListenSendCLITests.messages(heard.stdout)
            #expect(messages.count == 2)
            #expect(messages.allSatisfy { $0.bytes == 100_000 && $0.body.count == 100_000 })
            // The simulator's message contents: the index in the first four bytes, little-endian, in order.
            #expect(messages.map { Array($0.body.prefix(4)) } == [[0, 0, 0, 0], [1, 0, 0, 0]])
        }
        let result = bench.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == (centrals == 1 ? 1 : centrals + 1))
        let reports = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
        for report in reports {
            #expect(report["direction"] as? String == "to_centrals")
            #expect(report["completed"] as? Bool == true)
            #expect(report["mtu"] as? Int == 517)
        }
        let peers = Set(reports.prefix(centrals).compactMap { $0["peer"] as? String })
        #expect(peers == Set((1 ... centrals).map { "unix:\(scratch.socket)#\($0)" }))
        let total = try #require(reports.last)
        #expect(total["messages_delivered"] as? Int == 2 * centrals)
        #expect(total["payload_bytes"] as? Int == 200_000 * centrals)
    }

    @Test("bench fails with exit 2, not 0, when nothing listens")
    func nothingListens() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try MsgPipeProcess.run(["bench"] + scratch.link + ["--size", "1000"])
        #expect(result.status == 2)
        // The socket's failed connect(2), said once: what, where, why.
        let line = try #require(result.stderr.split(separator: "\n").first { $0.contains("cannot connect") }, "\(result.stderr)")
        #expect(line.contains(scratch.socket) && line.contains("No such file or directory"), "\(line)")
        #expect(line.components(separatedBy: "cannot connect").count == 2, "\(line)")
    }

    @Test("invalid real-link options are usage errors (64)", arguments: [
        ["--link", "tcp:x"], ["--link", "unix:/tmp/x", "--centrals", "0"], ["--link", "unix:/tmp/x", "--size", "0"],
        ["--link", "unix:/tmp/x", "--to", "AA:BB:CC:DD:EE:FF"], ["--link", "sim", "--centrals", "17"],
        ["--to", "AA:BB:CC:DD:EE:FF", "--name", "x"], ["--name", "x", "--role", "central"],
        ["--link", "sim", "--peripherals", "8"], ["--link", "sim", "--peripherals", "0"],
        ["--link", "unix:/tmp/x", "--peripherals", "2"],
    ])
    func invalid(arguments: [String]) throws {
        let result = try MsgPipeProcess.run(["bench"] + arguments)
        #expect(result.status == 64, "\(result.stderr)")
    }

    @Test("bench --link sim --centrals 2: one line per link and the aggregate, not above one link's limit")
    func simulatedShared() throws {
        let arguments = ["bench", "--link", "sim", "--json", "--centrals", "2", "--size", "20000"] + BenchCLITests.fastLink
        let result = try MsgPipeProcess.run(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3)
        let total = try #require(try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any])
        #expect(total["link"] as? String == "all")
        #expect(total["payload_bytes"] as? Int == 40_000)
        let goodput = try #require(total["goodput_kbps"] as? Double)
        let limit = try #require(total["limit_kbps"] as? Double)
        #expect(goodput <= limit)
        #expect(try MsgPipeProcess.run(arguments).stdout == result.stdout)
    }

    @Test("bench --link sim --peripherals 3: per-link goodput, the aggregate against both limits, and fairness")
    func simulatedPeripherals() throws {
        let arguments = ["bench", "--link", "sim", "--json", "--peripherals", "3", "--size", "20000", "--interval-ms", "15"]
        let result = try MsgPipeProcess.run(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 4)
        let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        for (index, link) in objects.prefix(3).enumerated() {
            #expect(link["link"] as? Int == index)
            #expect(link["peripherals"] as? Int == 3)
            #expect(link["centrals"] == nil)
            #expect((link["goodput_kbps"] as? Double ?? 0) > 0)
        }
        let total = try #require(objects.last)
        #expect(total["link"] as? String == "all")
        #expect(total["payload_bytes"] as? Int == 60_000)
        let goodput = try #require(total["goodput_kbps"] as? Double)
        let limit = try #require(total["limit_kbps"] as? Double)
        let shared = try #require(total["shared_limit_kbps"] as? Double)
        #expect(shared <= limit)
        #expect(goodput <= shared)
        #expect(abs((total["efficiency"] as? Double ?? 0) - goodput / limit) < 0.001)
        #expect((total["shared_efficiency"] as? Double ?? 0) >= 0.9)
        #expect((total["jain_index"] as? Double ?? 0) > 0.99)
        #expect((total["max_deviation_pct"] as? Double ?? 100) < 10)
        #expect(try MsgPipeProcess.run(arguments).stdout == result.stdout)
    }

    @Test("--centrals and --peripherals together are refused with the reason")
    func centralsAndPeripheralsExcludeEachOther() throws {
        let result = try MsgPipeProcess.run(["bench", "--link", "sim", "--centrals", "1", "--peripherals", "2"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--centrals and --peripherals exclude each other"), "\(result.stderr)")
    }
}
