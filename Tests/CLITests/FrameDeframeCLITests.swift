import Foundation
import Testing
import TestSupport

/// Runs the built `msgpipe` binary (next to this test bundle in the build folder).
struct MsgPipeProcess {
    struct Result {
        let status: Int32
        let stdout: [UInt8]
        let stderr: String
    }

    static var binary: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("msgpipe")
    }

    /// The options only the lab tool takes (fault injection); `msgpipe` itself refuses them.
    static let labOptions: Set<String> = ["--kill-after-bytes", "--drop-after-bytes", "--inject", "--kill-after-kept"]

    /// `msgpipe`, or `msgpipe-lab` when `arguments` inject a fault.
    static func binary(for arguments: [String]) -> URL {
        guard arguments.contains(where: labOptions.contains) else { return binary }
        return binary.deletingLastPathComponent().appendingPathComponent("msgpipe-lab")
    }

    /// Runs `msgpipe arguments...` with `input` on standard input.
    static func run(_ arguments: [String], input: [UInt8] = []) throws -> Result {
        let process = Process()
        process.executableURL = binary(for: arguments)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Write and read concurrently so large inputs and outputs cannot fill a pipe and deadlock.
        let writer = Thread {
            feed(input, to: stdin)
        }
        writer.start()
        let errorData = ErrorCollector(stderr.fileHandleForReading)
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: [UInt8](out), stderr: errorData.text())
    }
}

/// Reads a pipe to its end on a thread of its own.
final class ErrorCollector: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }.start()
    }

    func text() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}

/// A deterministic payload.
func payload(_ count: Int, seed: UInt32 = 7) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}

@Suite("msgpipe frame and deframe")
struct FrameDeframeCLITests {
    @Test("frame prints the pinned legacy hex lines for hello at MTU 23")
    func framePinnedLegacy() throws {
        let result = try MsgPipeProcess.run(["frame", "--mtu", "23", "--format", "legacy"], input: Array("hello".utf8))
        #expect(result.status == 0)
        #expect(String(decoding: result.stdout, as: UTF8.self) == "537461727468656c6c6f\n456e64\n")
    }

    @Test("frame piped into deframe gives back the payload in every format", arguments: ["msgpipe", "legacy", "eom"])
    func roundTrip(format: String) throws {
        let data = payload(50_000) + Array("StartEndEOM".utf8)
        let framed = try MsgPipeProcess.run(["frame", "--mtu", "23", "--format", format], input: data)
        #expect(framed.status == 0)
        let deframed = try MsgPipeProcess.run(["deframe", "--format", format, "--mtu", "23"], input: framed.stdout)
        #expect(deframed.status == 0, "\(deframed.stderr)")
        expectSameBytes(deframed.stdout, data)
    }

    @Test("two frame outputs in a row deframe to both payloads, even with the same message id")
    func concatenated() throws {
        let first = try MsgPipeProcess.run(["frame", "--mtu", "23"], input: Array("first".utf8))
        let second = try MsgPipeProcess.run(["frame", "--mtu", "23"], input: Array("second".utf8))
        let deframed = try MsgPipeProcess.run(["deframe"], input: first.stdout + second.stdout)
        #expect(deframed.status == 0)
        #expect(deframed.stdout == Array("firstsecond".utf8))
    }

    @Test("lines round-trips text and frame refuses a payload with a newline, exit 5")
    func lines() throws {
        let framed = try MsgPipeProcess.run(["frame", "--mtu", "23", "--format", "lines"], input: Array("a line".utf8))
        let deframed = try MsgPipeProcess.run(["deframe", "--format", "lines"], input: framed.stdout)
        #expect(deframed.stdout == Array("a line".utf8))
        let refused = try MsgPipeProcess.run(["frame", "--mtu", "23", "--format", "lines"], input: Array("a\nb".utf8))
        #expect(refused.status == 5)
        #expect(refused.stderr.hasPrefix("msgpipe: the lines format cannot carry this payload"))
    }

