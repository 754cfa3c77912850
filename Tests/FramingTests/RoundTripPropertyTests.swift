import PropertyBased
import Testing
@testable import Framing

@Suite("round trips")
struct RoundTripPropertyTests {
    @Test("small payloads, with and without marker fragments, round-trip at packet sizes 20 to 514",
        arguments: FrameFormat.allCases)
    func smallPayloads(format: FrameFormat) async {
        await propertyCheck(
            count: 300, input: Gen.int(in: 0...3000), Gen.int(in: 20...514), Gen.uint64(), Gen.bool
        ) { count, packetSize, seed, fragments in
            let payload = generatedPayload(count: count, seed: seed, fragments: fragments, newlines: format != .lines)
            try expectRoundTrip(format, payload, packetSize: packetSize)
        }
    }

    @Test("large payloads up to 1 MiB round-trip at packet sizes 20 to 514", arguments: FrameFormat.allCases)
    func largePayloads(format: FrameFormat) async {
        await propertyCheck(
            count: 8, input: Gen.int(in: 0...(1 << 20)), Gen.int(in: 20...514), Gen.uint64(), Gen.bool
        ) { count, packetSize, seed, fragments in
            let payload = generatedPayload(count: count, seed: seed, fragments: fragments, newlines: format != .lines)
            try expectRoundTrip(format, payload, packetSize: packetSize)
        }
    }

    @Test("1 MiB round-trips at the smallest and largest BLE packet sizes", arguments: FrameFormat.allCases)
    func mebibyteAtExtremes(format: FrameFormat) throws {
        let payload = generatedPayload(count: 1 << 20, seed: 42, fragments: true, newlines: format != .lines)
        for packetSize in [20, 514] { try expectRoundTrip(format, payload, packetSize: packetSize) }
    }

    @Test("a marker at every offset round-trips, down to each format's smallest packet size",
        arguments: [FrameFormat.legacy, .eom, .msgpipe])
    func markerAtEveryOffset(format: FrameFormat) throws {
        for marker in ["Start", "End", "EOM", "StartStart", "EndEnd", "EOMEOM", "StartEnd"].map(ascii) {
            for packetSize in Set([format.minimumPacketSize, format.minimumPacketSize + 1, 7, 10, 20])
            where packetSize >= format.minimumPacketSize {
                for offset in 0...(2 * packetSize + 2) {
                    for tail in [0, 1, 2, 5, packetSize] {
                        let payload = [UInt8](repeating: 0x2E, count: offset) + marker
                            + [UInt8](repeating: 0x2E, count: tail)
                        try expectRoundTrip(format, payload, packetSize: packetSize)
                    }
                }
            }
        }
    }

    @Test("every payload of up to five marker pieces round-trips at small packet sizes",
        arguments: [FrameFormat.legacy, .eom])
    func markerCompositions(format: FrameFormat) throws {
        let pieces = ["Start", "End", "EOM", "S", "E", "x", "St", "EO"].map(ascii)
        var payloads: [[UInt8]] = [[]]
        var layer: [[UInt8]] = [[]]
        for _ in 0..<4 {
            layer = layer.flatMap { prefix in pieces.map { prefix + $0 } }
            payloads += layer
        }
        for payload in payloads {
            for packetSize in format.minimumPacketSize...(format.minimumPacketSize + 4) {
                try expectRoundTrip(format, payload, packetSize: packetSize)
            }
        }
    }

    @Test("lines round-trips marker-only payloads and refuses any containing a newline")
    func linesWithNewlines() throws {
        for offset in 0..<30 {
            let payload = [UInt8](repeating: 0x61, count: offset) + ascii("\n") + ascii("tail")
            #expect(throws: FramingError.payloadContainsNewline(offset: offset)) {
                try packets(.lines, payload, packetSize: 20)
            }
        }
    }
}
