import Glibc

/// The bond files a kernel-backend peripheral keeps in one directory, one ``BondStore`` per adapter
/// (`<adapter address>.bonds`): list the bonded peers, or forget one on every adapter, in the files and in the
/// kernel. A file that does not load is never rewritten.
///
/// ```swift
/// let directory = BondDirectory("/var/lib/msgpipe/bonds")
/// for bond in try directory.bonds() { print(bond.adapter, bond.peer.address, bond.keys) }
/// let removed = try directory.remove(BluetoothAddress("C0:11:22:33:44:55")!)
/// ```
public struct BondDirectory: Sendable {
    /// The directory's path.
    public let path: String

    public init(_ path: String) { self.path = path }

    /// One bonded peer of one adapter, with the keys kept for it: "ltk(TYPE)" or "ltk(TYPE, central)", "irk",
    /// "csrk".
    public struct Bond: Sendable, Equatable {
        public let adapter: BluetoothAddress
        public let peer: BluetoothPeer
        public let keys: [String]
    }

    /// What ``remove(_:adapter:)`` did in one bond file.
    public struct Removal: Sendable {
        /// The file the peer's keys were removed from.
        public let file: String
        /// Why the kernel still holds the keys until it restarts (nil: it dropped them, or held none).
        public let kernelFailure: BluetoothError?
    }

    /// Why the directory cannot be read; nothing was changed.
    public enum ReadError: Error, CustomStringConvertible {
        /// Listing the directory failed.
        case unreadable(directory: String, reason: String)
        /// A bond file did not load (it is left as it is).
        case bondFile(BondStoreError)

        public var description: String {
            switch self {
            case let .unreadable(directory, reason): "cannot read the bond directory \(directory): \(reason)"
            case let .bondFile(error): error.description
            }
        }
    }

    /// The adapter's store (`adapter`: hciN, resolved through the kernel, or an address), or every
    /// `*.bonds` file's (nil), by adapter address. No directory: none. Throws ``ReadError`` or, resolving hciN,
    /// a `BluetoothError`.
    public func stores(adapter: String? = nil) throws -> [BondStore] {
        if let adapter {
            if let address = BluetoothAddress(adapter) { return [BondStore(directory: path, adapter: address)] }
            let resolved = try BluetoothAdapter.resolve(try AdapterSelector(adapter), using: try ManagementSocket())
            return [BondStore(directory: path, adapter: resolved.address)]
        }
        guard let handle = opendir(path) else {
            if errno == ENOENT { return [] }
            throw ReadError.unreadable(directory: path, reason: String(cString: strerror(errno)))
        }
        defer { closedir(handle) }
        var stores: [BondStore] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasSuffix(".bonds"), let address = BluetoothAddress(name.dropLast(6)) else { continue }
            stores.append(BondStore(directory: path, adapter: address))
        }
        return stores.sorted { $0.adapter < $1.adapter }
    }

    /// Every bonded peer, by adapter and in each file's order.
    public func bonds(adapter: String? = nil) throws -> [Bond] {
        try stores(adapter: adapter).flatMap { store in
            let bonds = try Self.load(store)
            return bonds.peers.map { peer in
                var keys = bonds.longTermKeys.filter { $0.peer == peer }.map { "ltk(\($0.keyType)\($0.central ? ", central" : ""))" }
                if bonds.identityResolvingKeys.contains(where: { $0.peer == peer }) { keys.append("irk") }
                if bonds.signatureResolvingKeys.contains(where: { $0.peer == peer }) { keys.append("csrk") }
                return Bond(adapter: store.adapter, peer: peer, keys: keys)
            }
        }
    }

    /// Forgets `peer` on every adapter that bonded with it (or only `adapter`'s): its keys leave the file
    /// (saved atomically), then the kernel (Unpair Device) where the adapter is present. Returns one
    /// ``Removal`` per file changed: empty when no file held a bond for it. Throws ``ReadError``, a
    /// `BondStoreError` when a file cannot be saved, or, resolving hciN, a `BluetoothError`.
    public func remove(_ peer: BluetoothAddress, adapter: String? = nil) throws -> [Removal] {
        var removals: [Removal] = []
        for store in try stores(adapter: adapter) {
            var bonds = try Self.load(store)
            let peers = bonds.peers.filter { $0.address == peer }
            guard bonds.remove(peer) else { continue }
            try store.save(bonds)
            removals.append(Removal(file: store.path, kernelFailure: Self.unpair(peers, on: store.adapter)))
        }
        return removals
    }

    private static func load(_ store: BondStore) throws(ReadError) -> BondFile {
        do { return try store.load() } catch { throw .bondFile(error) }
    }

    /// Unpair Device on the adapter with that address, when the kernel has it; the failure otherwise.
    private static func unpair(_ peers: [BluetoothPeer], on adapterAddress: BluetoothAddress) -> BluetoothError? {
        do throws(BluetoothError) {
            let management = try ManagementSocket()
            let adapter = try BluetoothAdapter.resolve(.address(adapterAddress), using: management)
            for peer in peers {
                do {
                    try management.execute(UnpairDevice(peer: peer, disconnect: true).command(adapter.index))
                } catch .commandFailed(_, let status) where status == .notPaired {
                    continue  // the kernel had no key for it (it restarted since)
                }
            }
            return nil
        } catch {
            return error
        }
    }
}
