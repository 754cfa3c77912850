import Foundation
import Testing

/// `msgpipe bonds list|remove` on a bond directory written as a listening peripheral would (no radio: the
/// adapter is named by its address, and remove's Unpair Device finds no kernel and says so).
struct BondsCLITests {
    static let file = """
        msgpipe-bonds 1
        ltk 00:AA:01:01:00:01 public type=00 central=0 size=16 ediv=0000 rand=0000000000000000 value=000102030405060708090a0b0c0d0e0f
        ltk C0:11:22:33:44:55 random type=02 central=0 size=16 ediv=0000 rand=0000000000000000 value=101112131415161718191a1b1c1d1e1f
        irk C0:11:22:33:44:55 random value=202122232425262728292a2b2c2d2e2f

        """

    static func directory(with contents: String) throws -> String {
        let path = NSTemporaryDirectory() + "msgpipe-bonds-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try contents.write(toFile: path + "/00:AA:01:00:00:00.bonds", atomically: false, encoding: .utf8)
        return path
    }

    @Test func listPrintsOneLinePerBondedPeer() throws {
        let directory = try Self.directory(with: Self.file)
        let result = try MsgPipeProcess.run(["bonds", "list", "--bonds", directory])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self) == """
            00:AA:01:00:00:00  00:AA:01:01:00:01 public  ltk(unauthenticated legacy)
            00:AA:01:00:00:00  C0:11:22:33:44:55 random  ltk(unauthenticated P-256) irk

            """)
        let json = try MsgPipeProcess.run(["bonds", "list", "--bonds", directory, "--adapter", "00:AA:01:00:00:00", "--json"])
        #expect(String(decoding: json.stdout, as: UTF8.self).hasPrefix(
            #"{"adapter":"00:AA:01:00:00:00","address":"00:AA:01:01:00:01","keys":["ltk(unauthenticated legacy)"],"type":"public"}"#))
    }

    @Test func removeForgetsThePeerAndAnUnknownPeerExits1() throws {
        let directory = try Self.directory(with: Self.file)
        let removed = try MsgPipeProcess.run(["bonds", "remove", "C0:11:22:33:44:55", "--bonds", directory])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stderr.contains("removed the bond of C0:11:22:33:44:55"))
        let list = try MsgPipeProcess.run(["bonds", "list", "--bonds", directory])
        #expect(!String(decoding: list.stdout, as: UTF8.self).contains("C0:11:22:33:44:55"))
        let again = try MsgPipeProcess.run(["bonds", "remove", "C0:11:22:33:44:55", "--bonds", directory])
        #expect(again.status == 1)
        #expect(again.stderr.contains("no bond for C0:11:22:33:44:55"))
    }

    @Test func aCorruptFileExits2NamingItAndIsLeftAsItIs() throws {
        let corrupt = "msgpipe-bonds 1\nltk garbage\n"
        let directory = try Self.directory(with: corrupt)
        for arguments in [["bonds", "list"], ["bonds", "remove", "C0:11:22:33:44:55"]] {
            let result = try MsgPipeProcess.run(arguments + ["--bonds", directory])
            #expect(result.status == 2)
            #expect(result.stderr.contains("00:AA:01:00:00:00.bonds is corrupt (line 2"), "\(result.stderr)")
        }
        #expect(try String(contentsOfFile: directory + "/00:AA:01:00:00:00.bonds", encoding: .utf8) == corrupt)
    }
}
