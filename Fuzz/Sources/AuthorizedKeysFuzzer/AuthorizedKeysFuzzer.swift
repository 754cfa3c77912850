import FuzzSupport
import Secure

/// The authorized-keys parser (`AuthorizedKeys(parsing:)`) fed a file's bytes as they are: it returns a set
/// or throws a typed error naming a line of the input, never traps. A set it returns has unique keys and
/// names that are 1...64 bytes of the name alphabet, every key is found by `entry(for:)`, and the set printed
/// back as `KEY NAME` lines parses to the same set.
enum AuthorizedKeysFuzzTarget {
    static func run(_ input: [UInt8]) {
        let lines = input.count(where: { $0 == 0x0A }) + 1
        let keys: AuthorizedKeys
        do {
            keys = try AuthorizedKeys(parsing: input)
        } catch {
            switch error {
            case let .badLine(line, _):
                require((1...lines).contains(line), "bad line \(line) of \(lines)")
            case let .duplicateKey(line, first), let .duplicateName(_, line, first):
                require(1 <= first && first < line && line <= lines, "duplicate lines \(first), \(line) of \(lines)")
            }
            return
        }
        var printed = ""
        for entry in keys.entries {
            guard let name = entry.name else { return require(false, "an entry without a name") }
            require((1...AuthorizedKeys.maximumNameLength).contains(name.utf8.count), "name of \(name.utf8.count) bytes")
            require(!name.hasPrefix("."), "a name starting with a dot")
            require(keys.entry(for: entry.key) == entry, "a key not found by entry(for:)")
            printed += "\(entry.key.text) \(name)\n"
        }
        require(Set(keys.entries.map(\.key.bytes)).count == keys.entries.count, "a duplicate key")
        require((try? AuthorizedKeys(parsing: printed)) == keys, "the printed set parses differently")
    }

    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let a = "msgpipe-x25519-public:675dd574ed7789310b3d2e7681f3790b466c773b1521fecf36577958371ea52f"
        let b = "493e82fc74464a59268817623d2053c5eb8e2cc4a988b4fee179ec6b010d531d"
        return [
            ("two", Array("# phones\n\(a) till-1\r\n\n\t\(b)\tbob@shop\n".utf8)),
            ("duplicate-key", Array("\(a) x\n\(a) y\n".utf8)),
            ("duplicate-name", Array("\(a) x\n\(b) x\n".utf8)),
            ("bad", Array("\(a)\n\(b) a b\n".utf8)),
        ]
    }
}

@main
struct AuthorizedKeysFuzzer {
    static func main() {
        FuzzDriver.run(name: "AuthorizedKeysFuzzer", seeds: AuthorizedKeysFuzzTarget.seeds, target: AuthorizedKeysFuzzTarget.run)
    }
}
