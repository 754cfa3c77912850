import Glibc
import Testing
@testable import BLELink

/// The bond store on a real file system: round trip, 0600/0700, atomic replacement, corrupt files refused
/// and left untouched.
struct BondStoreTests {
    static let adapter = BluetoothAddress("00:AA:01:00:00:00")!
    static let phone = BluetoothPeer(address: BluetoothAddress("C0:11:22:33:44:55")!, type: .leRandom)
    static let laptop = BluetoothPeer(address: BluetoothAddress("00:AA:01:01:00:01")!, type: .lePublic)

    static func bonds() -> BondFile {
        var bonds = BondFile()
        bonds.insert(LongTermKey(
            peer: phone, keyType: .unauthenticatedP256, central: false, encryptionSize: 16, diversifier: 0xBEEF,
            randomNumber: 0x0102_0304_0506_0708, value: Array(0x10...0x1F)))
        bonds.insert(IdentityResolvingKey(peer: phone, value: Array(0x20...0x2F)))
        bonds.insert(SignatureResolvingKey(peer: phone, keyType: 1, value: Array(0x30...0x3F)))
        bonds.insert(LongTermKey(peer: laptop, keyType: .unauthenticatedLegacy, central: true, encryptionSize: 7, value: Array(0x40...0x4F)))
        return bonds
    }

    /// A fresh directory path that does not exist yet (its parent does).
    static func freshDirectory() -> String {
        var template = Array("/tmp/msgpipe-bonds-XXXXXX".utf8CString)
        let parent = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        return parent + "/state/bonds"
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return info.st_mode & 0o777
    }

    static func contents(_ path: String) -> [UInt8] {
        guard let file = fopen(path, "rb") else { return [] }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        return bytes
    }

    static func write(_ bytes: [UInt8], to path: String) {
        let file = fopen(path, "wb")!
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }

    @Test func missingFileLoadsAsNoBonds() throws {
        let store = BondStore(directory: Self.freshDirectory(), adapter: Self.adapter)
        #expect(try store.load() == BondFile())
    }

    @Test func savedBondsLoadBackTheSame() throws {
        let store = BondStore(directory: Self.freshDirectory(), adapter: Self.adapter)
        try store.save(Self.bonds())
        #expect(try store.load() == Self.bonds())
        #expect(store.path.hasSuffix("/00:AA:01:00:00:00.bonds"))
        #expect(try store.load().peers == [Self.laptop, Self.phone])
    }

    @Test func fileIs0600AndDirectory0700() throws {
        let store = BondStore(directory: Self.freshDirectory(), adapter: Self.adapter)
        let previous = umask(0)
        defer { umask(previous) }
        try store.save(Self.bonds())
        #expect(Self.mode(store.path) == 0o600)
        #expect(Self.mode(store.directory) == 0o700)
    }

    @Test func saveReplacesTheFileAtomicallyAndLeavesNoTemporary() throws {
        let store = BondStore(directory: Self.freshDirectory(), adapter: Self.adapter)
        try store.save(Self.bonds())
        var inode = stat()
        stat(store.path, &inode)
        var bonds = Self.bonds()
        let removed = bonds.remove(Self.laptop.address)
        #expect(removed)
        try store.save(bonds)
        var replaced = stat()
        stat(store.path, &replaced)
        #expect(replaced.st_ino != inode.st_ino)  // a new file renamed over the old one, not rewritten in place
        #expect(try store.load() == bonds)
        #expect(access(store.path + ".tmp", F_OK) != 0)
    }

    @Test func aStaleTemporaryFromACrashIsNotReadAndIsReplaced() throws {
        let store = BondStore(directory: Self.freshDirectory(), adapter: Self.adapter)
        try store.save(Self.bonds())
        Self.write(Array("half a file".utf8), to: store.path + ".tmp")
        #expect(try store.load() == Self.bonds())
        try store.save(BondFile())
        #expect(try store.load() == BondFile())
    }

