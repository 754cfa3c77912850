import BlueZLink
import GATT
import MsgPipe
import Synchronization
import Testing

/// A listener through bluetoothd shut down gracefully (SIGTERM, `PipeServer.close()`) takes its advertisement
/// away with UnregisterAdvertisement before its objects go: bluetoothd 5.66 keeps an empty advertising instance
/// on the adapter when the advertisement's object goes while it reads it.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BluetoothdAcceptorCloseTests {
    static func options(_ bus: PrivateBus) -> MessagePipe.Options {
        var options = MessagePipe.Options()
        options.backend = .bluez
        options.bluetoothdBus = bus.address
        options.adapter = "hci0"
        options.linkMode = .gatt
        return options
    }

    /// Waits (bounded) until the fake holds the advertisement.
    static func advertised(_ fake: FakeBlueZ) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while fake.record.advertisement.withLock({ $0 == nil }) {
            try #require(ContinuousClock.now < deadline, "the advertisement was never registered")
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("close() unregisters the advertisement, then the accept loop ends")
    func closeUnregistersTheAdvertisement() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let acceptor = PipeAcceptor(at: .bluetooth("msgpipe-close"), options: Self.options(bus))
        let loop = Task { try await acceptor.acceptLinks(info: MessagePipe.Options().serviceInfo()) { _, _ in } }
        try await Self.advertised(fake)
        await acceptor.close()
        #expect(fake.record.unregisteredAdvertisements.load(ordering: .relaxed) == 1)
        #expect(fake.record.advertisement.withLock { $0 == nil })
        try await loop.value
    }

    @Test("a server closed gracefully unregisters its advertisement through bluetoothd")
    func serverCloseUnregisters() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let server = try await PipeServer.serve(PipeAcceptor(at: .bluetooth("msgpipe-server"), options: Self.options(bus)))
        try await Self.advertised(fake)
        await server.close()
        #expect(fake.record.unregisteredAdvertisements.load(ordering: .relaxed) == 1)
    }
}
