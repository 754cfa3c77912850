import Foundation
import TestSupport
import Testing

/// MsgPipeCore, the connection library without a backend, builds without Linux: none of its files, nor a file
/// of a module of ours it imports (directly or through another: Exchange, Secure, Transport, ...), imports the
/// Linux backend, the OS, Foundation or a C library of the OS. A backend, and ExchangePosix (the journal file,
/// commands and key files), are modules beside it.
@Suite struct CoreImportsTests {
    static let forbidden: Set<String> = [
        "BLELink", "BlueZLink", "SDBus", "PollThread", "Glibc", "Foundation", "Dispatch", "CBluetooth", "CSystemd",
        "CSDBusShim", "CFileSync", "MsgPipe", "ExchangePosix",
    ]

    @Test("MsgPipeCore, BluetoothCore and every module of ours they import import no backend, no Glibc, no Foundation")
    func coreImportsNoOperatingSystem() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        var pending = ["MsgPipeCore", "BluetoothCore"]
        var reached: Set<String> = Set(pending)
        var checked = 0
        while let module = pending.popLast() {
            let folder = sources.appendingPathComponent(module)
            let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
            for name in files where name.hasSuffix(".swift") {
                checked += 1
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                for imported in importedModules(in: text) {
                    #expect(!Self.forbidden.contains(imported), "Sources/\(module)/\(name) imports \(imported)")
                    let isOurs = FileManager.default.fileExists(atPath: sources.appendingPathComponent(imported).path)
                    if isOurs, !Self.forbidden.contains(imported), reached.insert(imported).inserted {
                        pending.append(imported)
                    }
                }
            }
        }
        #expect(reached.isSuperset(of: ["Exchange", "Secure", "Transport", "Framing", "Backpressure", "GATT"]))
        #expect(checked > 100, "the scan found the modules' files")
    }
}
