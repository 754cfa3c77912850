public import ArgumentParser
import MsgPipe

/// The `msgpipe` command: moves whole messages over BLE GATT (or a UNIX socket, or a simulator).
public struct MsgPipeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "msgpipe",
        abstract: "Move whole messages of any size over Bluetooth LE GATT, reliably.",
        discussion: "Reference: docs/CLI.md. Start with `msgpipe listen --help` and `msgpipe send --help`.",
        version: MsgPipeBuild.versionLine,
        subcommands: [
            ListenCommand.self,
            SendCommand.self,
            ScanCommand.self,
            BondsCommand.self,
            RequestCommand.self,
            ServeCommand.self,
            KeygenCommand.self,
            BenchCommand.self,
            FrameCommand.self,
            DeframeCommand.self,
        ]
    )

    public init() {}

    /// Parses `arguments` (nil: the process's) as `msgpipe`, runs the command, and exits with its code.
    public static func run(_ arguments: [String]? = nil) async -> Never {
        await runAsRoot(Self.self, arguments)
    }
}

/// Parses `arguments` for `root`, runs the chosen (possibly asynchronous) command, then exits as
/// ArgumentParser's `main` would.
public func runAsRoot<Root: ParsableCommand>(_ root: Root.Type, _ arguments: [String]?) async -> Never {
    do {
        var command = try root.parseAsRoot(arguments)
        if var command = command as? any AsyncParsableCommand {
            try await command.run()
        } else {
            try command.run()
        }
        root.exit()
    } catch let error as ExitCode {
        root.exit(withError: error)
    } catch let error as ValidationError {
        root.exit(withError: error)
    } catch {
        // The library's errors name settings; printed here, they name the options that set them.
        let text = String(describing: error), flagged = FlagWords.flagged(text)
        root.exit(withError: flagged == text ? error : FlaggedError(description: flagged))
    }
}
