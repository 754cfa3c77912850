import Glibc
import Synchronization

/// A directory with a file per message: `00000001.msg`, `00000002.msg`, … in arrival order (numbering goes on
/// after the highest file already there), optionally in a folder of their own under it (per peer, per key).
/// A file appears whole: it is written as `.NAME.part`, synced, and renamed once the inbox's journal recorded it.
///
/// ```swift
/// let inbox = try MessageInbox(directory: "inbox")   // MessageInbox<MessageDirectory>
/// ```
public final class MessageDirectory: InboxOutput {
    /// One message to write: its bytes, and the folder (relative to the directory) it goes in.
    public struct Item: Sendable {
        public var bytes: [UInt8]
        /// Path components under the directory, e.g. "phone-1" or "phone-1/alice"; nil: the directory itself.
        /// Components are letters, digits, `.`, `-` and `_`, never starting with a dot (``folderName(_:)``).
        public var folder: String?

        public init(bytes: [UInt8], folder: String? = nil) {
            self.bytes = bytes
            self.folder = folder
        }
    }

    public let path: String
    /// The number of the next file in each folder ("" is the directory itself).
    private let nextNumbers = Mutex<[String: Int]>([:])

    /// Creates `path` (and its parents) if needed.
    public init(path: String) throws(InboxError) {
        self.path = path
        try Self.makeDirectory(path)
    }

    /// A folder name made from any text: every character but letters, digits, '.', '-' and '_' becomes '_',
    /// and it never starts with a dot ("unix:/tmp/a.sock" is "unix__tmp_a.sock").
    public static func folderName(_ text: String) -> String {
        let kept = text.map { character -> Character in
            character.isASCII && (character.isLetter || character.isNumber || "._-".contains(character)) ? character : "_"
        }
        let name = String(kept)
        return name.isEmpty ? "_" : name.hasPrefix(".") ? "_" + name.dropFirst() : name
    }

    /// The file name of message number `number`: sortable by arrival.
    public static func fileName(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits + ".msg"
    }

