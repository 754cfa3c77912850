import BLELink
import BlueZLink
import SDBus
import Glibc
import Synchronization
import Testing

/// The D-Bus layer against a private dbus-daemon: calls, replies and errors, every value type including
/// file descriptors, exported properties and the object manager, signals, limits, and closing.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct DBusConnectionTests {
    static let interface = "org.msgpipe.Test1"
    static let path = "/org/msgpipe/test/object"

    /// A bus with a server connection owning "org.msgpipe.Test" exporting ``testInterface()`` at ``path``
    /// under an object manager at /org/msgpipe/test, and a client connection.
    static func withServer(
        clientLimits: DBusLimits = DBusLimits(), serverLimits: DBusLimits = DBusLimits(),
        _ body: (_ client: DBusConnection, _ server: DBusConnection) async throws -> Void
    ) async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let server = try DBusConnection(address: bus.address, limits: serverLimits)
        let client = try DBusConnection(address: bus.address, limits: clientLimits)
        defer {
            client.close()
            server.close()
        }
        let manager = try await server.addObjectManager(at: "/org/msgpipe/test")
        let exported = try await server.export(testInterface(), at: path)
        try await server.requestName("org.msgpipe.Test")
        try await body(client, server)
        exported.cancel()
        manager.cancel()
    }

    static func testInterface() -> DBusInterface {
        DBusInterface(
            name: interface,
            methods: [
                DBusMethod("Echo", input: "ayqa{sv}aoh(si)b", output: "ayqa{sv}aoh(si)b") { call in call.arguments },
                DBusMethod("Fail") { _ throws(DBusError) in
                    throw .remote(name: "org.msgpipe.Error.Test", message: "as asked")
                },
                DBusMethod("Later", input: "u", output: "u") { call in
                    Task {
                        try? await Task.sleep(for: .milliseconds(20))
                        call.reply([.uint32((call.arguments.first?.uint32Value ?? 0) + 1)])
                    }
                    return nil
                },
                DBusMethod("Never") { _ in nil },
                DBusMethod("WrongReply", output: "s") { _ in [.uint32(7)] },
                DBusMethod("Count", input: "ay", output: "u") { call in [.uint32(UInt32(call.arguments[0].bytesValue?.count ?? 0))] },
            ],
            properties: [
                DBusProperty("Name", .string("test")),
                DBusProperty("Flags", .strings(["read", "notify"])),
                DBusProperty("Level", signature: "q") { .uint16(42) },
            ])
    }

    static func call(_ client: DBusConnection, _ member: String, _ arguments: [DBusValue] = []) async throws(DBusError) -> [DBusValue] {
        try await client.call(destination: "org.msgpipe.Test", path: path, interface: interface, member: member,
                              arguments: arguments, timeout: .seconds(5))
    }

    @Test func everyValueTypeRoundTripsIncludingAFileDescriptor() async throws {
        try await Self.withServer { client, _ in
            var fds: [Int32] = [-1, -1]
            #expect(pipe(&fds) == 0)
            defer { Glibc.close(fds[1]) }
            let sent: [DBusValue] = [
                .bytes([0, 1, 2, 255]), .uint16(517),
                .variantDictionary([("device", .objectPath("/org/bluez/hci0/dev_11_22_33_44_55_66")), ("mtu", .uint16(185)),
                                    ("nested", .variantDictionary([("x", .int64(-5))]))]),
                .objectPaths(["/a", "/b/c"]), .unixFD(DBusFileDescriptor(adopting: fds[0])),
                .structure([.string("é ünïcode"), .int32(-3)]), .boolean(true),
            ]
            let echoed = try await Self.call(client, "Echo", sent)
            #expect(echoed.count == sent.count)
            #expect(echoed[0] == sent[0])
            #expect(echoed[1] == sent[1])
            #expect(echoed[2] == sent[2])
            #expect(echoed[2].stringKeyed?["mtu"] == .uint16(185))
            #expect(echoed[3].stringArray == ["/a", "/b/c"])
            #expect(echoed[5] == sent[5])
            #expect(echoed[6] == .boolean(true))
            // The descriptor that came back is a duplicate of the pipe's read end: bytes written show up in it.
            let received = try #require(echoed[4].fileDescriptorValue?.rawValue)
            var byte: UInt8 = 0x5A
            #expect(write(fds[1], &byte, 1) == 1)
            var readBack: UInt8 = 0
            #expect(read(received, &readBack, 1) == 1)
            #expect(readBack == 0x5A)
        }
    }

    @Test func anErrorReplyCarriesItsNameAndMessage() async throws {
        try await Self.withServer { client, _ in
            await #expect(throws: DBusError.remote(name: "org.msgpipe.Error.Test", message: "as asked")) {
                try await Self.call(client, "Fail")
            }
            let wrong = await #expect(throws: DBusError.self) { try await Self.call(client, "WrongReply") }
            #expect(wrong?.name == "org.freedesktop.DBus.Error.Failed")
            let unknown = await #expect(throws: DBusError.self) {
                try await client.call(destination: "org.msgpipe.Nobody", path: "/", interface: "a.b", member: "C")
            }
            #expect(unknown?.name == "org.freedesktop.DBus.Error.ServiceUnknown")
            let badArguments = await #expect(throws: DBusError.self) { try await Self.call(client, "Count", [.uint32(1)]) }
            #expect(badArguments?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        }
    }

    @Test func aHandlerMayAnswerLaterOrNotAtAll() async throws {
        try await Self.withServer { client, _ in
            let later = try await Self.call(client, "Later", [.uint32(41)])
            #expect(later == [.uint32(42)])
            let never = await #expect(throws: DBusError.self) { try await Self.call(client, "Never") }
            #expect(never?.name == "org.freedesktop.DBus.Error.NoReply")
        }
    }

    @Test func propertiesAndTheObjectManagerListTheExportedObject() async throws {
        try await Self.withServer { client, _ in
            let properties = try await client.allProperties(destination: "org.msgpipe.Test", path: Self.path,
                                                            interface: Self.interface)
            #expect(properties["Name"] == .string("test"))
            #expect(properties["Flags"]?.stringArray == ["read", "notify"])
            #expect(properties["Level"] == .uint16(42))
            #expect(try await client.property(destination: "org.msgpipe.Test", path: Self.path, interface: Self.interface,
                                              name: "Level") == .uint16(42))
            let objects = try await client.managedObjects(destination: "org.msgpipe.Test", path: "/org/msgpipe/test")
            #expect(objects[Self.path]?[Self.interface]?["Name"] == .string("test"))
        }
    }

    @Test func signalsReachTheirMatchesAndNameOwnerChangedIsSeen() async throws {
        try await Self.withServer { client, server in
            let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: .unbounded)
            let changes = try await client.addMatch(.propertiesChanged(pathNamespace: "/org/msgpipe", interface: Self.interface)) {
                continuation.yield($0)
            }
            let owners = try await client.addMatch(.nameOwnerChanged("org.msgpipe.Other")) { continuation.yield($0) }
            _ = try await client.uniqueName()  // the matches are installed once the bus answered a later call
            try await server.emitPropertiesChanged(path: Self.path, interface: Self.interface, changed: [("Level", .uint16(7))])
            let other = try DBusConnection(address: try #require(Self.currentAddress(server)))
            defer { other.close() }
            try await other.requestName("org.msgpipe.Other")
            var iterator = stream.makeAsyncIterator()
            let first = try #require(await iterator.next())
            #expect(first.member == "PropertiesChanged")
            #expect(first.path == Self.path)
            #expect(first.arguments.count == 3)
            #expect(first.arguments[1].stringKeyed?["Level"] == .uint16(7))
            let second = try #require(await iterator.next())
            #expect(second.member == "NameOwnerChanged")
            #expect(second.arguments.first == .string("org.msgpipe.Other"))
            #expect(second.arguments.last?.stringValue == (try await other.uniqueName()))
            changes.cancel()
            owners.cancel()
        }
    }

    /// The private bus's address, which the tests keep in the environment of nothing: ask the server.
    static func currentAddress(_ connection: DBusConnection) -> String? { connection.address }

    @Test func valuesOverTheLimitsAreTypedErrorsOnBothSides() async throws {
        try await Self.withServer(clientLimits: DBusLimits(maximumValues: 16, maximumByteArray: 64),
                                  serverLimits: DBusLimits(maximumByteArray: 100)) { client, _ in
            // The client refuses a reply with more values than it allows.
            let manyPaths = DBusValue.objectPaths((0..<40).map { "/p\($0)" })
            let tooMany = await #expect(throws: DBusError.self) {
                try await Self.call(client, "Echo", [.bytes([]), .uint16(0), .variantDictionary([]), manyPaths,
                                                     .unixFD(DBusFileDescriptor(adopting: dup(0))),
                                                     .structure([.string(""), .int32(0)]), .boolean(false)])
            }
            #expect(tooMany == .limitExceeded(what: "values in one message (o)", limit: 16))
            // The server answers a call over its limits with InvalidArgs instead of decoding it.
            let tooLong = await #expect(throws: DBusError.self) { try await Self.call(client, "Count", [.bytes(Array(repeating: 1, count: 101))]) }
            #expect(tooLong?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            let counted = try await Self.call(client, "Count", [.bytes(Array(repeating: 1, count: 100))])
            #expect(counted == [.uint32(100)])
            // A value that does not fit its declared container is refused locally, before anything is sent.
            let mixed = await #expect(throws: DBusError.self) {
                try await Self.call(client, "Count", [.array(elementSignature: "y", [.uint16(1)])])
            }
            #expect(mixed == .malformed("an array of y holding a q"))
        }
    }

    @Test func closingFailsPendingAndLaterCalls() async throws {
        try await Self.withServer { client, _ in
            let pending = Task { () async throws(DBusError) -> [DBusValue] in
                try await client.call(destination: "org.msgpipe.Test", path: Self.path, interface: Self.interface,
                                      member: "Never", timeout: .seconds(30))
            }
            try await Task.sleep(for: .milliseconds(50))
            client.close()
            await #expect(throws: DBusError.self) { try await pending.value }
            await #expect(throws: DBusError.closed) { try await Self.call(client, "Echo") }
            #expect(!client.isOpen)
        }
    }

    @Test func aDaemonThatGoesAwayEndsTheConnection() async throws {
        let bus = try await PrivateBus.started()
        let connection = try DBusConnection(address: bus.address)
        defer { connection.close() }
        _ = try await connection.uniqueName()
        bus.stop()
        await #expect(throws: DBusError.self) {
            try await connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                      interface: "org.freedesktop.DBus", member: "GetId", timeout: .seconds(5))
        }
    }

    @Test func matchRulesQuoteTheirValues() {
        #expect(DBusMatchRule(sender: "org.bluez", path: "/it's", member: "X").rule
                == "type='signal',sender='org.bluez',path='/it'\\''s',member='X'")
        #expect(DBusMatchRule.nameOwnerChanged("org.bluez").rule
                == "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'")
    }
}

