@testable import GATT
import MemoryLinks
import Testing
import TestSupport

/// A real ``GATTClient`` against a real ``GATTServerConnection`` over an in-memory ATT bearer pair.
struct ClientServerPair {
    let client: GATTClient
    let server: GATTServerConnection
    let serverTask: Task<Void, Never>

    init(maximumMTU: Int = 517, clock: ATTClock = .continuous) throws {
        try self.init(server: TestDatabase.server(maximumMTU: maximumMTU), clock: clock)
    }

    init(server: GATTServer, clock: ATTClock = .continuous) throws {
        let (a, b) = bearerPair()
        client = GATTClient(bearer: a, clock: clock)
        self.server = GATTServerConnection(bearer: b, server: server, clock: clock)
        serverTask = Task { [connection = self.server] in await connection.run() }
    }

    /// The next application event, skipping none.
    func nextEvent() async -> GATTServerConnection.Event? { await server.events.next() }

    func close() async {
        client.close()
        server.close()
        await serverTask.value
    }
}

@Suite struct GATTClientServerTests {
    @Test func mtuExchangeAndDiscoveryFindTheServiceItsCharacteristicsAndDescriptors() async throws {
        let pair = try ClientServerPair(maximumMTU: 185)
        #expect(try await pair.client.exchangeMTU(247) == 185)
        #expect(await pair.nextEvent() == .server(.mtuExchanged(185)))
        let services = try await pair.client.discoverPrimaryServices()
        #expect(services == [
            GATTRemoteService(uuid: .bit16(0x180F), handles: .init(start: 1, end: 4)),
            GATTRemoteService(uuid: service128, handles: .init(start: 5, end: 13)),
        ])
        let service = try await pair.client.discoverPrimaryService(service128)
        #expect(service.handles == .init(start: 5, end: 13))
        let characteristics = try await pair.client.discoverCharacteristics(of: service)
        #expect(characteristics.map(\.uuid) == [TestDatabase.rx, TestDatabase.tx, TestDatabase.info])
        #expect(characteristics.map(\.valueHandle) == [7, 9, 12])
        #expect(characteristics.map(\.endHandle) == [7, 10, 13])
        #expect(characteristics[1].properties == [.notify, .indicate])
        let descriptors = try await pair.client.discoverDescriptors(of: characteristics[2])
        #expect(descriptors == [GATTRemoteDescriptor(handle: 13, uuid: .characteristicUserDescription)])
        await #expect(throws: ATTError.notFound(.bit16(0x1234))) {
            try await pair.client.discoverPrimaryService(.bit16(0x1234))
        }
        await pair.close()
    }

    @Test func longReadAssemblesTheValueWithReadBlobAtTheDefaultMTU() async throws {
        let pair = try ClientServerPair()
        #expect(try await pair.client.read(12) == TestDatabase.infoValue)
        await #expect(throws: ATTError.errorResponse(request: 0x0A, handle: 7, code: .readNotPermitted)) {
            try await pair.client.read(7)
        }
        await pair.close()
    }

    @Test func writesWithAndWithoutResponseReachTheApplicationInOrder() async throws {
        let pair = try ClientServerPair()
        try await pair.client.write(Array("req".utf8), to: 7)
        try await pair.client.writeWithoutResponse(Array("cmd".utf8)[...], to: 7)
        #expect(await pair.nextEvent() == .server(.write(handle: 7, value: Array("req".utf8), withResponse: true)))
        #expect(await pair.nextEvent() == .server(.write(handle: 7, value: Array("cmd".utf8), withResponse: false)))
        await #expect(throws: ATTError.valueTooLong(length: 21, limit: 20)) {
            try await pair.client.writeWithoutResponse(Array(repeating: 0, count: 21)[...], to: 7)
        }
        await pair.close()
    }

    @Test func longWriteGoesThroughPreparedWrites() async throws {
        let pair = try ClientServerPair()
        let value = (0..<50).map { UInt8($0) }
        try await pair.client.write(value, to: 7)
        #expect(await pair.nextEvent() == .server(.preparedWritesExecuted([GATTWrite(handle: 7, value: value)])))
        await pair.close()
    }

    @Test func notificationsArriveInOrder() async throws {
        let pair = try ClientServerPair()
        try await pair.client.exchangeMTU()
        _ = await pair.nextEvent()
        let service = try await pair.client.discoverPrimaryService(service128)
        let tx = try await pair.client.characteristic(TestDatabase.tx, of: service)
        try await pair.client.subscribe(to: tx)
        #expect(await pair.nextEvent() == .server(.subscriptionChanged(valueHandle: 9, .notifications)))
        let count = 2000
        let sender = Task {
            for index in 0..<count {
                try await pair.server.notify(valueHandle: 9, value: withUnsafeBytes(of: UInt32(index).littleEndian, Array.init)[...])
            }
        }
        var received = 0
        for await notification in pair.client.notifications {
            #expect(notification == GATTNotification(
                handle: 9, value: withUnsafeBytes(of: UInt32(received).littleEndian, Array.init), isIndication: false))
            received += 1
            if received == count { break }
        }
        try await sender.value
        #expect(received == count)
        await pair.close()
    }

    @Test func indicationsAreConfirmedOneAtATime() async throws {
        let pair = try ClientServerPair()
        let service = try await pair.client.discoverPrimaryService(service128)
        let tx = try await pair.client.characteristic(TestDatabase.tx, of: service)
        try await pair.client.subscribe(to: tx, indications: true)
        #expect(await pair.nextEvent() == .server(.subscriptionChanged(valueHandle: 9, .indications)))
        let reader = Task {
            var values: [[UInt8]] = []
            for await notification in pair.client.notifications {
                values.append(notification.value)
                if values.count == 3 { break }
            }
            return values
        }
        for index: UInt8 in 1...3 { try await pair.server.indicate(valueHandle: 9, value: [index][...]) }
        #expect(await reader.value == [[1], [2], [3]])
        for index: UInt16 in 1...3 {
            _ = index
            #expect(await pair.nextEvent() == .server(.indicationConfirmed(valueHandle: 9)))
        }
        await #expect(throws: ATTError.notSubscribed(handle: 9)) {
            try await pair.server.notify(valueHandle: 9, value: [1][...])
        }
        await pair.close()
    }

    @Test func requestToASilentServerTimesOutAfterThirtySecondsOfSimulatedTime() async throws {
        let time = ManualTime()
        let (bearer, silentPeer) = bearerPair()
        let client = GATTClient(bearer: bearer, clock: time.clock)
        defer { client.close(); silentPeer.close() }
        let reading = Task { try await client.read(3) }
        while time.sleeperCount == 0 { await Task.yield() }
        time.advance(to: .seconds(29))
        #expect(time.sleeperCount == 1)
        time.advance(to: .seconds(30))
        await #expect(throws: ATTError.transactionTimeout(request: 0x0A)) { try await reading.value }
        await #expect(throws: ATTError.transactionTimeout(request: 0x0A)) { try await client.read(3) }
    }

    @Test func unconfirmedIndicationTimesOutAndDisconnects() async throws {
        let time = ManualTime()
        let (bearer, rawClient) = bearerPair()
        let server = GATTServerConnection(bearer: bearer, server: TestDatabase.server(), clock: time.clock)
        let running = Task { await server.run() }
        try await rawClient.send(bytes("12 0a 00 02 00")[...])
        #expect(await rawClient.receive() == .pdu([0x13]))
        let indicating = Task { try await server.indicate(valueHandle: 9, value: [1][...]) }
        #expect(await rawClient.receive() == .pdu(bytes("1d 09 00 01")))
        while time.sleeperCount == 0 { await Task.yield() }
        time.advance(to: .seconds(30))
        await #expect(throws: ATTError.transactionTimeout(request: 0x1D)) { try await indicating.value }
        await running.value
        rawClient.close()
    }

    @Test func hostileBytesLeaveTheServerUpAndAnswering() async throws {
        let (bearer, raw) = bearerPair()
        let server = GATTServerConnection(bearer: bearer, server: TestDatabase.server())
        let running = Task { await server.run() }
        let drain = Task { for await _ in server.events {} }
        var generator = SplitMix64(seed: 0xBAD)
        for _ in 0..<3000 {
            let length = Int(generator.next() % 64)
            var pdu = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if let first = pdu.first, first & 0x40 == 0, first != 0x1E { pdu[0] = first | 0x40 }  // commands: no answer
            if pdu.isEmpty { continue }
            try await raw.send(pdu[...])
        }
        try await raw.send(bytes("0a 03 00")[...])
        let first = await raw.receive()
        #expect(first == .pdu([0x0B] + Array("battery".utf8)), "\(String(describing: first))")
        for request in ["20 01", "0a 03", "12 00 00 01", "10 01 00 ff ff 03 28"] {
            try await raw.send(bytes(request)[...])
            guard case let .pdu(response) = await raw.receive() else { break }
            #expect(response.first == ATTOpcode.errorResponse, "\(request)")
        }
        try await raw.send(bytes("0a 03 00")[...])
        #expect(await raw.receive() == .pdu([0x0B] + Array("battery".utf8)))
        raw.close()
        await running.value
        await drain.value
    }
}