    public func write(_ items: [Item]) throws(InboxError) -> [String] {
        var names: [String] = []
        var folders: Set<String> = []
        do throws(InboxError) {
            for item in items {
                let folder = item.folder ?? ""
                let components = folder.split(separator: "/", omittingEmptySubsequences: false)
                guard folder.isEmpty || components.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") }) else {
                    throw .io("invalid folder name \(folder)")
                }
                let number = try takeNumber(in: folder)
                let name = (folder.isEmpty ? "" : folder + "/") + Self.fileName(number)
                // One message: its file and directory synced. Several: written, then each file system synced
                // once (syncfs), which costs about what one fsync does instead of one per file.
                try writeFile(item.bytes, at: temporaryPath(name), sync: items.count == 1)
                names.append(name)
                folders.insert(folder)
            }
            let directories = folders.map { $0.isEmpty ? path : path + "/" + $0 }
            if items.count == 1 {
                for directory in directories { try Self.syncDirectory(directory) }
            } else {
                try Self.syncFileSystems(of: directories)
            }
        } catch {
            discard(names)
            throw error
        }
        return names
    }

    public func publish(_ names: [String]) throws(InboxError) {
        var folders: Set<String> = []
        for name in names where !name.isEmpty {
            let temporary = temporaryPath(name)
            guard access(temporary, F_OK) == 0 else { continue }  // published before a crash
            try Self.io { () throws(DurableFiles.Failure) in try DurableFiles.rename(temporary, to: path + "/" + name) }
            folders.insert(Self.folder(of: name))
        }
        for folder in folders { try Self.syncDirectory(folder.isEmpty ? path : path + "/" + folder) }
    }

    public func discard(_ names: [String]) {
        for name in names where !name.isEmpty { unlink(temporaryPath(name)) }
    }

    public func recover(publishing names: [String]) throws(InboxError) {
        try publish(names)
        // Any temporary file left is one the journal never recorded: its sender sends the message again.
        for folder in try Self.folders(under: path, depth: 2) {
            let directory = folder.isEmpty ? path : path + "/" + folder
            for entry in try Self.entries(of: directory) where entry.hasPrefix(".") && entry.hasSuffix(".msg.part") {
                unlink(directory + "/" + entry)
            }
        }
    }

    // MARK: Files

    private func temporaryPath(_ name: String) -> String {
        let folder = Self.folder(of: name)
        let file = name.split(separator: "/").last.map(String.init) ?? name
        return path + "/" + (folder.isEmpty ? "" : folder + "/") + "." + file + ".part"
    }

    private static func folder(of name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return "" }
        return String(name[..<slash])
    }

    private func takeNumber(in folder: String) throws(InboxError) -> Int {
        if let next = nextNumbers.withLock({ numbers -> Int? in
            guard let next = numbers[folder] else { return nil }
            numbers[folder] = next + 1
            return next
        }) {
            return next
        }
        let directory = folder.isEmpty ? path : path + "/" + folder
        try Self.makeDirectory(directory)
        let next = try Self.entries(of: directory).compactMap { name -> Int? in
            guard name.hasSuffix(".msg"), !name.hasPrefix(".") else { return nil }
            return Int(name.dropLast(4))
        }.max().map { $0 + 1 } ?? 1
        nextNumbers.withLock { $0[folder] = next + 1 }
        return next
    }

    /// Writes `file`, and with `sync` makes its data durable (`fsync`) before returning.
    private func writeFile(_ bytes: [UInt8], at file: String, sync: Bool) throws(InboxError) {
        try Self.io { () throws(DurableFiles.Failure) in try DurableFiles.write(bytes, to: file, sync: sync) }
    }

    /// Creates `path` and its parents where missing; throws when it is not a directory.
    public static func makeDirectory(_ path: String) throws(InboxError) {
        try io { () throws(DurableFiles.Failure) in try DurableFiles.makeDirectory(path) }
    }

    /// Creates a new private directory (mode 0700) named `prefix` and 6 random characters, for a journal whose
    /// caller keeps no state of its own; returns its path. Throws ``InboxError/io(_:)`` ("cannot create a state
    /// directory: …").
    ///
    /// ```swift
    /// let journal = try MessageDirectory.makeTemporaryDirectory(prefix: "/tmp/msgpipe-serve-")
    /// ```
    public static func makeTemporaryDirectory(prefix: String) throws(InboxError) -> String {
        try io { () throws(DurableFiles.Failure) in try DurableFiles.makeTemporaryDirectory(prefix: prefix) }
    }

    /// Makes a directory's entries (created or renamed files) durable.
    static func syncDirectory(_ directory: String) throws(InboxError) {
        try io { () throws(DurableFiles.Failure) in try DurableFiles.syncDirectory(directory) }
    }

    /// Makes everything written on the file systems of `directories` durable: one `syncfs` per file system.
    static func syncFileSystems(of directories: [String]) throws(InboxError) {
        try io { () throws(DurableFiles.Failure) in try DurableFiles.syncFileSystems(of: directories) }
    }

    private static func entries(of directory: String) throws(InboxError) -> [String] {
        try io { () throws(DurableFiles.Failure) in try DurableFiles.entries(of: directory) }
    }

    private static func io<T>(_ body: () throws(DurableFiles.Failure) -> T) throws(InboxError) -> T {
        do { return try body() } catch { throw .io(error.description) }
    }

    /// "" and every folder (not hidden) under `path`, `depth` levels deep at most, relative to it.
    private static func folders(under path: String, depth: Int) throws(InboxError) -> [String] {
        var found = [""]
        var level = [""]
        for _ in 0..<depth {
            var next: [String] = []
            for folder in level {
                let directory = folder.isEmpty ? path : path + "/" + folder
                for name in try entries(of: directory) where !name.hasPrefix(".") {
                    guard DurableFiles.isDirectory(directory + "/" + name) else { continue }
                    next.append(folder.isEmpty ? name : folder + "/" + name)
                }
            }
            found += next
            level = next
        }
        return found
    }
}
