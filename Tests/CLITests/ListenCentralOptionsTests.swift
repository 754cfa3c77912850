import ArgumentParser
import GATT
import MsgPipe
import Testing
@testable import MsgPipeCLI

/// `listen` as the central hands its connection parameters to every link it opens, to one `--to` or to several:
/// they travel in the options' backend, which every link's stack is picked from.
struct ListenCentralOptionsTests {
    static let parameters = ["--conn-interval", "15-30", "--conn-latency", "2", "--supervision-timeout", "2000", "--phy", "2m"]

    @Test("every --to gets --conn-interval, --conn-latency, --supervision-timeout and --phy", arguments: [
        ["--to", "door"],
        ["--to", "door", "--to", "hall", "--to", "lobby"],
    ])
    func connectionParametersReachTheLinkOptions(peers: [String]) throws {
        let command = try ListenCommand.parse(peers + ["--backend", "kernel"] + Self.parameters)
        #expect(command.link.hasSeveralPeers == (peers.count > 2))
        let options = try command.receiverOptions(asCentral: true)
        #expect(options.backend.name == .kernel)
        let request = try #require(options.backend.kernelOptions?.connectionParameters)
        #expect(request.interval?.minimum == 12)   // 15 ms in 1.25 ms units
        #expect(request.interval?.maximum == 24)   // 30 ms
        #expect(request.latency == 2)
        #expect(request.supervisionTimeout == 200)  // 2000 ms in 10 ms units
        #expect(request.phy == .le2M)
        #expect(options.holdsAcknowledgements)
    }

    @Test("without --backend the parameters ride on auto, for when it picks the kernel")
    func withoutABackendTheyRideOnAuto() throws {
        let command = try ListenCommand.parse(["--to", "door", "--to", "hall"] + Self.parameters)
        let options = try command.receiverOptions(asCentral: true)
        #expect(options.backend.name == .auto)
        #expect(options.backend.kernelOptions?.connectionParameters?.interval?.maximum == 24)
    }

    @Test func withoutTheOptionsTheAdapterDefaultsStand() throws {
        let command = try ListenCommand.parse(["--to", "door", "--to", "hall"])
        #expect(try command.receiverOptions(asCentral: true).backend.kernelOptions?.connectionParameters == nil)
    }

    @Test("--backend bluez with connection parameters is a usage error naming the remedy, before any link")
    func bluezRefusesThemAsAUsageError() throws {
        let command = try ListenCommand.parse(["--to", "door", "--backend", "bluez", "--conn-interval", "15-30"])
        #expect {
            _ = try command.receiverOptions(asCentral: true)
        } throws: { error in
            let message = "\((error as? ValidationError)?.message ?? "")"
            return message.contains("MinConnectionInterval=12 MaxConnectionInterval=24")
                && message.contains("or use --backend kernel (with bluetoothd stopped)")
        }
    }

    @Test("--bonds is refused through bluetoothd and carried by auto for the kernel")
    func bondsOnlyWhereTheKernelMayApplyThem() throws {
        #expect(throws: (any Error).self) {
            try ListenCommand.parse(["--to", "door", "--backend", "bluez", "--bonds", "/tmp/bonds"])
        }
        let auto = try ListenCommand.parse(["--to", "door", "--bonds", "/tmp/bonds"])
        #expect(try auto.receiverOptions(asCentral: true).backend.kernelOptions?.bondDirectory == "/tmp/bonds")
    }
}
