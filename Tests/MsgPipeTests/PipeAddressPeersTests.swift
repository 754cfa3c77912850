import MsgPipe
import Testing

/// A central's set of peers as the library checks it before connecting to each, and the adapter check.
struct PipeAddressPeersTests {
    @Test("an address names the same peer in any case and with /random; names and paths as written")
    func peerIdentity() {
        #expect(PipeAddress("c0:11:22:33:44:55/random").peerIdentity == PipeAddress("C0:11:22:33:44:55").peerIdentity)
        #expect(PipeAddress("door").peerIdentity != PipeAddress("Door").peerIdentity)
        #expect(PipeAddress("unix:/tmp/a").isSocket && !PipeAddress("door").isSocket)
        #expect(!PipeAddress("unix:").isSocket, "a socket needs a path")
    }

    @Test("several distinct peers of one kind pass")
    func distinctPeersPass() throws {
        try PipeAddress.checkPeers(["door", "hall", "C0:11:22:33:44:55"].map(PipeAddress.init))
        try PipeAddress.checkPeers(["unix:/tmp/a", "unix:/tmp/b"].map(PipeAddress.init))
    }

    @Test("too many, the same peer twice, or sockets with Bluetooth peers: each its own error")
    func rejectedSets() {
        let eight = (1...8).map { PipeAddress.bluetooth("peer-\($0)") }
        #expect(throws: PipeAddress.PeersError.tooMany(count: 8, limit: 7)) { try PipeAddress.checkPeers(eight) }
        #expect(throws: PipeAddress.PeersError.duplicate("C0:11:22:33:44:55", "c0:11:22:33:44:55/random")) {
            try PipeAddress.checkPeers(["C0:11:22:33:44:55", "c0:11:22:33:44:55/random"].map(PipeAddress.init))
        }
        #expect(throws: PipeAddress.PeersError.mixed) {
            try PipeAddress.checkPeers(["unix:/tmp/a", "door"].map(PipeAddress.init))
        }
    }

    @Test("unix: without a path fails where the rules meet it in order: after a peer named twice before it, before a mix")
    func emptySocketPath() {
        #expect(throws: PipeAddress.PeersError.emptySocketPath) { try PipeAddress.checkPeers([PipeAddress("unix:")]) }
        #expect(throws: PipeAddress.PeersError.emptySocketPath) {
            try PipeAddress.checkPeers(["unix:/tmp/a", "unix:", "door"].map(PipeAddress.init))
        }
        #expect(throws: PipeAddress.PeersError.duplicate("door", "door")) {
            try PipeAddress.checkPeers(["door", "door", "unix:"].map(PipeAddress.init))
        }
        let eight = ["unix:"] + (1...7).map { "peer-\($0)" }
        #expect(throws: PipeAddress.PeersError.tooMany(count: 8, limit: 7)) { try PipeAddress.checkPeers(eight.map(PipeAddress.init)) }
    }

    @Test("an adapter is hciN or an address; anything else fails before a connect")
    func adapterCheck() throws {
        try MessagePipe.Options.checkAdapter(nil)
        try MessagePipe.Options.checkAdapter("hci1")
        try MessagePipe.Options.checkAdapter("00:AA:01:00:00:00")
        #expect(throws: (any Error).self) { try MessagePipe.Options.checkAdapter("wlan0") }
    }

    @Test("scan criteria take a 16- or 128-bit service UUID and a positive attenuation")
    func scanCriteria() throws {
        _ = try ScanCriteria(service: "180D")
        _ = try ScanCriteria(service: "12345678-1234-5678-1234-56789abcdef0", name: "till-7", attenuation: 3)
        #expect(throws: ScanCriteria.Failure.notAServiceUUID("heart")) { try ScanCriteria(service: "heart") }
        #expect(throws: ScanCriteria.Failure.attenuationNotPositive) { try ScanCriteria(attenuation: 0) }
    }
}
