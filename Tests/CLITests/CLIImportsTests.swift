import Foundation
import TestSupport
import Testing

/// The CLI only parses, calls the library and prints: Sources/MsgPipeCLI imports no module of this package but
/// MsgPipe, MsgPipeMQTT and Simulator (for `bench --link sim`), and the CLI target declares no other module of ours.
@Suite struct CLIImportsTests {
    static let allowed: Set<String> = ["MsgPipe", "MsgPipeMQTT", "Simulator"]
    @Test("Sources/MsgPipeCLI imports no module of ours but MsgPipe, MsgPipeMQTT and Simulator")
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
            Issue.record("Sources/MsgPipeCLI/\(file) imports \(modules.sorted()): reach it through MsgPipe")
        }
        // Package.swift: the MsgPipeCLI target's dependencies of ours are the allowed ones.
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = try #require(manifest.range(of: "name: \"MsgPipeCLI\"").map { manifest[$0.upperBound...] })
        let dependencies = try #require(target.range(of: "],").map { target[..<$0.lowerBound] })
        let declared = Set(dependencies.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init))
        #expect(declared.intersection(ours).subtracting(Self.allowed).isEmpty,
            "the MsgPipeCLI target depends on \(declared.intersection(ours).subtracting(Self.allowed).sorted())")
    }
}
