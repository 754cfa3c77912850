public import ArgumentParser
public import MsgPipe

/// The Bluetooth options of every command that uses a local controller (`scan`, and `listen`/`send` over BLE).
public struct AdapterOptions: ParsableArguments, Sendable {
    @Option(help: "The Bluetooth adapter: hciN or its address (default: the first powered LE adapter).")
    public var adapter: String?

    @Option(help: "Be the peripheral and advertise this local name (default for a peripheral: msgpipe).")
    public var name: String?

    @Option(name: .customLong("to"), help: """
        Be the central and connect to this peer: ADDRESS, ADDRESS/random, an advertised NAME, or unix:PATH. \
        send and listen take it up to 7 times: one central on several peers at once.
        """)
    public var peers: [PipeAddress] = []

    /// The peer of a single `--to` (the first of several), as written.
    public var to: String? { peers.first?.description }

    /// The local name a peripheral advertises.
    public var localName: String { name ?? "msgpipe" }

    @Option(help: """
        Link security: low (none), medium (encrypted, Just Works pairing), high (authenticated pairing; through \
        bluetoothd it needs an agent with input or a display).
        """)
    public var security: String = "low"

    @Option(name: .customLong("bonds"), help: ArgumentHelp("""
        Kernel backend, peripheral with --security medium: keep the keys of bonded phones in DIR (created 0700, \
        one file per adapter), so they reconnect encrypted after a restart. Without it no bond outlives the kernel. \
        Not with --backend bluez: bluetoothd keeps its own bonds.
        """, valueName: "DIR"))
    public var bondDirectory: String?

    @Option(help: "Seconds a connect attempt (and a scan for --to NAME) may take.")
    public var connectTimeout: Double = 20

    @Option(help: "The Bluetooth stack: auto (bluez when bluetoothd runs), bluez (through bluetoothd), kernel.")
    public var backend: PipeBackend.Name = .auto

    @Option(help: """
        What carries the data: auto (the peripheral's L2CAP channel where it publishes one, else GATT), gatt, \
        or l2cap (the channel only; a peripheral then serves GATT only to publish it).
        """)
    public var linkMode: LinkMode = .auto

    public init() {}

    /// True when the user asked for Bluetooth (an adapter or a peer), not another link.
    var usesBluetooth: Bool {
        adapter != nil || peers.contains { !$0.isSocket } || backend != .auto || linkMode != .auto
    }

    public func validate() throws {
        try MessagePipe.Options.checkAdapter(adapter)
        _ = try securityLevel()
        guard connectTimeout > 0 else { throw ValidationError("--connect-timeout must be positive") }
        if backend == .bluez, bondDirectory != nil {
            throw ValidationError("--bonds is for the kernel backend: through bluetoothd (--backend bluez) bonds are "
                + "bluetoothd's own ('bluetoothctl remove ADDRESS' forgets one); use --backend kernel (with bluetoothd "
                + "stopped) to keep them in DIR")
        }
        try Self.validatePeers(peers)
    }

    /// The rules of a repeated `--to`: the library's ``PipeAddress/checkPeers(_:)``.
    static func validatePeers(_ peers: [PipeAddress]) throws(ValidationError) {
        do throws(PipeAddress.PeersError) {
            try PipeAddress.checkPeers(peers)
        } catch let .tooMany(count, limit) {
            throw ValidationError("--to takes at most \(limit) peers (one central's links), not \(count)")
        } catch let .duplicate(earlier, peer) {
            throw ValidationError("--to names the same peer twice: '\(earlier)' and '\(peer)'")
        } catch .emptySocketPath {
            throw ValidationError("--to unix:PATH needs a PATH")
        } catch {
            throw ValidationError("--to unix:PATH and Bluetooth peers exclude each other")
        }
    }

    /// The library's backend for `--backend`, carrying the kernel's options: `--bonds` and `parameters` (the
    /// connection parameters and PHY). `--backend bluez` carries none: with `parameters` it is a usage error
    /// with the library's remedy (bluetoothd's main.conf, or `--backend kernel`), with `--bonds` one of
    /// ``validate()``.
    func pipeBackend(parameters: ConnectionParameterRequest?) throws(ValidationError) -> PipeBackend {
        do throws(MessagePipeError) {
            return try PipeBackend(backend, kernel: KernelOptions(connectionParameters: parameters, bondDirectory: bondDirectory))
        } catch {
            throw ValidationError(FlagWords.flagged("\(error)"))
        }
    }

    public func securityLevel() throws(ValidationError) -> L2CAPSecurityLevel {
        guard let level = L2CAPSecurityLevel(rawValue: security) else {
            throw ValidationError("--security must be low, medium or high, not '\(security)'")
        }
        return level
    }
}

/// Unbuffered line output of the Bluetooth commands (a line shows up at once, even when piped).
public enum BluetoothDiagnostics {
    /// One diagnostic line on stderr.
    public static func print(_ message: String) { write(message, to: 2) }

    /// One data line on stdout.
    public static func emit(_ message: String) { write(message, to: 1) }

    private static func write(_ message: String, to descriptor: Int32) {
        try? OutputBuffer.write(Array((message + "\n").utf8), to: descriptor)
    }
}

extension PipeBackend.Name: ExpressibleByArgument {}
extension PipeAddress: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}
extension LinkMode: ExpressibleByArgument {}
