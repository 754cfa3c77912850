import CFileSync
import Glibc

/// The file operations both stores build on: whole files written and synced, directories synced, listed and
/// created. Each failure names the operation and the system's reason.
enum DurableFiles {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Writes `bytes` to `file` (created or truncated, mode `mode`), and with `sync` makes them durable (`fsync`)
    /// before returning. A failed write leaves no file.
    static func write(_ bytes: [UInt8], to file: String, sync: Bool, mode: mode_t = 0o644) throws(Failure) {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw failure("cannot create \(file)") }
        do throws(Failure) {
            try write(bytes, to: descriptor, name: file)
            guard !sync || fsync(descriptor) == 0 else { throw failure("cannot sync \(file)") }
        } catch {
            close(descriptor)
            unlink(file)
            throw error
        }
        close(descriptor)
    }

    /// Writes all of `bytes` to `descriptor` (retrying short writes and interruptions); `name` is what a failure
    /// calls it.
    static func write(_ bytes: [UInt8], to descriptor: Int32, name: String) throws(Failure) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw failure("cannot write \(name)") }
            written += count
        }
    }

    /// The whole content of `file`.
    static func read(_ file: String) throws(Failure) -> [UInt8] {
        do throws(FileIOError) {
            return try InputFile(path: file).readAll()
        } catch {
            throw Failure(description: error.description)
        }
    }

    /// The size of `file`, nil when it cannot be read.
    static func size(of file: String) -> Int? {
        var status = stat()
        guard stat(file, &status) == 0 else { return nil }
        return Int(status.st_size)
    }

    /// Creates `path` and its parents where missing; throws when it is not a directory.
    static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws(Failure) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component + "/"
            if mkdir(prefix, mode) != 0 && errno != EEXIST { throw failure("cannot create directory \(prefix)") }
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { throw Failure(description: "\(path) is not a directory") }
    }

    /// Creates a new directory (mode 0700) named `prefix` and 6 random characters; returns its path.
    static func makeTemporaryDirectory(prefix: String) throws(Failure) -> String {
        var template = Array((prefix + "XXXXXX").utf8CString)
        guard let path = mkdtemp(&template) else { throw failure("cannot create a state directory") }
        return String(cString: path)
    }

    /// Makes a directory's entries (created, renamed or removed files) durable.
    static func syncDirectory(_ directory: String) throws(Failure) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open directory \(directory)") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("cannot sync directory \(directory)") }
    }

    /// Makes everything written on the file systems of `directories` durable: one `syncfs` per file system.
    static func syncFileSystems(of directories: [String]) throws(Failure) {
        var synced: Set<UInt64> = []
        for directory in directories {
            let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure("cannot open directory \(directory)") }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { throw failure("cannot stat \(directory)") }
            guard synced.insert(UInt64(status.st_dev)).inserted else { continue }
            guard msgpipe_syncfs(descriptor) == 0 else { throw failure("cannot sync the file system of \(directory)") }
        }
    }

    /// Renames `from` to `to` (replacing it).
    static func rename(_ from: String, to: String) throws(Failure) {
        guard Glibc.rename(from, to) == 0 else { throw failure("cannot rename \(from) to \(to)") }
    }

    /// The names in `directory`, "." and ".." left out.
    static func entries(of directory: String) throws(Failure) -> [String] {
        guard let handle = opendir(directory) else { throw failure("cannot read directory \(directory)") }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    private static func failure(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
