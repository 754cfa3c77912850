import BLELink
import Glibc
import MsgPipe
import Testing

/// `PipeBonds` over real bond files: what `msgpipe bonds list|remove` does, from a Swift program (the kernel's
/// part of a removal needs an adapter, which the lab covers).
struct PipeBondsTests {
    static let adapter = BluetoothAddress("00:AA:01:00:00:00")!
    static let phone = BluetoothPeer(address: BluetoothAddress("C0:11:22:33:44:55")!, type: .leRandom)
    static let laptop = BluetoothPeer(address: BluetoothAddress("00:AA:01:01:00:01")!, type: .lePublic)

    /// A bond directory holding the phone's IRK and the laptop's LTK for one adapter.
    static func directory() throws -> String {
        var template = Array("/tmp/msgpipe-pipebonds-XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) } + "/bonds"
        var bonds = BondFile()
        bonds.insert(IdentityResolvingKey(peer: phone, value: Array(0x20...0x2F)))
        bonds.insert(LongTermKey(peer: laptop, keyType: .unauthenticatedLegacy, central: true, encryptionSize: 7, value: Array(0x40...0x4F)))
        try BondStore(directory: path, adapter: adapter).save(bonds)
        return path
    }

    @Test func listsEachBondedPeerWithItsAdapterAndKeys() throws {
        let bonds = try PipeBonds(Self.directory()).list()
        #expect(bonds.map(\.peer) == [Self.laptop, Self.phone], "in the file's order")
        #expect(bonds.allSatisfy { $0.adapter == Self.adapter })
        #expect(bonds.last?.keys == ["irk"])
        #expect(try PipeBonds("/tmp/msgpipe-pipebonds-none/bonds").list().isEmpty, "no directory: no bonds")
    }

    @Test func removeForgetsOnePeerAndSaysWhichFileChanged() throws {
        let path = try Self.directory()
        let removals = try PipeBonds(path).remove(Self.phone.address)
        #expect(removals.map(\.file) == ["\(path)/\(Self.adapter).bonds"])
        #expect(try PipeBonds(path).list().map(\.peer) == [Self.laptop])
        #expect(try PipeBonds(path).remove(Self.phone.address).isEmpty, "nothing left to remove")
    }

    @Test func aCorruptFileIsUnreadableAndLeftAsItIs() throws {
        let path = try Self.directory()
        let file = "\(path)/\(Self.adapter).bonds"
        let fd = open(file, O_WRONLY | O_TRUNC)
        _ = write(fd, "not a bond file\n", 16)
        close(fd)
        #expect(throws: PipeBonds.Unreadable.self) { try PipeBonds(path).list() }
        #expect(throws: PipeBonds.Unreadable.self) { try PipeBonds(path).remove(Self.phone.address) }
        let error = try #require(throws: PipeBonds.Unreadable.self) { try PipeBonds(path).list() }
        #expect(error.description.contains(file))
    }
}
