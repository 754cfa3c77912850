import Framing
import MemoryLinks
import Testing
@testable import Secure

/// The authorized-keys text format: line vectors both ways and every kind of bad line.
@Suite("authorized keys file format")
struct AuthorizedKeysTests {
    static let keyA = "msgpipe-x25519-public:675dd574ed7789310b3d2e7681f3790b466c773b1521fecf36577958371ea52f"
    static let keyB = "493e82fc74464a59268817623d2053c5eb8e2cc4a988b4fee179ec6b010d531d"

    @Test("keys, names, comments, blank lines, tabs and CRLF parse in file order")
    func parses() throws {
        let text = "# phones\n\n  \(Self.keyA)   till-1\r\n\t# old one removed\n\(Self.keyB)\tbob@shop.example_2-b\n"
        let keys = try AuthorizedKeys(parsing: text)
        #expect(keys.entries.map(\.name) == ["till-1", "bob@shop.example_2-b"])
        #expect(keys.entries.map(\.key.text) == [Self.keyA, "msgpipe-x25519-public:" + Self.keyB])
        #expect(keys.entry(for: try PeerPublicKey(text: Self.keyB))?.name == "bob@shop.example_2-b")
        #expect(!keys.contains(IdentityKey().publicKey))
    }

    @Test("an empty file, only comments, or no final newline")
    func edges() throws {
        #expect(try AuthorizedKeys(parsing: "").entries.isEmpty)
        #expect(try AuthorizedKeys(parsing: "# nothing\n\n   \n#").entries.isEmpty)
        #expect(try AuthorizedKeys(parsing: "\(Self.keyA) a").entries.count == 1)
        #expect(try AuthorizedKeys(parsing: Array("\(Self.keyA) a\n".utf8)) == AuthorizedKeys(parsing: "\(Self.keyA) a"))
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        let text: String
        let error: AuthorizedKeysError
        var testDescription: String { "\(error)" }
    }

    static let bad: [Bad] = [
        Bad(text: "\(keyA)\n", error: .badLine(line: 1, reason: "expected a key and a name, found 1 fields")),
        Bad(text: "# c\n\(keyA) a b\n", error: .badLine(line: 2, reason: "expected a key and a name, found 3 fields")),
        Bad(text: "\n\n\(keyA.dropLast()) a\n", error: .badLine(
            line: 3, reason: "invalid key: 'msgpipe-x25519-public' key must be 64 hex digits (32 bytes)")),
        Bad(text: "\(keyA)0 a", error: .badLine(
            line: 1, reason: "invalid key: 'msgpipe-x25519-public' key must be 64 hex digits (32 bytes)")),
        Bad(text: "msgpipe-psk:\(keyB) a", error: .badLine(
            line: 1, reason: "invalid key: expected one line 'msgpipe-x25519-public:' followed by 64 hex digits")),
        Bad(text: "\(keyA) till/1", error: .badLine(
            line: 1, reason: "the name 'till/1' must be 1 to 64 of A-Z a-z 0-9 . _ - @, not starting with '.'")),
        Bad(text: "\(keyA) \(String(repeating: "n", count: 65))", error: .badLine(
            line: 1, reason: "the name '\(String(repeating: "n", count: 65))' must be 1 to 64 of A-Z a-z 0-9 . _ - @, not starting with '.'")),
        Bad(text: "\(keyA) ..", error: .badLine(
            line: 1, reason: "the name '..' must be 1 to 64 of A-Z a-z 0-9 . _ - @, not starting with '.'")),
        Bad(text: "\(keyA) caf\u{e9}", error: .badLine(line: 1, reason: "byte 0xc3 is not printable ASCII")),
        Bad(text: "\(keyA) a\0", error: .badLine(line: 1, reason: "byte 0x0 is not printable ASCII")),
        Bad(text: "\(keyA) a\n# x\n\(keyB) b\n\(keyA) c\n", error: .duplicateKey(line: 4, firstLine: 1)),
        Bad(text: "\(keyA) a\n\(keyB) a\n", error: .duplicateName("a", line: 2, firstLine: 1)),
        Bad(text: "\(keyA) a\n" + String(repeating: "#", count: 1025), error: .badLine(
            line: 2, reason: "longer than 1024 bytes")),
    ]

    @Test("a bad line is an error naming its line; a duplicate names both lines", arguments: bad)
    func refuses(_ bad: Bad) {
        #expect(throws: bad.error) { try AuthorizedKeys(parsing: bad.text) }
    }

    @Test("the errors read as the CLI prints them")
    func descriptions() {
        #expect("\(AuthorizedKeysError.duplicateKey(line: 4, firstLine: 1))" == "line 4: the key of line 1 again")
        #expect("\(AuthorizedKeysError.duplicateName("a", line: 2, firstLine: 1))"
            == "line 2: the name 'a' of line 1 again")
    }

    @Test("arbitrary bytes parse or throw, and what parses prints back to the same set")
    func arbitraryBytes() throws {
        var generator = SplitMix64(seed: 30)
        let alphabet = Array("0123456789abcdef msgpipe-x25519-public:\t\n\r#a@".utf8) + [0, 0xFF]
        for _ in 0..<2000 {
            let count = Int.random(in: 0..<300, using: &generator)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
            guard let keys = try? AuthorizedKeys(parsing: bytes) else { continue }
            let printed = keys.entries.map { "\($0.key.text) \($0.name!)" }.joined(separator: "\n")
            #expect(try AuthorizedKeys(parsing: printed) == keys)
        }
    }

    @Test("revoked(by:) lists the entries the new set no longer accepts")
    func revoked() throws {
        let old = try AuthorizedKeys(parsing: "\(Self.keyA) a\n\(Self.keyB) b\n")
        let new = try AuthorizedKeys(parsing: "\(Self.keyB) renamed\n")
        #expect(old.revoked(by: new).map(\.name) == ["a"])
        #expect(new.revoked(by: old).isEmpty)
    }
}

