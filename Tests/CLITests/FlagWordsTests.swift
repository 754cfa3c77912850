@testable import BLELink
import BlueZLink
import Foundation
import MsgPipe
@testable import MsgPipeCLI
import Testing

/// The library's errors and notes name settings, never a CLI flag; `msgpipe` prints the flag that sets each.
/// Every entry of ``FlagWords/table`` is matched to a library text it rewrites, so rewording either side fails.
struct FlagWordsTests {
    /// Library texts, each with the CLI words it must become.
    static func samples() throws -> [(library: String, cli: String)] {
        let parameters = try ConnectionParameterRequest(interval: "7.5-15", latency: nil, supervisionTimeout: nil, phy: "2m")
        var policy = PairingPolicy(adapterIndex: 0, bonds: nil)
        let authFailed: [UInt8] = [0x11, 0x00, 0x00, 0x00, 0x08, 0x00, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x02, 0x06]
        let pairingWarning = policy.handle(try ManagementEvent(decoding: authFailed[...])).compactMap { action in
            if case let .note(note) = action { note.description } else { nil }
        }.first ?? ""
        return [
            ("\(BlueZError.notRunning)", "or use --backend kernel with bluetoothd stopped"),
            ("\(BlueZError.severalCentralsUnsupported(version: nil, centrals: 2))", "stop bluetoothd and use --backend kernel"),
            ("\(BlueZError.adapterNotFound("hci1"))", "check `bluetoothctl list` and --adapter"),
            ("\(BlueZError.serviceNotFound(uuid: "FFF0", device: "AA"))", "has no GATT service FFF0: check --profile"),
            ("\(BlueZError.characteristicNotFound(uuid: "FFF1", service: "FFF0"))", "without write / notify): check --profile"),
            ("\(MessagePipeError.connectionParametersThroughBluetoothd(parameters))", "or use --backend kernel (with bluetoothd stopped)"),
            ("\(MessagePipeError.connectionParametersThroughBluetoothd(parameters))", "a PHY preference needs --backend kernel"),
            ("\(MessagePipeError.formatMismatch(.lines))", "the peer does not speak --format lines"),
            (BluetoothdAcceptor.intervalAdvice, "; --backend kernel with CAP_NET_ADMIN keeps the central's interval"),
            (BluetoothdConfiguration.eattNote(version: nil, unnumbered: true, eattOff: false) ?? "", "or use --format msgpipe"),
            ("\(BluetoothError.peerNotFound(query: "kiosk", timeout: .seconds(5)))", "(msgpipe scan) or pass its address with --to"),
            (pairingWarning, "(msgpipe keeps bonds across restarts with --bonds DIR)"),
            ("\(ExchangeError.journalInUse(path: "/var/lib/x"))", "in use by another msgpipe serve; stop that one, or give this one another --state directory"),
            ("\(GATTProfileError.unknownName("foo"))", "--profile must be msgpipe, nus or custom:SERVICE:WRITE:NOTIFY, not 'foo'"),
            ("\(GATTProfileError.customFieldCount(2))", "--profile custom: needs three UUIDs"),
            ("\(GATTProfileError.invalidUUID(role: "WRITE", "zz"))", "--profile custom: WRITE 'zz' is not"),
            ("\(GATTProfileError.repeatedUUID)", "--profile custom: SERVICE, WRITE and NOTIFY must be"),
        ]
    }

    @Test("a library error or note names no CLI flag; msgpipe prints the flag that sets it")
    func libraryWordsBecomeFlags() throws {
        for (library, cli) in try Self.samples() {
            #expect(!library.contains("--"), "a library text names a flag: \(library)")
            #expect(FlagWords.flagged(library).contains(cli), "\(FlagWords.flagged(library)) lacks \(cli)")
        }
    }

    @Test("every phrase of the table is one a library text says")
    func everyPhraseIsUsed() throws {
        let texts = try Self.samples().map(\.library)
        for (phrase, _) in FlagWords.table {
            #expect(texts.contains { $0.contains(phrase) }, "no library text says '\(phrase)'")
        }
    }

    @Test("a text without a library phrase prints as it is")
    func otherTextsStay() {
        let text = "cannot listen on unix:/tmp/x: another listener is running there"
        #expect(FlagWords.flagged(text) == text)
    }

    /// Library modules: their code (comments aside) writes no `--option`; another tool's flags in a remedy
    /// (`btmgmt --index`) and bluetoothd's `--version` are the only ones.
    @Test("no library module's code writes a command-line flag")
    func librarySourcesWriteNoFlag() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let modules = ["BLELink", "BLESocket", "BlueZLink", "BluetoothCore", "SDBus", "GATT", "MsgPipe", "MsgPipeCore",
                       "Exchange", "ExchangePosix", "Secure", "Transport", "Framing", "Backpressure", "MsgPipeMQTT",
                       "MemoryLinks", "Simulator"]
        let foreign = ["btmgmt --", "\"--version\""]
        var found: [String] = []
        for module in modules {
            let folder = root.appendingPathComponent("Sources/\(module)")
            guard let files = FileManager.default.enumerator(atPath: folder.path), FileManager.default.fileExists(atPath: folder.path) else {
                Issue.record("Sources/\(module) is missing: keep this list in step with Package.swift")
                continue
            }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    guard !code.hasPrefix("//"), code.contains(/--[a-z]/), !foreign.contains(where: code.contains) else { continue }
                    found.append("Sources/\(module)/\(file):\(number + 1): \(code)")
                }
            }
        }
        #expect(found.isEmpty, "name the setting, not the CLI's flag (FlagWords maps it):\n\(found.joined(separator: "\n"))")
    }
}
