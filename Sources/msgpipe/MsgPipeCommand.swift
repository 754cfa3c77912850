import ArgumentParser

/// The `msgpipe` command: moves whole messages over BLE GATT (or a UNIX socket, or a simulator).
@main
struct MsgPipeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "msgpipe",
        abstract: "Move whole messages of any size over Bluetooth LE GATT, reliably.",
        subcommands: [
            FrameCommand.self,
            DeframeCommand.self,
            ListenCommand.self,
            SendCommand.self,
            RequestCommand.self,
            ServeCommand.self,
            KeygenCommand.self,
            ScanCommand.self,
            BenchCommand.self,
            LabProbeCommand.self,
        ]
    )
}
