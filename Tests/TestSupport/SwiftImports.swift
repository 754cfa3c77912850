/// The modules a Swift source file imports, in file order: each line whose words before `import` are only
/// access levels and attributes (`public`, `@_exported`, ...). For the tests that keep a module's imports in check.
public func importedModules(in text: String) -> [String] {
    let prefixes: Set<Substring> = ["public", "package", "internal", "private", "fileprivate", "@_exported", "@preconcurrency"]
    return text.split(separator: "\n").compactMap { line in
        let words = line.split(separator: " ")
        guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
              words[..<index].allSatisfy({ prefixes.contains($0) }) else { return nil }
        return String(words[index + 1])
    }
}
