import Foundation
import Testing

/// README.md and docs/*.md against the CLI and the code: every `msgpipe` command line a doc shows names a
/// subcommand and options that `--help` lists, every option a doc names exists, every exit code and `--json`
/// field a doc names is one the code has, and every ```swift block is compiled (Examples/Snippets). The truth
/// is read from the binaries (`--experimental-dump-help`, `--help`, a `bench --json` run) and the sources,
/// never from a list kept here.
@Suite("docs match the CLI and the code")
struct DocsTests {
    // MARK: the docs

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// README.md and every docs/*.md, by path relative to the package.
    static let documents: [(path: String, text: String)] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        let paths = ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return paths.map { ($0, (try? String(contentsOf: root.appendingPathComponent($0), encoding: .utf8)) ?? "") }
    }()

    /// The text of every line of code a document shows: fenced and indented blocks, and inline code spans.
    static func codeLines(_ text: String) -> [(line: Int, code: String, inBlock: Bool)] {
        var result: [(Int, String, Bool)] = []
        var fence: String?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                fence = fence == nil ? String(trimmed.dropFirst(3)) : nil
                continue
            }
            if let fence {
                if fence != "swift" { result.append((index + 1, String(line), true)) }
                continue
            }
            if line.hasPrefix("    ") && !trimmed.hasPrefix("-") && !trimmed.hasPrefix("|") {
                result.append((index + 1, trimmed, true))
                continue
            }
            for span in inlineSpans(String(line)) { result.append((index + 1, span, false)) }
        }
        return result
    }

    /// The `code` spans of one line of Markdown.
    static func inlineSpans(_ line: String) -> [String] {
        line.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    // MARK: the truth, from the binaries and the sources

    /// A command of the tree `--experimental-dump-help` prints: its options and its subcommands.
    struct Command {
        var options: Set<String> = []
        var subcommands: [String: Command] = [:]
    }

    static func binary(_ name: String) -> URL {
        MsgPipeProcess.binary.deletingLastPathComponent().appendingPathComponent(name)
    }

    static func run(_ name: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = binary(name)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The command tree of `name` (msgpipe or msgpipe-lab), as its argument parser describes it. msgpipe-lab's
    /// fault-injection options, which it takes out of the arguments before parsing them (`takeOption("...")`
    /// in its sources), are counted as options of each of its commands.
    static func commandTree(_ name: String) throws -> Command {
        let json = try run(name, ["--experimental-dump-help"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var tree = command(try #require(object["command"] as? [String: Any]))
        if name == "msgpipe-lab" {
            let faults = Set(try cliSources("msgpipe-lab").flatMap { matches(#"takeOption\("([a-z][a-z-]+)"\)"#, in: $0.text) })
                .map { "--" + $0 }
            for key in tree.subcommands.keys { tree.subcommands[key]?.options.formUnion(faults) }
        }
        return tree
    }

    static func command(_ object: [String: Any]) -> Command {
        var result = Command()
        for argument in object["arguments"] as? [[String: Any]] ?? [] {
            for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String != "short" {
                if let text = name["name"] as? String { result.options.insert("--" + text) }
            }
        }
        result.options.formUnion(["--help", "--version"])
        for sub in object["subcommands"] as? [[String: Any]] ?? [] {
            if let name = sub["commandName"] as? String { result.subcommands[name] = command(sub) }
        }
        return result
    }

    /// The Swift sources of a module (the CLI's by default), file by file.
    static func cliSources(_ module: String = "MsgPipeCLI") throws -> [(name: String, text: String)] {
        let directory = root.appendingPathComponent("Sources/" + module)
        let files = FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? []
        return try files.filter { $0.hasSuffix(".swift") }.sorted().map {
            (($0 as NSString).lastPathComponent, try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8))
        }
    }

    static func matches(_ pattern: String, in text: String, group: Int = 1) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: group), in: text).map { String(text[$0]) }
        }
    }

    // MARK: command lines

    /// Every `msgpipe ...` and `msgpipe-lab ...` command line in the docs: the subcommand is one the tool
    /// has, and each `--option` is one that subcommand's `--help` lists.
    @Test func everyCommandLineNamesARealSubcommandAndRealOptions() throws {
        let trees = ["msgpipe": try Self.commandTree("msgpipe"), "msgpipe-lab": try Self.commandTree("msgpipe-lab")]
        var problems: [String] = []
        for (path, text) in Self.documents {
            for (line, code, _) in Self.codeLines(text) where !code.contains("\\n") {
                // One command of a line: up to a pipe, a list operator or a comment. A span with `\n` in it is
                // bytes (a file's magic), not a command.
                let commands = code.components(separatedBy: "#").first!
                    .replacingOccurrences(of: "&&", with: "|").replacingOccurrences(of: ";", with: "|")
                    .replacingOccurrences(of: "$(", with: "|").split(separator: "|")
                for command in commands {
                    var tokens = command.split(separator: " ").map {
                        String($0).trimmingCharacters(in: CharacterSet(charactersIn: "[]()\"'"))
                    }[...]
                    while let first = tokens.first, !trees.keys.contains(first) {
                        // Only a command's prefix may stand before the tool: sudo, env settings, nice, ...
                        guard ["sudo", "exec", "nice", "setsid", "timeout", "env"].contains(first) || first.contains("=")
                        else { break }
                        tokens = tokens.dropFirst()
                    }
                    guard let tool = tokens.first, var node = trees[tool] else { continue }
                    tokens = tokens.dropFirst()
                    var name = tool
                    while let word = tokens.first, !word.hasPrefix("-"), !node.subcommands.isEmpty {
                        guard let sub = node.subcommands[word] else {
                            // A word after the tool that is not a subcommand: prose about the tool, or a typo.
                            if word.allSatisfy({ $0.isLowercase }) {
                                problems.append("\(path):\(line): \(name) has no subcommand \"\(word)\": \(code)")
                            }
                            break
                        }
                        node = sub
                        name += " " + word
                        tokens = tokens.dropFirst()
                    }
                    for token in tokens where token.hasPrefix("--") && token.count > 2 {
                        let option = String(token.prefix { $0 != "=" && $0 != "," && $0 != "." && $0 != ":" })
                        if !node.options.contains(option) {
                            problems.append("\(path):\(line): \(name) has no option \(option): \(code)")
                        }
                    }
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.count) command lines do not match --help:\n\(problems.joined(separator: "\n"))")
    }

    /// Every `--option` a user's doc names on its own (in prose or a table) is an option of msgpipe or
    /// msgpipe-lab, or of a command the same doc shows with it (`swift test --filter`). LAB.md and
    /// ARCHITECTURE.md also name the options of the lab's other programs (gatttool, Bumble, pip, dbus-daemon):
    /// only their command lines are checked, by the test above.
    @Test func everyOptionNamedInADocExists() throws {
        var known = Set<String>()
        func collect(_ command: Command) {
            known.formUnion(command.options)
            command.subcommands.values.forEach(collect)
        }
        collect(try Self.commandTree("msgpipe"))
        collect(try Self.commandTree("msgpipe-lab"))
        var problems: [String] = []
        for (path, text) in Self.documents where !["docs/LAB.md", "docs/ARCHITECTURE.md"].contains(path) {
            // Options of other tools, as this doc shows them on those tools' command lines.
            var foreign = Set<String>()
            for (_, code, _) in Self.codeLines(text) {
                let words = code.split(separator: " ").map(String.init)
                guard let tool = words.first, !tool.hasPrefix("msgpipe"), !tool.hasPrefix("-") else { continue }
                foreign.formUnion(words.filter { $0.hasPrefix("--") }.map { String($0.prefix { $0 != "=" }) })
            }
            for (line, code, inBlock) in Self.codeLines(text) where !inBlock && code.hasPrefix("--") {
                let option = String(code.prefix { $0 != " " && $0 != "=" })
                if !known.contains(option) && !foreign.contains(option) {
                    problems.append("\(path):\(line): no command has \(option)")
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.count) options the CLI does not have:\n\(problems.joined(separator: "\n"))")
    }

    // MARK: subcommands

    /// docs/CLI.md's command table names every subcommand, and only those.
    @Test func theCommandTableOfCLIMdIsComplete() throws {
        let tree = try Self.commandTree("msgpipe")
        let text = try #require(Self.documents.first { $0.path == "docs/CLI.md" }?.text)
        let table = Set(Self.matches(#"(?m)^\| \[`([a-z]+)`\]"#, in: text))
        let real = Set(tree.subcommands.keys).subtracting(["help"])
        #expect(real.subtracting(table).isEmpty, "CLI.md's command table lacks \(real.subtracting(table).sorted())")
        #expect(table.subtracting(real).isEmpty, "CLI.md's command table names \(table.subtracting(real).sorted())")
        for name in real {
            #expect(text.contains("\n## \(name)\n"), "CLI.md has no section ## \(name)")
        }
    }

    /// Each option table of a `## COMMAND` section in docs/CLI.md lists only options of that command.
    @Test func eachOptionTableOfCLIMdMatchesItsCommand() throws {
        let tree = try Self.commandTree("msgpipe")
        let text = try #require(Self.documents.first { $0.path == "docs/CLI.md" }?.text)
        var problems: [String] = []
        var command: Command?
        var name = ""
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("## ") {
                name = String(line.dropFirst(3))
                command = tree.subcommands[name]
                if name.hasPrefix("Links, roles") {
                    // Shared by the four link commands: each of them takes every option of this table.
                    command = ["listen", "send", "request", "serve"].compactMap { tree.subcommands[$0] }.reduce(nil) {
                        (shared: Command?, next: Command) in
                        Command(options: shared.map { $0.options.intersection(next.options) } ?? next.options)
                    }
                }
                continue
            }
            if line.hasPrefix("### "), name.hasPrefix("Links, roles") {
                // The subsections: options of some of the link commands.
                command = ["listen", "send", "request", "serve", "bench"].compactMap { tree.subcommands[$0] }.reduce(Command()) {
                    Command(options: $0.options.union($1.options))
                }
            }
            if let node = command, !node.subcommands.isEmpty {
                command = node.subcommands.values.reduce(node) { Command(options: $0.options.union($1.options)) }
            }
            guard let command, line.hasPrefix("| `--") else { continue }
            let option = String(line.dropFirst(3).prefix { $0 != " " && $0 != "`" && $0 != "=" })
            if !command.options.contains(option) {
                problems.append("docs/CLI.md:\(index + 1): \(name) has no option \(option)")
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    // MARK: exit codes

    /// The exit codes the CLI's code can end with: `ExitCode(N)`, the exit code enums' raw values, named
    /// constants, and ArgumentParser's 0, 1 and 64.
    static func exitCodes() throws -> Set<Int> {
        var codes: Set<Int> = [0, 1, 64]
        for (name, text) in try cliSources() {
            codes.formUnion(matches(#"ExitCode\((\d+)\)"#, in: text).compactMap { Int($0) })
            codes.formUnion(matches(#"(?i)exitcode\w*\s*(?::\s*Int32\s*)?=\s*(\d+)"#, in: text).compactMap { Int($0) })
            // The arms of the functions that map an error to its exit code: `case .a, .b: 69`.
            codes.formUnion(matches(#"(?m)^\s*(?:case [.\w, ]+|default): (\d+)$"#, in: text).compactMap { Int($0) })
            if name.hasSuffix("ExitCode.swift") {
                codes.formUnion(matches(#"case \w+ = (\d+)"#, in: text).compactMap { Int($0) })
            }
        }
        return codes
    }

    /// The codes of one "Exit codes: 0 ..., 1 ..." text (a `--help` discussion) or of a Markdown table's first
    /// column.
    static func listedCodes(help: String) -> Set<Int> {
        guard let range = help.range(of: "Exit codes:") else { return [] }
        let tail = help[range.upperBound...]
        let sentence = tail.components(separatedBy: ". Reference").first ?? String(tail)
        let flat = sentence.replacingOccurrences(of: "\n", with: " ")
        var codes = Set(matches(#"(?:^|[:,;]|\band|\bor)\s+(\d+)(?:-(\d+))?\s"#, in: " " + flat).compactMap { Int($0) })
        for range in matches(#"\b(\d+)-(\d+)\b"#, in: flat, group: 0) {
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            if bounds.count == 2, bounds[0] < bounds[1], bounds[1] < 256 { codes.formUnion(bounds[0]...bounds[1]) }
        }
        return codes
    }

    /// Every exit code docs/CLI.md, README.md and docs/TROUBLESHOOTING.md name is one the code can end with,
    /// and each command's exit code table in CLI.md lists what its `--help` lists.
    @Test func exitCodesInTheDocsAreTheCodes() throws {
        let codes = try Self.exitCodes()
        var problems: [String] = []
        for (path, text) in Self.documents where ["README.md", "docs/CLI.md", "docs/TROUBLESHOOTING.md"].contains(path) {
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                for code in Self.matches(#"\bexit(?:s|ed)?(?: code)? (\d+)\b"#, in: String(line)).compactMap({ Int($0) })
                where !codes.contains(code) {
                    problems.append("\(path):\(index + 1): exit \(code) is no exit code of msgpipe")
                }
            }
        }
        let text = try #require(Self.documents.first { $0.path == "docs/CLI.md" }?.text)
        let tree = try Self.commandTree("msgpipe")
        for name in tree.subcommands.keys.sorted() {
            guard let section = text.components(separatedBy: "\n## \(name)\n").dropFirst().first?
                .components(separatedBy: "\n## ").first,
                let table = section.components(separatedBy: "### Exit codes\n").dropFirst().first
            else { continue }
            let documented = Set(Self.matches(#"(?m)^\| `?(\d+)`? \|"#, in: table.components(separatedBy: "\n### ").first!)
                .compactMap { Int($0) })
            for code in documented where !codes.contains(code) {
                problems.append("docs/CLI.md, \(name): exit \(code) is no exit code of msgpipe")
            }
            let help = try Self.run("msgpipe", [name, "--help"])
            let listed = Self.listedCodes(help: help)
            if !listed.isEmpty, listed != documented {
                problems.append("docs/CLI.md, \(name): the exit code table has \(documented.sorted()), "
                    + "`msgpipe \(name) --help` \(listed.sorted())")
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    // MARK: JSON fields

    /// The keys of the CLI's JSON output: every CodingKeys raw value and every stored property of an
    /// Encodable type in Sources/MsgPipeCLI and Sources/MsgPipeMQTT, and the keys of JSON they write by hand.
    static func jsonKeys() throws -> Set<String> {
        var keys = Set<String>()
        for (_, text) in try cliSources() + cliSources("MsgPipeMQTT") {
            keys.formUnion(matches(#"case \w+ = "([A-Za-z_]+)""#, in: text))
            keys.formUnion(matches(#"\\"([A-Za-z_]+)\\":"#, in: text))  // JSON written by hand: "{\"centrals\":..."
            for body in matches(#"(?s)struct \w+: [^{]*(?:Encodable|Codable)[^{]*\{(.*?)\n\s*\}"#, in: text) {
                keys.formUnion(matches(#"(?m)^\s*(?:let|var) (\w+)"#, in: body))
            }
        }
        return keys
    }

    /// Every key of a JSON object docs/CLI.md or README.md shows is a key the CLI prints.
    @Test func jsonFieldsInTheDocsAreFieldsOfTheCode() throws {
        let keys = try Self.jsonKeys()
        var problems: [String] = []
        for (path, text) in Self.documents where ["README.md", "docs/CLI.md"].contains(path) {
            // A JSON object a command line feeds in (`echo '{...}' | msgpipe request`) is the user's, not ours.
            for (line, code, _) in Self.codeLines(text) where code.contains("{\"") && !code.hasPrefix("echo") {
                for key in Self.matches(#"[{,]"([A-Za-z_]+)":"#, in: code) where !keys.contains(key) {
                    problems.append("\(path):\(line): --json has no field \"\(key)\"")
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// `bench --json` over the simulator: every field it prints is named in CLI.md's bench section.
    @Test func everyBenchJSONFieldIsDocumented() throws {
        let output = try Self.run("msgpipe", ["bench", "--link", "sim", "--size", "4096", "--json"])
        let line = try #require(output.split(separator: "\n").last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let text = try #require(Self.documents.first { $0.path == "docs/CLI.md" }?.text)
        let section = try #require(text.components(separatedBy: "\n## bench\n").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let missing = object.keys.filter { !section.contains("`\($0)`") && !section.contains("\"\($0)\"") }.sorted()
        #expect(missing.isEmpty, "CLI.md's bench section does not name \(missing)")
    }

    // MARK: Swift snippets

    /// The DocC articles of the library modules (`Sources/*/*.docc/*.md`), by path relative to the package.
    static func doccArticles() throws -> [(path: String, text: String)] {
        let sources = root.appendingPathComponent("Sources")
        return try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted().flatMap { module in
            let catalog = "Sources/\(module)/\(module).docc"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)) ?? []
            return try names.filter { $0.hasSuffix(".md") }.sorted().map {
                ("\(catalog)/\($0)", try String(contentsOf: root.appendingPathComponent("\(catalog)/\($0)"), encoding: .utf8))
            }
        }
    }

    /// Each ```swift block of README.md, docs/*.md and the DocC articles is, line for line, part of a file in
    /// Examples/Snippets (the DocSnippets target, which the build compiles), imports aside. A block that opens
    /// with `// Package.swift` is a manifest fragment, not a program, and is left out.
    @Test func everySwiftSnippetIsCompiled() throws {
        let directory = Self.root.appendingPathComponent("Examples/Snippets")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }
        func lines(_ text: String) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let compiled = files.map { (imports: Set(lines($0).filter { $0.hasPrefix("import ") }), body: lines($0)) }
        var problems: [String] = []
        var count = 0
        for (path, text) in try Self.documents + Self.doccArticles() {
            for block in text.components(separatedBy: "```swift\n").dropFirst() {
                let snippet = lines(block.components(separatedBy: "```").first!)
                if snippet.first == "// Package.swift" { continue }
                count += 1
                let imports = Set(snippet.filter { $0.hasPrefix("import ") })
                let body = snippet.filter { !$0.hasPrefix("import ") }
                let found = compiled.contains { file in
                    imports.isSubset(of: file.imports) && (0...max(0, file.body.count - body.count)).contains {
                        Array(file.body[$0 ..< min(file.body.count, $0 + body.count)]) == body
                    }
                }
                if !found { problems.append("\(path): this snippet is in no file of Examples/Snippets:\n\(body.joined(separator: "\n"))") }
            }
        }
        #expect(count > 0)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n\n"))")
    }

    // MARK: tables of contents and links

    /// GitHub's anchor of a heading: lowercased, punctuation but `-` and `_` dropped, spaces made `-`, and
    /// `-1`, `-2`, ... after a heading's second and later occurrences.
    static func anchors(_ text: String) -> [(heading: String, level: Int, anchor: String)] {
        var seen: [String: Int] = [:]
        var result: [(String, Int, String)] = []
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced, line.hasPrefix("#") else { continue }
            let level = line.prefix { $0 == "#" }.count
            let heading = line.dropFirst(level).trimmingCharacters(in: .whitespaces)
            let base = String(heading.lowercased().unicodeScalars.filter {
                CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
            }.map(Character.init)).replacingOccurrences(of: " ", with: "-")
            let count = seen[base, default: 0]
            seen[base] = count + 1
            result.append((heading, level, count == 0 ? base : "\(base)-\(count)"))
        }
        return result
    }

    /// CLI.md, LAB.md and PROTOCOL.md open with a table of contents that links every `##` section.
    @Test("the contents of CLI.md, LAB.md and PROTOCOL.md link every section", arguments: [
        "docs/CLI.md", "docs/LAB.md", "docs/PROTOCOL.md",
    ])
    func tableOfContentsListsEverySection(path: String) throws {
        let text = try #require(Self.documents.first { $0.path == path }?.text)
        let contents = try #require(text.components(separatedBy: "\n## Contents\n").dropFirst().first?
            .components(separatedBy: "\n## ").first, "\(path) has no ## Contents")
        for section in Self.anchors(text) where section.level == 2 && section.heading != "Contents" {
            #expect(contents.contains("](#\(section.anchor))"), "\(path): the contents lack \(section.heading)")
        }
    }

    /// Every link of README.md and docs/*.md to a file of the repository, and to a heading of it, resolves.
    @Test func everyLinkToAFileAndAHeadingResolves() throws {
        var problems: [String] = []
        for (path, text) in Self.documents {
            let base = (path as NSString).deletingLastPathComponent
            for target in Self.matches(#"\]\(([^)\s]+)\)"#, in: text) where !target.contains("://") {
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let file = parts[0].isEmpty ? path : (base as NSString).appendingPathComponent(parts[0])
                let url = Self.root.appendingPathComponent(file)
                guard FileManager.default.fileExists(atPath: url.path) else {
                    problems.append("\(path): \(target): no such file")
                    continue
                }
                if parts.count == 2, file.hasSuffix(".md") {
                    let targetText = try String(contentsOf: url, encoding: .utf8)
                    if !Self.anchors(targetText).contains(where: { $0.anchor == parts[1] }) {
                        problems.append("\(path): \(target): no such heading")
                    }
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
