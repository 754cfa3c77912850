import GATT
import MsgPipe
import Testing
@testable import MsgPipeCLI

/// `listen` as the central hands its connection parameters to every link it opens, to one `--to` or to several.
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
        let request = try #require(options.connectionParameters)
        #expect(request.interval?.minimum == 12)   // 15 ms in 1.25 ms units
        #expect(request.interval?.maximum == 24)   // 30 ms
        #expect(request.latency == 2)
        #expect(request.supervisionTimeout == 200)  // 2000 ms in 10 ms units
        #expect(request.phy == .le2M)
        #expect(options.holdsAcknowledgements)
    }

    @Test func withoutTheOptionsTheAdapterDefaultsStand() throws {
        let command = try ListenCommand.parse(["--to", "door", "--to", "hall"])
        #expect(try command.receiverOptions(asCentral: true).connectionParameters == nil)
    }
}