    @Test(arguments: [
        ("", 0, "empty file"),
        ("msgpipe-bonds 2\n", 1, "first line"),
        ("msgpipe-bonds 1\nltk C0:11:22:33:44:55 random type=02\n", 2, "ends before"),
        ("msgpipe-bonds 1\nirk c0:11:22:33:44:55 random value=000102030405060708090a0b0c0d0e0f\n", 2, "capitals"),
        ("msgpipe-bonds 1\nirk C0:11:22:33:44:55 random value=000102030405060708090A0B0C0D0E0F\n", 2, "lower-case"),
        ("msgpipe-bonds 1\nirk C0:11:22:33:44:55 bredr value=000102030405060708090a0b0c0d0e0f\n", 2, "address type"),
        ("msgpipe-bonds 1\nkey C0:11:22:33:44:55 random\n", 2, "unknown key kind"),
        ("msgpipe-bonds 1\nirk C0:11:22:33:44:55 random value=000102030405060708090a0b0c0d0e0f", 0, "newline"),
        ("msgpipe-bonds 1\n\n", 2, "ends before"),
    ])
    func corruptFileGivesATypedErrorNamingFileAndLineAndIsLeftUntouched(text: String, line: Int, phrase: String) throws {
        let store = BondStore(directory: Self.freshDirectory(), adapter: Self.adapter)
        try store.save(BondFile())
        Self.write(Array(text.utf8), to: store.path)
        do {
            _ = try store.load()
            Issue.record("a corrupt file loaded")
        } catch let .corrupt(path, errorLine, reason) {
            #expect(path == store.path)
            #expect(errorLine == line)
            #expect(reason.contains(phrase), "\(reason)")
            #expect(BondStoreError.corrupt(path: path, line: errorLine, reason: reason).description.contains(store.path))
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(Self.contents(store.path) == Array(text.utf8))
    }

    @Test func everyTruncationOfAGoodFileIsRefusedWithoutTrapping() {
        let bytes = Self.bonds().encoded()
        var refused = 0
        for end in 0..<bytes.count where (try? BondFile(decoding: bytes[..<end])) == nil { refused += 1 }
        // Cut right after a line's newline the rest is a shorter valid file; anywhere else it is refused.
        let lineEnds = bytes.filter { $0 == UInt8(ascii: "\n") }.count
        #expect(refused == bytes.count - (lineEnds - 1))
    }

    @Test func unreadableFileIsATypedErrorAndLeftUntouched() throws {
        guard getuid() != 0 else { return }  // root reads any file
        let store = BondStore(directory: Self.freshDirectory(), adapter: Self.adapter)
        try store.save(Self.bonds())
        chmod(store.path, 0)
        defer { chmod(store.path, 0o600) }
        #expect(throws: BondStoreError.self) { try store.load() }
    }

    @Test func insertReplacesTheSameRoleAndKeepsOrder() throws {
        var bonds = Self.bonds()
        let newer = LongTermKey(peer: Self.phone, keyType: .authenticatedP256, central: false, value: Array(0x50...0x5F))
        let inserted = bonds.insert(newer)
        let insertedAgain = bonds.insert(newer)
        #expect(inserted && !insertedAgain)
        #expect(bonds.longTermKeys.filter { $0.peer == Self.phone } == [newer])
        #expect(try BondFile(decoding: bonds.encoded()[...]) == bonds)
        let unknown = bonds.remove(BluetoothAddress("11:11:11:11:11:11")!)
        #expect(!unknown)
    }

    @Test func theFileIsReadableText() {
        let text = String(decoding: Self.bonds().encoded(), as: UTF8.self)
        #expect(text.hasPrefix("msgpipe-bonds 1\nltk 00:AA:01:01:00:01 public type=00 central=1 size=7 ediv=0000"))
        #expect(text.contains("ltk C0:11:22:33:44:55 random type=02 central=0 size=16 ediv=beef rand=0102030405060708 value=101112131415161718191a1b1c1d1e1f\n"))
        #expect(text.contains("irk C0:11:22:33:44:55 random value=202122232425262728292a2b2c2d2e2f\n"))
        #expect(text.hasSuffix("csrk C0:11:22:33:44:55 random type=01 value=303132333435363738393a3b3c3d3e3f\n"))
    }
}
