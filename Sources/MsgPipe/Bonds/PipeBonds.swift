public import BLELink

/// The bonds a kernel-backend peripheral keeps in its bond directory (`KernelOptions.bondDirectory`):
/// list the bonded peers, or forget one, in the files and in the kernel. Through bluetoothd the bonds are
/// bluetoothd's, not these.
///
/// ```swift
/// let bonds = PipeBonds("/var/lib/msgpipe/bonds")
/// for bond in try bonds.list() { print(bond.adapter, bond.peer.address, bond.keys) }
/// let removed = try bonds.remove(BluetoothAddress("C0:11:22:33:44:55")!)
/// ```
public struct PipeBonds: Sendable {
    /// The directory's path.
    public let path: String

    public init(_ path: String) { self.path = path }

    /// One bonded peer of one adapter (its `adapter`, `peer` and the `keys` kept: "ltk(TYPE)" or
    /// "ltk(TYPE, central)", "irk", "csrk").
    public typealias Bond = BondDirectory.Bond

    /// What ``remove(_:adapter:)`` did in one bond file: the `file` changed, and the `kernelFailure` that leaves
    /// the kernel holding the keys until it restarts (nil: it dropped them, or held none).
    public typealias Removal = BondDirectory.Removal

    /// The directory or a bond file cannot be read (or, removing, saved); nothing was changed. The
    /// description says which file and why.
    public struct Unreadable: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Every bonded peer (only `adapter`'s: hciN, resolved through the kernel, or its address), by adapter and
    /// in each file's order; no directory: none. Throws ``Unreadable``, or, resolving hciN, a Bluetooth error.
    public func list(adapter: String? = nil) throws -> [Bond] {
        try Self.reading { try BondDirectory(path).bonds(adapter: adapter) }
    }

    /// Forgets `peer` on every adapter that bonded with it (or only `adapter`'s): its keys leave the file
    /// (saved atomically), then the kernel (Unpair Device) where the adapter is present. Returns one
    /// ``Removal`` per file changed: empty when no file held a bond for it. Throws ``Unreadable``, or,
    /// resolving hciN, a Bluetooth error.
    public func remove(_ peer: BluetoothAddress, adapter: String? = nil) throws -> [Removal] {
        try Self.reading { try BondDirectory(path).remove(peer, adapter: adapter) }
    }

    /// Runs `body`, its read and save failures as ``Unreadable``.
    private static func reading<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as BondDirectory.ReadError {
            throw Unreadable(description: error.description)
        } catch let error as BondStoreError {
            throw Unreadable(description: error.description)
        }
    }
}
