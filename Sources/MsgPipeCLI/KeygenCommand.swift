import MsgPipe
import ArgumentParser

/// `msgpipe keygen`: a new pre-shared key, or with `--x25519` a new identity key pair.
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Print a new pre-shared key (or X25519 identity) for request/serve.",
        discussion: """
            Without --x25519: one line 'msgpipe-psk:<64 hex digits>' on stdout (or in --out FILE, mode 0600);
            give the same file to both sides with --key-file.
            With --x25519: the private identity line 'msgpipe-x25519-private:<hex>' goes to --out FILE (or
            stdout), and its public key 'msgpipe-x25519-public:<hex>' to stdout (or stderr without --out);
            pass the public key to the other side's --peer-key.
            """)

    @Flag(help: "Generate an X25519 identity key pair instead of a pre-shared key.")
    var x25519 = false

    @Option(help: "Write the secret key to FILE (created with mode 0600) instead of stdout.")
    var out: String?

    func run() throws {
        let (secret, publicLine) = KeyFiles.newKey(x25519: x25519)
        if let out {
            do throws(KeyFileError) {
                try KeyFiles.create(out, holding: secret + "\n")
            } catch {
                switch error {
                case let .uncreatable(_, reason): printError("cannot create \(out): \(reason) (keygen never overwrites a key)")
                case let .unwritable(_, reason): printError("cannot write \(out): \(reason)")
                default: printError("\(error)")
                }
                throw ExitCode(1)
            }
            if let publicLine { BluetoothDiagnostics.emit(publicLine) }
        } else {
            BluetoothDiagnostics.emit(secret)
            if let publicLine { BluetoothDiagnostics.print(publicLine) }
        }
    }
}
