import Foundation
import TestSupport
import Testing

/// The CLI only parses, calls the library and prints: Sources/MsgPipeCLI imports no module of this package but
/// MsgPipe, MsgPipeMQTT, MsgPipeStore and Simulator. The files that still reach past the library are listed here
/// and may only shrink: a new file, or a new module in a listed file, fails.
@Suite struct CLIImportsTests {
    /// MsgPipeStore is a library product of its own (the durable inbox and outbox), as MsgPipeMQTT is.
    static let allowed: Set<String> = ["MsgPipe", "MsgPipeMQTT", "MsgPipeStore", "Simulator"]
    /// Still reaching past the library (a C bridge: the version stamp): file -> modules.
    static let exceptions: [String: Set<String>] = ["BuildInfo.swift": ["CBuildInfo"]]

    @Test("Sources/MsgPipeCLI imports no module of ours but MsgPipe, MsgPipeMQTT, MsgPipeStore and Simulator (listed exceptions only shrink)")
    func importsOnlyTheLibrary() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let ours = Set(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path))
        let cli = root.appendingPathComponent("Sources/MsgPipeCLI")
        var found: [String: Set<String>] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: cli.path) where name.hasSuffix(".swift") {
            let text = try String(contentsOf: cli.appendingPathComponent(name), encoding: .utf8)
            for module in importedModules(in: text) where ours.contains(module) && !Self.allowed.contains(module) {
                found[name, default: []].insert(module)
            }
        }
        for (file, modules) in found.sorted(by: { $0.key < $1.key }) {
            let extra = modules.subtracting(Self.exceptions[file] ?? [])
            #expect(extra.isEmpty, "Sources/MsgPipeCLI/\(file) imports \(extra.sorted()): reach it through MsgPipe")
        }
        let gone = Self.exceptions.filter { found[$0.key] != $0.value }.map(\.key).sorted()
        #expect(gone.isEmpty, "no longer reaching past the library, take them off the list: \(gone)")
    }
}
