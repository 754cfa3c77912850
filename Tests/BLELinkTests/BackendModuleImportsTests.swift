import Foundation
import TestSupport
import Testing

/// The backends stay modules of their own: the kernel's (BLELink) knows nothing of D-Bus or bluetoothd,
/// bluetoothd's (BlueZLink) nothing of the kernel backend, the socket base under both (BLESocket) neither
/// backend nor libbluetooth, the D-Bus glue (SDBus) nothing of Bluetooth, and the thread primitives under all of
/// them (PollThread) nothing but the OS.
@Suite struct BackendModuleImportsTests {
    /// Each module's folder, and the modules none of its files may import.
    static let forbidden: [(module: String, imports: Set<String>)] = [
        ("BLELink", ["SDBus", "BlueZLink", "CSystemd", "CSDBusShim", "MsgPipe", "MsgPipeCore"]),
        ("SDBus", ["BLELink", "BlueZLink", "CBluetooth", "BluetoothCore", "GATT", "Transport", "MsgPipe", "MsgPipeCore"]),
        ("PollThread", ["BLESocket", "BLELink", "BlueZLink", "SDBus", "CBluetooth", "CSystemd", "CSDBusShim", "GATT", "Transport"]),
        ("BlueZLink", ["BLELink", "CBluetooth", "CSystemd", "CSDBusShim", "MsgPipe", "MsgPipeCore"]),
        ("BLESocket", ["BLELink", "BlueZLink", "SDBus", "CBluetooth", "CSystemd", "CSDBusShim", "MsgPipe", "MsgPipeCore"]),
    ]

    static var sources: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
    }

    /// The Swift files of `module` with their text.
    static func files(of module: String) throws -> [(name: String, text: String)] {
        let folder = sources.appendingPathComponent(module)
        let names = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        return try names.filter { $0.hasSuffix(".swift") }.sorted().map { name in
            (name, try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
        }
    }

    @Test("no backend imports the other, BLESocket neither, SDBus and PollThread no Bluetooth module")
    func backendsImportOnlyWhatTheyMayUse() throws {
        for (module, imports) in Self.forbidden {
            let files = try Self.files(of: module)
            #expect(!files.isEmpty, "Sources/\(module) has Swift files")
            for (name, text) in files {
                for imported in importedModules(in: text) {
                    #expect(!imports.contains(imported), "Sources/\(module)/\(name) imports \(imported)")
                }
            }
        }
    }

    @Test("SDBus's code names no bluetoothd interface: bluetoothd's API lives in BlueZLink")
    func dbusGlueKnowsNoBlueZ() throws {
        for (name, text) in try Self.files(of: "SDBus") {
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            for line in code {
                #expect(!line.lowercased().contains("bluez"), "Sources/SDBus/\(name): \(line)")
            }
        }
    }
}
