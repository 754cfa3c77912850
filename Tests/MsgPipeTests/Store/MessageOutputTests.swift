import Foundation
import MsgPipe
import Synchronization
import Testing

/// A message output: raw bytes, caller-formatted lines, or a file each in a folder per peer and key name.
@Suite struct MessageOutputTests {
    private static func item(_ body: [UInt8], peer: String? = nil, sender: AuthorizedKeys.Entry? = nil, folder: String? = nil)
        -> MessageOutput.Item {
        MessageOutput.Item(body: body, messageID: 1, connection: 1, peer: peer, sender: sender, folder: folder)
    }

    @Test func aStreamWritesTheBytesAndANewlineOnlyWhenAsked() throws {
        let (path, descriptor) = try openedFile()
        defer { close(descriptor) }
        let raw = try MessageOutput(.stream(newline: false), descriptor: descriptor)
        #expect(try raw.write([Self.item([1, 2]), Self.item([3])]) == ["", ""])
        let lines = try MessageOutput(.stream(newline: true), descriptor: descriptor)
        _ = try lines.write([Self.item(Array("a".utf8))])
        #expect(try read(path) == [1, 2, 3] + Array("a\n".utf8))
        #expect(raw.directoryPath == nil)
    }

    @Test func linesAreNumberedAcrossBatchesAndKeptCounted() throws {
        let (path, descriptor) = try openedFile()
        defer { close(descriptor) }
        let kept = Mutex<[Int]>([])
        let output = try MessageOutput(.lines { item, index in "\(index) \(item.peer ?? "-") \(item.body.count)" },
                                       descriptor: descriptor, onKept: { count in kept.withLock { $0.append(count) } })
        try output.publish(try output.write([Self.item([1], peer: "a"), Self.item([1, 2])]))
        try output.publish(try output.write([Self.item([], peer: "b")]))
        #expect(String(decoding: try read(path), as: UTF8.self) == "1 a 1\n2 - 2\n3 b 0\n")
        #expect(kept.withLock { $0 } == [2, 3])
    }

    @Test func aDirectoryFilesEachMessageUnderItsFolderThenItsKeyName() throws {
        let directory = try temporaryDirectory() + "/inbox"
        let output = try MessageOutput(.directory(directory))
        #expect(output.directoryPath == directory)
        let key = try PeerPublicKey(text: String(repeating: "11", count: 32))
        let named = AuthorizedKeys.Entry(name: "till", key: key)
        let names = try output.write([
            Self.item([1]), Self.item([2], folder: "door"), Self.item([3], sender: named),
            Self.item([4], sender: AuthorizedKeys.Entry(name: nil, key: key), folder: "hall"),
        ])
        try output.publish(names)
        let entries = try FileManager.default.subpathsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }
        let files = Set(entries.filter { path in try! Self.isFile(directory + "/" + path) })
        #expect(files.count == 4)
        #expect(files.contains { $0.hasPrefix("door/") && !$0.dropFirst(5).contains("/") })
        #expect(files.contains { $0.hasPrefix("till/") })
        #expect(files.contains { $0.hasPrefix("hall/") && !$0.dropFirst(5).contains("/") }, "an unnamed key adds no folder")
        #expect(files.contains { !$0.contains("/") })
    }

    @Test func aTemporaryDirectoryIsNewAndPrivate() throws {
        let prefix = try temporaryDirectory() + "/state-"
        let first = try MessageDirectory.makeTemporaryDirectory(prefix: prefix)
        let second = try MessageDirectory.makeTemporaryDirectory(prefix: prefix)
        #expect(first.hasPrefix(prefix) && first.count == prefix.count + 6 && first != second)
        let mode = try FileManager.default.attributesOfItem(atPath: first)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        #expect {
            _ = try MessageDirectory.makeTemporaryDirectory(prefix: "/nonexistent/msgpipe-")
        } throws: { error in
            (error as? InboxError)?.description.hasPrefix("cannot create a state directory: ") == true
        }
    }

    private static func isFile(_ path: String) throws -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }
}
