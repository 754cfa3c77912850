import SDBus

/// msgpipe's pairing agent beside bluetoothd, for security "medium": org.bluez.Agent1 for Just Works
/// (NoInputNoOutput), which confirms and authorizes and refuses anything that needs a PIN or passkey
/// (org.bluez.Error.Rejected). "high" (authenticated) cannot be met by NoInputNoOutput: it needs a passkey or
/// numeric comparison, so no agent is registered for high.
enum BlueZJustWorksAgent {
    static let interface = DBusInterface(name: "org.bluez.Agent1", methods: [
        DBusMethod("Release") { _ in [] },
        DBusMethod("RequestPinCode", input: "o", output: "s") { _ throws(DBusError) in
            throw .remote(name: "org.bluez.Error.Rejected", message: "msgpipe's agent has no input (NoInputNoOutput)")
        },
        DBusMethod("RequestPasskey", input: "o", output: "u") { _ throws(DBusError) in
            throw .remote(name: "org.bluez.Error.Rejected", message: "msgpipe's agent has no input (NoInputNoOutput)")
        },
        DBusMethod("RequestConfirmation", input: "ou") { _ in [] },
        DBusMethod("RequestAuthorization", input: "o") { _ in [] },
        DBusMethod("AuthorizeService", input: "os") { _ in [] },
        DBusMethod("Cancel") { _ in [] },
    ])

    /// `AgentManager1.RegisterAgent(path, "NoInputNoOutput")` and `RequestDefaultAgent(path)`. bluetoothd
    /// (src/agent.c) puts a default agent at the head of its list and hands the previous one the role back
    /// when ours leaves the bus; if it refuses (another default agent it keeps), we go on with the agent
    /// registered: pairing then goes through the agent the user already has.
    static func register(_ path: String, on bus: DBusConnection) async throws(DBusError) {
        do throws(DBusError) {
            _ = try await bus.call(destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                                   member: "RegisterAgent", arguments: [.objectPath(path), .string("NoInputNoOutput")])
        } catch where error.name == "org.bluez.Error.AlreadyExists" {
            // Registered before (by this connection): keep it.
        }
        _ = try? await bus.call(destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                                member: "RequestDefaultAgent", arguments: [.objectPath(path)])
    }

    /// Best effort, in a task: bluetoothd also drops the agent when our connection leaves the bus.
    static func unregister(_ path: String, on bus: DBusConnection) {
        Task {
            _ = try? await bus.call(destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                                    member: "UnregisterAgent", arguments: [.objectPath(path)])
        }
    }
}
