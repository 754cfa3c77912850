@testable import BLELink
import Glibc
import Testing

/// The bond directory over real files: what `bonds()` lists, and `remove` taking a peer out of every
/// adapter's file (the kernel part needs an adapter, which the lab covers).
struct BondDirectoryTests {
    static let other = BluetoothAddress("00:AA:BB:CC:DD:02")!

    @Test func listsEveryAdaptersPeersWithTheirKeys() throws {
        let path = BondStoreTests.freshDirectory()
        try BondStore(directory: path, adapter: BondStoreTests.adapter).save(BondStoreTests.bonds())
        var second = BondFile()
        second.insert(IdentityResolvingKey(peer: BondStoreTests.phone, value: Array(0x20...0x2F)))
        try BondStore(directory: path, adapter: Self.other).save(second)
        let bonds = try BondDirectory(path).bonds()
        #expect(bonds.map(\.adapter) == [BondStoreTests.adapter, BondStoreTests.adapter, Self.other].sorted())
        let phone = try #require(bonds.first { $0.adapter == BondStoreTests.adapter && $0.peer == BondStoreTests.phone })
        #expect(phone.keys.contains("irk") && phone.keys.contains("csrk") && phone.keys.contains { $0.hasPrefix("ltk(") })
        #expect(try BondDirectory(path).bonds(adapter: "\(Self.other)").map(\.keys) == [["irk"]])
        #expect(try BondDirectory(path + "/none").bonds().isEmpty, "no directory: no bonds")
    }

    @Test func removeTakesThePeerOutOfEveryFileAndLeavesTheOthers() throws {
        let path = BondStoreTests.freshDirectory()
        try BondStore(directory: path, adapter: BondStoreTests.adapter).save(BondStoreTests.bonds())
        var second = BondFile()
        second.insert(IdentityResolvingKey(peer: BondStoreTests.phone, value: Array(0x20...0x2F)))
        try BondStore(directory: path, adapter: Self.other).save(second)
        let removals = try BondDirectory(path).remove(BondStoreTests.phone.address)
        #expect(removals.count == 2)
        let left = try BondDirectory(path).bonds()
        #expect(left.map(\.peer) == [BondStoreTests.laptop], "only the laptop is left")
        #expect(try BondDirectory(path).remove(BondStoreTests.phone.address).isEmpty, "nothing left to remove")
    }

    @Test func aCorruptFileIsAReadErrorAndIsLeftAsItIs() throws {
        let path = BondStoreTests.freshDirectory()
        let store = BondStore(directory: path, adapter: BondStoreTests.adapter)
        try store.save(BondStoreTests.bonds())
        BondStoreTests.write(Array("not a bond file\n".utf8), to: store.path)
        #expect(throws: BondDirectory.ReadError.self) { try BondDirectory(path).remove(BondStoreTests.phone.address) }
        #expect(BondStoreTests.contents(store.path) == Array("not a bond file\n".utf8))
    }
}