/// BlueZ's errors name their remedy; with no org.bluez on the bus the answer is "bluetoothd is not running".
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BlueZErrorTests {
    @Test func noOrgBluezOnTheBusSaysBluetoothdIsNotRunning() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let connection = try DBusConnection(address: bus.address)
        defer { connection.close() }
        let failure = await #expect(throws: DBusError.self) {
            try await connection.call(destination: "org.bluez", path: "/org/bluez/hci0",
                                      interface: "org.bluez.GattManager1", member: "RegisterApplication",
                                      arguments: [.objectPath("/msgpipe/app"), .variantDictionary([])])
        }
        let error = BlueZError(try #require(failure), calling: "GattManager1.RegisterApplication")
        #expect(error == .notRunning)
        #expect(error.description.contains("bluetoothd is not running"))
        #expect(BlueZError(.remote(name: "org.freedesktop.DBus.Error.AccessDenied", message: ""), calling: "x") == .accessDenied("x"))
        #expect(BlueZError(.remote(name: "org.freedesktop.DBus.Error.UnknownMethod", message: ""), calling: "x") == .tooOld("x"))
        let spawn = DBusError.remote(name: "org.freedesktop.DBus.Error.Spawn.ChildExited",
                                     message: "Launch helper exited with unknown return code 1")
        #expect(BlueZError(spawn, calling: "x") == .notRunning)
    }
}
