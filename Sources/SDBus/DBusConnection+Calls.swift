import CSystemd

extension DBusConnection {
    /// Calls `member` on `interface` of the object at `path` owned by `destination` and returns the reply's
    /// values. An error reply throws ``DBusError/remote(name:message:)`` with the peer's error name (sd-bus
    /// reports a timeout as `org.freedesktop.DBus.Error.NoReply`); a reply over ``limits`` throws
    /// ``DBusError/limitExceeded(what:limit:)``.
    public func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        let microseconds = UInt64(max(1, timeout.components.seconds)) * 1_000_000
            + UInt64(max(0, timeout.components.attoseconds / 1_000_000_000_000))
        let limits = self.limits
        let registry = self.registry
        let result: Result<[DBusValue], DBusError> = await withCheckedContinuation { continuation in
            let accepted = enqueue { bus in
                let pending = DBusPendingCall(continuation: continuation, limits: limits, registry: registry)
                do throws(DBusError) {
                    var created: OpaquePointer?
                    try DBusError.check(sd_bus_message_new_method_call(bus, &created, destination, path, interface, member),
                                        "calling \(interface).\(member) on \(destination) \(path)")
                    guard let message = created else { throw .closed }
                    defer { sd_bus_message_unref(message) }
                    try DBusMessageWriter.append(arguments, to: message)
                    var slot: OpaquePointer?
                    try DBusError.check(
                        sd_bus_call_async(bus, &slot, message, DBusPendingCall.replied,
                                          Unmanaged.passUnretained(pending).toOpaque(), microseconds),
                        "calling \(interface).\(member) on \(destination)")
                    pending.slot = slot
                    registry.add(pending)
                } catch {
                    pending.finish(.failure(error))
                }
            }
            if !accepted { continuation.resume(returning: .failure(refusal)) }
        }
        return try result.get()
    }

    // MARK: - The bus daemon and standard interfaces

    /// This connection's unique name on the bus (":1.42").
    public func uniqueName() async throws(DBusError) -> String {
        // Any reply from the bus daemon comes after the reply to sd-bus's Hello, which carries the name.
        _ = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                           interface: "org.freedesktop.DBus", member: "GetId")
        return try await perform { bus throws(DBusError) in
            var name: UnsafePointer<CChar>?
            try DBusError.check(sd_bus_get_unique_name(bus, &name), "sd_bus_get_unique_name")
            return DBusMessageInfo.string(name)
        }
    }

    /// Takes the well-known `name` (fails rather than queueing when another connection owns it).
    public func requestName(_ name: String) async throws(DBusError) {
        let doNotQueue: UInt32 = 4
        let reply = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", member: "RequestName",
                                   arguments: [.string(name), .uint32(doNotQueue)])
        guard let code = reply.first?.uint32Value else { throw .malformed("RequestName answered \(reply)") }
        guard code == 1 || code == 4 else {  // primary owner, or already owner
            throw .remote(name: "org.freedesktop.DBus.Error.AccessDenied", message: "\(name) is owned by another connection")
        }
    }

    /// True if some connection owns `name` (e.g. org.bluez while bluetoothd runs).
    public func nameHasOwner(_ name: String) async throws(DBusError) -> Bool {
        let reply = try await call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", member: "NameHasOwner", arguments: [.string(name)])
        guard let owned = reply.first?.boolValue else { throw .malformed("NameHasOwner answered \(reply)") }
        return owned
    }

    /// `org.freedesktop.DBus.ObjectManager.GetManagedObjects`: object path → interface → property → value.
    public func managedObjects(destination: String, path: String) async throws(DBusError)
        -> [String: [String: [String: DBusValue]]] {
        let reply = try await call(destination: destination, path: path,
                                   interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        guard reply.count == 1, let objects = reply[0].dictionaryEntries else {
            throw .malformed("GetManagedObjects answered \(reply.map(\.signature)) instead of a{oa{sa{sv}}}")
        }
        var tree: [String: [String: [String: DBusValue]]] = [:]
        for object in objects {
            guard let objectPath = object.key.stringValue, let interfaces = object.value.dictionaryEntries else {
                throw .malformed("GetManagedObjects entry \(object.key.signature) → \(object.value.signature)")
            }
            var byInterface: [String: [String: DBusValue]] = [:]
            for interface in interfaces {
                guard let name = interface.key.stringValue, let properties = interface.value.stringKeyed else {
                    throw .malformed("GetManagedObjects interface entry of \(objectPath)")
                }
                byInterface[name] = properties
            }
            tree[objectPath] = byInterface
        }
        return tree
    }

    /// `org.freedesktop.DBus.Properties.GetAll`, variants unwrapped.
    public func allProperties(destination: String, path: String, interface: String) async throws(DBusError)
        -> [String: DBusValue] {
        let reply = try await call(destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
                                   member: "GetAll", arguments: [.string(interface)])
        guard reply.count == 1, let properties = reply[0].stringKeyed else {
            throw .malformed("GetAll answered \(reply.map(\.signature)) instead of a{sv}")
        }
        return properties
    }

    /// `org.freedesktop.DBus.Properties.Get`, the variant unwrapped.
    public func property(destination: String, path: String, interface: String, name: String) async throws(DBusError)
        -> DBusValue {
        let reply = try await call(destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
                                   member: "Get", arguments: [.string(interface), .string(name)])
        guard reply.count == 1, case let .variant(value) = reply[0] else {
            throw .malformed("Get answered \(reply.map(\.signature)) instead of v")
        }
        return value
    }
}
