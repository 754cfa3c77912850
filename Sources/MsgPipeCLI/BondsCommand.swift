import ArgumentParser
import BLELink
import Glibc

/// `msgpipe bonds list|remove`: the bonds a kernel-backend peripheral keeps with `--bonds DIR`.
struct BondsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bonds",
        abstract: "List or remove the bonds kept with --bonds DIR (kernel backend).",
        discussion: """
            Exit codes: 0 done; 1 no bond for ADDRESS; 2 a bond file is corrupt or unreadable, or the directory \
            cannot be read. Through bluetoothd, bonds are bluetoothd's: use 'bluetoothctl remove ADDRESS'.
            """,
        subcommands: [List.self, Remove.self])

    struct Options: ParsableArguments {
        @Option(name: .customLong("bonds"), help: ArgumentHelp("The bond directory given to listen/send/serve.", valueName: "DIR"))
        var directory: String

        @Option(help: "Only this adapter's bonds: hciN (needs the kernel) or its address (default: every adapter's file).")
        var adapter: String?

        /// The bond stores to look at: the adapter's, or every `*.bonds` file in the directory.
        func stores() throws -> [BondStore] {
            if let adapter {
                if let address = BluetoothAddress(adapter) { return [BondStore(directory: directory, adapter: address)] }
                let selector = try AdapterSelector(adapter)
                let management = try ManagementSocket()
                let resolved = try BluetoothAdapter.resolve(selector, using: management)
                return [BondStore(directory: directory, adapter: resolved.address)]
            }
            guard let handle = opendir(directory) else {
                if errno == ENOENT { return [] }
                printError("cannot read the bond directory \(directory): \(String(cString: strerror(errno)))")
                throw ExitCode(2)
            }
            defer { closedir(handle) }
            var stores: [BondStore] = []
            while let entry = readdir(handle) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard name.hasSuffix(".bonds"), let address = BluetoothAddress(name.dropLast(6)) else { continue }
                stores.append(BondStore(directory: directory, adapter: address))
            }
            return stores.sorted { $0.adapter < $1.adapter }
        }
    }

    /// Loads a store, or exits 2 with the error (the file is left as it is).
    static func load(_ store: BondStore) throws -> BondFile {
        do {
            return try store.load()
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "One line per bonded peer: adapter, peer address and type, the keys kept.")

        @OptionGroup var options: Options

        @Flag(help: "One JSON object per line: adapter, address, type, keys.")
        var json = false

        struct Line: Encodable {
            let adapter: String
            let address: String
            let type: String
            let keys: [String]
        }

        func run() throws {
            for store in try options.stores() {
                let bonds = try BondsCommand.load(store)
                for peer in bonds.peers {
                    var keys: [String] = []
                    for key in bonds.longTermKeys where key.peer == peer {
                        keys.append("ltk(\(key.keyType)\(key.central ? ", central" : ""))")
                    }
                    if bonds.identityResolvingKeys.contains(where: { $0.peer == peer }) { keys.append("irk") }
                    if bonds.signatureResolvingKeys.contains(where: { $0.peer == peer }) { keys.append("csrk") }
                    if json {
                        BluetoothDiagnostics.emit(JSONLine.text(Line(
                            adapter: "\(store.adapter)", address: "\(peer.address)", type: "\(peer.type)", keys: keys)))
                    } else {
                        BluetoothDiagnostics.emit("\(store.adapter)  \(peer.address) \(peer.type)  \(keys.joined(separator: " "))")
                    }
                }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget a peer's keys: from the bond files, and from the kernel (Unpair Device) when the adapter is there.")

        @Argument(help: "The peer's identity address, as 'msgpipe bonds list' shows it.")
        var address: String

        @OptionGroup var options: Options

        func validate() throws {
            guard BluetoothAddress(address) != nil else { throw ValidationError("'\(address)' is not an address (AA:BB:CC:DD:EE:FF)") }
        }

        func run() throws {
            guard let peerAddress = BluetoothAddress(address) else { throw ExitCode(1) }
            var removed = false
            for store in try options.stores() {
                var bonds = try BondsCommand.load(store)
                let peers = bonds.peers.filter { $0.address == peerAddress }
                guard bonds.remove(peerAddress) else { continue }
                do {
                    try store.save(bonds)
                } catch {
                    printError(error.description)
                    throw ExitCode(2)
                }
                removed = true
                BluetoothDiagnostics.print("msgpipe: removed the bond of \(peerAddress) from \(store.path)")
                Self.unpair(peers, on: store.adapter)
            }
            guard removed else {
                printError("no bond for \(peerAddress) in \(options.directory)")
                throw ExitCode(1)
            }
        }

        /// Unpair Device on the adapter with that address, when the kernel has it; otherwise says why not.
        static func unpair(_ peers: [BluetoothPeer], on adapterAddress: BluetoothAddress) {
            do {
                let management = try ManagementSocket()
                let adapter = try BluetoothAdapter.resolve(.address(adapterAddress), using: management)
                for peer in peers {
                    do {
                        try management.execute(UnpairDevice(peer: peer, disconnect: true).command(adapter.index))
                    } catch .commandFailed(_, let status) where status == .notPaired {
                        continue  // the kernel had no key for it (it restarted since)
                    }
                }
            } catch {
                BluetoothDiagnostics.print("msgpipe: the kernel still holds the key until it restarts: \(cli: error)")
            }
        }
    }
}
