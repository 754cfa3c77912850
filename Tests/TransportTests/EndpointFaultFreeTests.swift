import Testing
import Transport

@Suite struct EndpointFaultFreeTests {
    @Test(arguments: [0, 1, 5, 14, 15, 16, 100, 1000, 10_000])
    func messageOfAnySizeArrivesIntactAtPacketSize20(size: Int) throws {
        var harness = EndpointHarness(packetSize: 20)
        let body = payload(size: size, seed: UInt64(size))
        try harness.submit(from: .a, body)
        let done = harness.run { $0.delivered[1].count == 1 && !$0.events[0].isEmpty }
        #expect(done)
        #expect(harness.delivered[1].map(\.body) == [body])
        #expect(harness.endpoints[0].retransmittedSegments == 0, "a lossless link needs no retransmission")
        guard case .sendCompleted = harness.events[0].first else {
            Issue.record("expected sendCompleted, got \(harness.events[0])")
            return
        }
    }

    @Test(arguments: [20, 23, 61, 185, 244, 514])
    func manyMessagesArriveInOrderAtEveryPacketSize(packetSize: Int) throws {
        var harness = EndpointHarness(packetSize: packetSize)
        let bodies = (0 ..< 20).map { payload(size: 37 * $0 * $0, seed: UInt64($0)) }
        for body in bodies { try harness.submit(from: .a, body) }
        #expect(harness.run { $0.delivered[1].count == bodies.count && $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].map(\.body) == bodies)
    }

    @Test(arguments: [(20, 0.90), (244, 0.98)])
    func faultFreeEfficiencyOfALargeMessage(packetSize: Int, minimum: Double) throws {
        var harness = EndpointHarness(packetSize: packetSize)
        let body = payload(size: 256 * 1024, seed: 7)
        try harness.submit(from: .a, body)
        #expect(harness.run { $0.delivered[1].count == 1 && $0.endpoints[0].isSendIdle })
        let efficiency = harness.efficiency(bodyBytes: body.count)
        print("fault-free efficiency at P=\(packetSize): \(efficiency), acks \(harness.packetsSent[1])")
        #expect(efficiency >= minimum)
    }
}
