import Testing
import Transport

@Suite struct EndpointResumeTests {
    @Test(arguments: [20, 244])
    func messageCutByDisconnectsResumesWithoutStartingOver(packetSize: Int) throws {
        let body = payload(size: packetSize * 4000, seed: 5)
        var clean = EndpointHarness(packetSize: packetSize)
        try clean.submit(from: .a, body)
        #expect(clean.run { $0.delivered[1].count == 1 && $0.endpoints[0].isSendIdle })
        var cut = EndpointHarness(packetSize: packetSize, faults: FaultProfile(disconnectEvery: .milliseconds(200)))
        try cut.submit(from: .a, body)
        try cut.submit(from: .a, payload(size: 10, seed: 6))
        #expect(cut.run { $0.delivered[1].count == 2 && $0.endpoints[0].isSendIdle })
        #expect(cut.delivered[1].map(\.messageID) == [1, 2])
        #expect(cut.delivered[1].first?.body == body)
        #expect(cut.endpoints[1].receiverBufferedBytes == 0)
        // Each disconnect costs at most what was in flight: far from sending the message again.
        let disconnects = Int(cut.now / .milliseconds(200))
        #expect(disconnects >= 2)
        #expect(Double(cut.packetsSent[0]) < Double(clean.packetsSent[0]) * 1.25)
    }
}
