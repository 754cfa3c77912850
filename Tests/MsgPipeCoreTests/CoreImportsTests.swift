import Foundation
import TestSupport
import Testing

/// MsgPipeCore, the connection library without a backend, builds without Linux: none of its files imports the
/// Linux backend, the OS, Foundation or a C library of the OS. A backend is a module beside it.
@Suite struct CoreImportsTests {
    static let forbidden: Set<String> = ["BLELink", "Glibc", "Foundation", "CBluetooth", "CSystemd", "CSDBusShim", "MsgPipe"]

    @Test("Sources/MsgPipeCore and Sources/BluetoothCore import no backend, no Glibc, no Foundation, no OS C library")
    func coreImportsNoOperatingSystem() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var checked = 0
        for module in ["MsgPipeCore", "BluetoothCore"] {
            let folder = root.appendingPathComponent("Sources/\(module)")
            let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
            for name in files where name.hasSuffix(".swift") {
                checked += 1
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                for imported in importedModules(in: text) {
                    #expect(!Self.forbidden.contains(imported), "Sources/\(module)/\(name) imports \(imported)")
                }
            }
        }
        #expect(checked > 20, "the scan found the modules' files")
    }
}
