import MsgPipe
import ArgumentParser
import Glibc

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
        let secret: String
        var publicLine: String?
        if x25519 {
            let identity = IdentityKey()
            secret = identity.text
            publicLine = identity.publicKey.text
        } else {
            secret = PreSharedKey().text
        }
        if let out {
            try Self.writeSecret(secret + "\n", to: out)
            if let publicLine { BluetoothDiagnostics.emit(publicLine) }
        } else {
            BluetoothDiagnostics.emit(secret)
            if let publicLine { BluetoothDiagnostics.print(publicLine) }
        }
    }

    private static func writeSecret(_ text: String, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            printError("cannot create \(path): \(String(cString: strerror(errno))) (keygen never overwrites a key)")
            throw ExitCode(1)
        }
        defer { _ = close(descriptor) }
        var text = text
        let written = text.withUTF8 { write(descriptor, $0.baseAddress, $0.count) }
        guard written == text.utf8.count, fsync(descriptor) == 0 else {
            printError("cannot write \(path): \(String(cString: strerror(errno)))")
            throw ExitCode(1)
        }
    }
}
