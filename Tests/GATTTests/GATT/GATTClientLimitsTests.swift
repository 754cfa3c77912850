@testable import GATT
import Testing

/// The client against the 512-byte attribute limit and the MTU: what one PDU carries, what long reads and
/// writes assemble.
@Suite struct GATTClientLimitsTests {
    @Test func writeCommandsCarryAtMost512BytesAtTheLargestMTU() async throws {
        let pair = try ClientServerPair(server: GATTServerConformanceTests.longValueServer)
        #expect(pair.client.maximumWriteCommandLength == 20, "before the MTU exchange")
        #expect(try await pair.client.exchangeMTU(517) == 517)
        #expect(pair.client.maximumWriteCommandLength == 512)
        let value = (0..<512).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try await pair.client.writeWithoutResponse(value[...], to: 3)
        await #expect(throws: ATTError.valueTooLong(length: 513, limit: 512)) {
            try await pair.client.writeWithoutResponse((value + [0])[...], to: 3)
        }
        #expect(await pair.nextEvent() == .server(.mtuExchanged(517)))
        #expect(await pair.nextEvent() == .server(.write(handle: 3, value: value, withResponse: false)))
        #expect(try await pair.client.read(3) == value, "one Read at MTU 517")
        await pair.close()
    }

    @Test func a512ByteValueIsWrittenAndReadBackWholeAtTheDefaultMTU() async throws {
        let pair = try ClientServerPair(server: GATTServerConformanceTests.longValueServer)
        let value = (0..<512).map { UInt8(truncatingIfNeeded: $0 * 13) }
        try await pair.client.write(value, to: 3)
        #expect(await pair.nextEvent() == .server(.preparedWritesExecuted([GATTWrite(handle: 3, value: value)])))
        #expect(try await pair.client.read(3) == value, "a Read and Read Blobs, 22 bytes each")
        await #expect(throws: ATTError.valueTooLong(length: 513, limit: 512)) { try await pair.client.write(value + [0], to: 3) }
        await pair.close()
    }
}