    @Test("a corrupted packet gives exit 1 and one CRC mismatch line naming the message")
    func crcMismatch() throws {
        let framed = try MsgPipeProcess.run(["frame", "--mtu", "23", "--message-id", "7"], input: payload(100))
        var lines = String(decoding: framed.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        // Flip one body byte in the second packet (its last hex digit).
        let last = lines[1].removeLast()
        lines[1].append(last == "0" ? "1" : "0")
        let result = try MsgPipeProcess.run(["deframe"], input: Array(lines.joined(separator: "\n").utf8))
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("msgpipe: CRC mismatch in message 7"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test("bad hex gives exit 3 and names the line")
    func badHex() throws {
        let result = try MsgPipeProcess.run(["deframe"], input: Array("c0110102\nxyz\n".utf8))
        #expect(result.status == 3)
        #expect(result.stderr == "msgpipe: bad hex on input line 2\n")
    }

    @Test("input ending inside a message gives exit 2")
    func incomplete() throws {
        let framed = try MsgPipeProcess.run(["frame", "--mtu", "23", "--message-id", "9"], input: payload(100))
        let lines = String(decoding: framed.stdout, as: UTF8.self).split(separator: "\n")
        let firstTwo = lines.prefix(2).joined(separator: "\n")
        let result = try MsgPipeProcess.run(["deframe"], input: Array(firstTwo.utf8))
        #expect(result.status == 2)
        #expect(result.stderr == "msgpipe: input ended inside message 9 on channel 0 after 34 bytes\n")
    }

    @Test("a message over --max-message-size or a packet over --mtu gives exit 4")
    func overLimit() throws {
        let framed = try MsgPipeProcess.run(["frame", "--mtu", "100"], input: payload(1000))
        let tooLarge = try MsgPipeProcess.run(["deframe", "--max-message-size", "500"], input: framed.stdout)
        #expect(tooLarge.status == 4)
        #expect(tooLarge.stderr.hasPrefix("msgpipe: message 1 of 1000 bytes exceeds the maximum message size of 500"))
        let overMTU = try MsgPipeProcess.run(["deframe", "--mtu", "23"], input: framed.stdout)
        #expect(overMTU.status == 4)
        #expect(overMTU.stderr.hasPrefix("msgpipe: packet of 97 bytes exceeds the packet size of 20"))
    }

    @Test("frame and deframe read a FILE argument; a missing file gives exit 66")
    func fileArguments() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("msgpipe-cli-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let payloadFile = directory.appendingPathComponent("payload")
        let packetsFile = directory.appendingPathComponent("packets")
        try Data(payload(3000)).write(to: payloadFile)
        let framed = try MsgPipeProcess.run(["frame", "--mtu", "247", "--format", "eom", payloadFile.path])
        try Data(framed.stdout).write(to: packetsFile)
        let deframed = try MsgPipeProcess.run(["deframe", "--format", "eom", packetsFile.path])
        #expect(deframed.status == 0)
        expectSameBytes(deframed.stdout, payload(3000))
        let missing = try MsgPipeProcess.run(["deframe", directory.appendingPathComponent("none").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("msgpipe: cannot open"))
    }

    @Test("a legacy value outside a message is an integrity failure, exit 1")
    func legacyStray() throws {
        let result = try MsgPipeProcess.run(["deframe", "--format", "legacy"], input: Array("6869\n".utf8))
        #expect(result.status == 1)
        #expect(result.stderr == "msgpipe: legacy value of 2 bytes outside a message dropped on input line 1\n")
    }

    @Test("an MTU too small for the format is a usage error, exit 64")
    func mtuTooSmall() throws {
        let result = try MsgPipeProcess.run(["frame", "--mtu", "8", "--format", "legacy"], input: Array("x".utf8))
        #expect(result.status == 64)
        #expect(result.stderr.contains("too small for the legacy format"))
    }
}
