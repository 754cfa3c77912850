import BLELink
import BlueZLink
import SDBus
import GATT
import Testing

/// `--security` on the D-Bus peripheral: the characteristic flags bluetoothd enforces, and the Just Works
/// agent registered for medium.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BlueZPeripheralSecurityTests {
    static let info = BlueZPeripheralTests.info

    static func withPeripheral(
        security: L2CAPSecurityLevel, profile: GATTServiceProfile = .msgpipe, refuseDefaultAgent: Bool = false,
        _ body: (FakeBlueZ, BlueZPeripheral) async throws -> Void
    ) async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address, refuseDefaultAgent: refuseDefaultAgent)
        defer { fake.stop() }
        let app = try DBusConnection(address: bus.address)
        defer { app.close() }
        let peripheral = try await BlueZPeripheral.start(bus: app, profile: profile, info: info, localName: "secure",
                                                         security: security)
        defer { peripheral.stop() }
        try await body(fake, peripheral)
    }

    /// The Flags of a characteristic in the registered tree (nil when nothing is registered).
    static func flags(_ fake: FakeBlueZ, _ characteristic: String) -> [String]? {
        let tree = fake.record.application.withLock { $0?.tree }
        return tree?["/org/msgpipe/app/service0/" + characteristic]?["org.bluez.GattCharacteristic1"]?["Flags"]?.stringArray
    }

    @Test(arguments: [
        (L2CAPSecurityLevel.low, ["write", "write-without-response"], ["notify", "indicate"]),
        (.medium, ["encrypt-write", "write-without-response"], ["encrypt-notify", "encrypt-indicate"]),
        (.high, ["encrypt-authenticated-write", "write-without-response"],
         ["encrypt-authenticated-notify", "encrypt-authenticated-indicate"]),
    ])
    func theValuesCarryTheLevelAndTheInfoStaysPlain(level: L2CAPSecurityLevel, rx: [String], tx: [String]) async throws {
        try await Self.withPeripheral(security: level) { fake, _ in
            #expect(Self.flags(fake, "char0") == rx)
            #expect(Self.flags(fake, "char1") == tx)
            #expect(Self.flags(fake, "char2") == ["read"])
            // Our Just Works agent only for medium: low does not pair, and high needs an agent with input.
            #expect(fake.record.agent.withLock { $0 != nil } == (level == .medium))
        }
    }

    @Test func nusNotifiesOnlyAndGetsTheEncryptedNotify() async throws {
        try await Self.withPeripheral(security: .medium, profile: .nordicUART) { fake, _ in
            #expect(Self.flags(fake, "char0") == ["encrypt-write", "write-without-response"])
            #expect(Self.flags(fake, "char1") == ["encrypt-notify"])
        }
    }

    @Test func aJustWorksAgentIsRegisteredAsDefaultAndConfirms() async throws {
        try await Self.withPeripheral(security: .medium) { fake, _ in
            let agent = try #require(fake.record.agent.withLock { $0 })
            #expect(agent.path == "/org/msgpipe/agent")
            #expect(agent.capability == "NoInputNoOutput")
            #expect(fake.record.defaultAgentRequests.withLock { $0 } == ["/org/msgpipe/agent"])
            let device = BlueZPeripheralTests.device
            func call(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
                try await fake.bus.call(destination: agent.owner, path: agent.path, interface: "org.bluez.Agent1",
                                        member: member, arguments: arguments)
            }
            #expect(try await call("RequestConfirmation", [.objectPath(device), .uint32(123_456)]) == [])
            #expect(try await call("RequestAuthorization", [.objectPath(device)]) == [])
            #expect(try await call("AuthorizeService", [.objectPath(device), .string("4d500001-8c5d-4e2b-9f1a-6d7367706970")]) == [])
            #expect(try await call("Cancel", []) == [])
            for (member, arguments) in [("RequestPasskey", [DBusValue.objectPath(device)]), ("RequestPinCode", [.objectPath(device)])] {
                let refusal = await #expect(throws: DBusError.self) { try await call(member, arguments) }
                #expect(refusal?.name == "org.bluez.Error.Rejected")
            }
            #expect(try await call("Release", []) == [])
        }
    }

    @Test func anotherDefaultAgentDoesNotStopThePeripheral() async throws {
        try await Self.withPeripheral(security: .medium, refuseDefaultAgent: true) { fake, _ in
            #expect(fake.record.defaultAgentRequests.withLock { $0 } == ["/org/msgpipe/agent"])
            #expect(fake.record.agent.withLock { $0?.capability } == "NoInputNoOutput")
            #expect(fake.record.advertisement.withLock { $0 } != nil)
        }
    }

    @Test func theAgentIsRegisteredAgainWithARestartedBluetoothd() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let first = try await FakeBlueZ(address: bus.address)
        defer { first.stop() }
        let app = try DBusConnection(address: bus.address)
        defer { app.close() }
        let (events, reported) = AsyncStream.makeStream(of: BlueZPeripheral.Event.self)
        let peripheral = try await BlueZPeripheral.start(bus: app, profile: .msgpipe, info: Self.info, localName: "secure",
                                                         security: .medium) { reported.yield($0) }
        defer { peripheral.stop() }
        var notices = events.makeAsyncIterator()
        first.stop()
        #expect(await notices.next() == .bluetoothdLeft(disconnectedLinks: 0))
        let second = try await FakeBlueZ(address: bus.address)
        defer { second.stop() }
        #expect(await notices.next() == .registeredAgain)
        #expect(second.record.agent.withLock { $0?.path } == "/org/msgpipe/agent")
        #expect(Self.flags(second, "char0") == ["encrypt-write", "write-without-response"])
    }
}
