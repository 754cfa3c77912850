import Testing
import Transport

@Suite struct EndpointFaultTests {
    static let profiles: [(String, FaultProfile)] = [
        ("loss 5%", FaultProfile(loss: 0.05)),
        ("duplicate 10%", FaultProfile(duplicate: 0.10)),
        ("reorder 10%", FaultProfile(reorder: 0.10)),
        ("corrupt 2%", FaultProfile(corrupt: 0.02)),
        ("combined 5/2/2/1", FaultProfile(loss: 0.05, duplicate: 0.02, reorder: 0.02, corrupt: 0.01)),
        ("loss 30%", FaultProfile(loss: 0.30)),
        ("extreme 20/10/10/5", FaultProfile(loss: 0.20, duplicate: 0.10, reorder: 0.10, corrupt: 0.05)),
        ("disconnect every 300 ms", FaultProfile(disconnectEvery: .milliseconds(300))),
        (
            "combined with disconnects",
            FaultProfile(loss: 0.05, duplicate: 0.02, reorder: 0.02, corrupt: 0.01, disconnectEvery: .milliseconds(700))
        ),
    ]

    @Test(.serialized, arguments: profiles.indices, [20, 244])
    func everyMessageArrivesExactlyOnceAndIntact(profile: Int, packetSize: Int) throws {
        let (name, faults) = Self.profiles[profile]
        for seed: UInt64 in [1, 2] {
            var harness = EndpointHarness(packetSize: packetSize, faults: faults, seed: seed)
            let bodies = (0 ..< 12).map { payload(size: [0, 3, 300, 4000, 20_000][$0 % 5] + $0, seed: seed &+ UInt64($0)) }
            for body in bodies { try harness.submit(from: .a, body) }
            let done = harness.run(for: .seconds(600)) {
                $0.delivered[1].count >= bodies.count && $0.endpoints[0].isSendIdle
            }
            let context = "\(name) P=\(packetSize) seed \(seed) delivered \(harness.delivered[1].count) at \(harness.now)"
            #expect(done, "stalled: \(context)")
            print("\(context) packets \(harness.packetsSent) done \(done)")
            #expect(harness.delivered[1].map(\.messageID) == harness.delivered[1].indices.map { UInt32($0 + 1) }, "\(context)")
            #expect(harness.delivered[1].map(\.body) == bodies, "bodies differ: \(context)")
            #expect(harness.endpoints[1].receiverBufferedBytes == 0, "\(context)")
            let completed = harness.events[0].filter { if case .sendCompleted = $0 { true } else { false } }
            #expect(completed.count == bodies.count, "\(name) seed \(seed): \(harness.events[0].prefix(3))")
        }
    }

    /// The goal: 5 % loss + 2 % duplicate + 2 % reorder + 1 % corrupt keeps 75 % of the goodput.
    @Test(arguments: [(20, 0.75), (244, 0.75)])
    func combinedFaultsKeepMostOfTheFaultFreeGoodput(packetSize: Int, minimum: Double) throws {
        let bodies = (0 ..< 8).map { payload(size: 32 * 1024, seed: UInt64($0)) }
        var clean = EndpointHarness(packetSize: packetSize)
        for body in bodies { try clean.submit(from: .a, body) }
        #expect(clean.run { $0.delivered[1].count == bodies.count && $0.endpoints[0].isSendIdle })
        var faulty = EndpointHarness(
            packetSize: packetSize, faults: FaultProfile(loss: 0.05, duplicate: 0.02, reorder: 0.02, corrupt: 0.01),
            seed: 11)
        for body in bodies { try faulty.submit(from: .a, body) }
        #expect(faulty.run { $0.delivered[1].count == bodies.count && $0.endpoints[0].isSendIdle })
        #expect(faulty.delivered[1].map(\.body) == bodies, "bodies differ")
        let ratio = Double(clean.now.components.attoseconds / 1_000_000 + clean.now.components.seconds * 1_000_000_000_000)
            / Double(faulty.now.components.attoseconds / 1_000_000 + faulty.now.components.seconds * 1_000_000_000_000)
        print("P=\(packetSize): goodput with combined faults = \(ratio) of fault-free; packets \(faulty.packetsSent[0]) vs \(clean.packetsSent[0])")
        #expect(ratio >= minimum)
    }
}
