import Foundation
@testable import MsgPipe
import Testing

/// A message stream: each batch written whole and in order to its descriptor; synced only where it is a file.
@Suite struct MessageStreamTests {
    @Test func aBatchIsWrittenInOrderToAFileAndSynced() throws {
        let (path, descriptor) = try openedFile()
        defer { close(descriptor) }
        let stream = MessageStream(descriptor: descriptor)
        #expect(stream.syncs, "a regular file is synced")
        #expect(try stream.write([[1, 2], [], [3]]) == ["", "", ""])
        #expect(try stream.write([[4]]) == [""])
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == [1, 2, 3, 4])
        try stream.publish([""])
        try stream.recover(publishing: ["x"])
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == [1, 2, 3, 4], "nothing named, nothing moved")
    }

    @Test func aPipeIsWrittenButNotSynced() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let stream = MessageStream(descriptor: ends[1])
        #expect(!stream.syncs)
        _ = try stream.write([Array("hi\n".utf8)])
        close(ends[1])
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = read(ends[0], &buffer, buffer.count)
        #expect(Array(buffer.prefix(max(count, 0))) == Array("hi\n".utf8))
    }

    @Test func aFailedWriteIsAnIOErrorSayingSo() {
        let stream = MessageStream(descriptor: -1)
        #expect {
            _ = try stream.write([[1]])
        } throws: { error in
            guard case let .io(why)? = error as? InboxError else { return false }
            return why.hasPrefix("cannot write output: ")
        }
    }
}
