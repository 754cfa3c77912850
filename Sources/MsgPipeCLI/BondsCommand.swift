import ArgumentParser
import MsgPipe

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

        /// The directory, as the library reads it.
        var bonds: PipeBonds { PipeBonds(directory) }
    }

    /// Runs `body`; a directory or bond file that cannot be read exits 2 with the error (nothing changed).
    static func reading<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PipeBonds.Unreadable {
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
            for bond in try BondsCommand.reading({ try options.bonds.list(adapter: options.adapter) }) {
                if json {
                    BluetoothDiagnostics.emit(JSONLine.text(Line(
                        adapter: "\(bond.adapter)", address: "\(bond.peer.address)", type: "\(bond.peer.type)", keys: bond.keys)))
                } else {
                    BluetoothDiagnostics.emit("\(bond.adapter)  \(bond.peer.address) \(bond.peer.type)  \(bond.keys.joined(separator: " "))")
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
            let removals = try BondsCommand.reading { try options.bonds.remove(peerAddress, adapter: options.adapter) }
            for removal in removals {
                BluetoothDiagnostics.print("msgpipe: removed the bond of \(peerAddress) from \(removal.file)")
                if let failure = removal.kernelFailure {
                    BluetoothDiagnostics.print("msgpipe: the kernel still holds the key until it restarts: \(cli: failure)")
                }
            }
            guard !removals.isEmpty else {
                printError("no bond for \(peerAddress) in \(options.directory)")
                throw ExitCode(1)
            }
        }
    }
}
