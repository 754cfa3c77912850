import CSystemd

/// A signal received through a match.
public struct DBusSignal: Sendable {
    /// The sender's unique name (":1.7"), or empty.
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]
}

/// A D-Bus match rule: which signals a ``DBusConnection/addMatch(_:handler:)`` delivers.
public struct DBusMatchRule: Sendable, Equatable {
    public var sender: String?
    public var path: String?
    public var pathNamespace: String?
    public var interface: String?
    public var member: String?
    /// The first argument, when it is a string (e.g. the name in NameOwnerChanged, the interface in
    /// PropertiesChanged).
    public var arg0: String?

    public init(sender: String? = nil, path: String? = nil, pathNamespace: String? = nil, interface: String? = nil,
                member: String? = nil, arg0: String? = nil) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule as the bus daemon reads it, values quoted ('\'' for a quote inside).
    public var rule: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            let escaped = value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''")
            parts.append("\(key)='" + escaped + "'")
        }
        add("sender", sender)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` (interface, changed a{sv}, invalidated as).
    public static func propertiesChanged(sender: String? = nil, pathNamespace: String? = nil, interface: String? = nil)
        -> DBusMatchRule {
        DBusMatchRule(sender: sender, pathNamespace: pathNamespace, interface: "org.freedesktop.DBus.Properties",
                      member: "PropertiesChanged", arg0: interface)
    }

    /// `org.freedesktop.DBus.ObjectManager.InterfacesAdded` (path, a{sa{sv}}).
    public static func interfacesAdded(sender: String? = nil) -> DBusMatchRule {
        DBusMatchRule(sender: sender, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded")
    }

    /// `org.freedesktop.DBus.ObjectManager.InterfacesRemoved` (path, as).
    public static func interfacesRemoved(sender: String? = nil) -> DBusMatchRule {
        DBusMatchRule(sender: sender, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved")
    }

    /// The bus daemon's `NameOwnerChanged` (name, old owner, new owner) for `name`.
    public static func nameOwnerChanged(_ name: String) -> DBusMatchRule {
        DBusMatchRule(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                      member: "NameOwnerChanged", arg0: name)
    }
}

/// The handler of one match, retained by its sd-bus slot.
private final class DBusMatchHandler: Sendable {
    let limits: DBusLimits
    let handler: @Sendable (DBusSignal) -> Void

    init(limits: DBusLimits, handler: @escaping @Sendable (DBusSignal) -> Void) {
        self.limits = limits
        self.handler = handler
    }

    static let received: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let match = Unmanaged<DBusMatchHandler>.fromOpaque(userdata).takeUnretainedValue()
        // A signal over the limits or of the wrong shape is not delivered: the handlers check what they get.
        guard let arguments = try? DBusMessageReader.arguments(of: message, limits: match.limits) else { return 0 }
        match.handler(DBusSignal(
            sender: DBusMessageInfo.string(sd_bus_message_get_sender(message)),
            path: DBusMessageInfo.string(sd_bus_message_get_path(message)),
            interface: DBusMessageInfo.string(sd_bus_message_get_interface(message)),
            member: DBusMessageInfo.string(sd_bus_message_get_member(message)), arguments: arguments))
        return 0
    }

    static let released: sd_bus_destroy_t = { userdata in
        guard let userdata else { return }
        Unmanaged<DBusMatchHandler>.fromOpaque(userdata).release()
    }
}

extension DBusConnection {
    /// Delivers every signal matching `rule` to `handler`, on the bus thread (it must return quickly), until
    /// the returned registration is cancelled or released. Returns once the match is queued; the bus daemon
    /// installs it before it handles any later message of this connection.
    public func addMatch(_ rule: DBusMatchRule, handler: @escaping @Sendable (DBusSignal) -> Void) async throws(DBusError)
        -> DBusRegistration {
        let limits = self.limits
        let slot = try await perform { bus throws(DBusError) in
            let context = Unmanaged.passRetained(DBusMatchHandler(limits: limits, handler: handler)).toOpaque()
            var slot: OpaquePointer?
            let status = sd_bus_add_match_async(bus, &slot, rule.rule, DBusMatchHandler.received, nil, context)
            guard status >= 0, let slot else {
                Unmanaged<DBusMatchHandler>.fromOpaque(context).release()
                throw .system(operation: "adding the match \(rule.rule)", errno: -status)
            }
            sd_bus_slot_set_destroy_callback(slot, DBusMatchHandler.released)
            return BusPointer(pointer: slot)
        }
        return DBusRegistration(connection: self, slot: slot.pointer)
    }

    /// Emits a signal from the object at `path`.
    public func emitSignal(path: String, interface: String, member: String, arguments: [DBusValue]) async throws(DBusError) {
        try await perform { bus throws(DBusError) in
            var created: OpaquePointer?
            try DBusError.check(sd_bus_message_new_signal(bus, &created, path, interface, member),
                                "emitting \(interface).\(member) from \(path)")
            guard let message = created else { throw .closed }
            defer { sd_bus_message_unref(message) }
            try DBusMessageWriter.append(arguments, to: message)
            try DBusError.check(sd_bus_send(bus, message, nil), "sending \(interface).\(member)")
        }
    }

    /// Emits `PropertiesChanged` for `interface` of the object at `path` with the new values.
    public func emitPropertiesChanged(path: String, interface: String, changed: [(String, DBusValue)],
                                      invalidated: [String] = []) async throws(DBusError) {
        try await emitSignal(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                             arguments: [.string(interface), .variantDictionary(changed), .strings(invalidated)])
    }
}
