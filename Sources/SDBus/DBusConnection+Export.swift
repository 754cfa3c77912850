import CSDBusShim
import CSystemd

/// An exported interface as its vtable's userdata: the bus thread dispatches calls and property reads here.
private final class DBusExportedInterface: Sendable {
    let interface: DBusInterface
    let methods: [String: DBusMethod]
    let properties: [String: DBusProperty]
    /// Weak would do, but the slot (owned by the registration that holds the connection) dies first.
    unowned let connection: DBusConnection

    init(interface: DBusInterface, connection: DBusConnection) {
        self.interface = interface
        self.connection = connection
        methods = Dictionary(interface.methods.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        properties = Dictionary(interface.properties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    static let method: msgpipe_method_handler = { rawMessage, userdata, _ in
        guard let rawMessage, let userdata else { return 0 }
        let exported = Unmanaged<DBusExportedInterface>.fromOpaque(userdata).takeUnretainedValue()
        let message = OpaquePointer(rawMessage)
        let member = DBusMessageInfo.string(sd_bus_message_get_member(message))
        guard let method = exported.methods[member] else {
            DBusMethodCall.send(.remote(name: "org.freedesktop.DBus.Error.UnknownMethod", message: member), to: message)
            return 1
        }
        let arguments: [DBusValue]
        do throws(DBusError) {
            arguments = try DBusMessageReader.arguments(of: message, limits: exported.connection.limits)
        } catch {
            DBusMethodCall.send(.invalidArguments(error.description), to: message)
            return 1
        }
        let call = DBusMethodCall(connection: exported.connection, message: message, arguments: arguments,
                                  outputSignature: method.outputSignature)
        do throws(DBusError) {
            guard let values = try method.handler(call) else { return 1 }  // answered later
            if call.claim() { DBusMethodCall.send(values, outputSignature: method.outputSignature, to: message) }
        } catch {
            if call.claim() { DBusMethodCall.send(error, to: message) }
        }
        return 1
    }

    static let property: msgpipe_property_getter = { name, reply, userdata, _ in
        guard let name, let reply, let userdata else { return -22 }
        let exported = Unmanaged<DBusExportedInterface>.fromOpaque(userdata).takeUnretainedValue()
        guard let property = exported.properties[String(cString: name)] else { return -2 }  // ENOENT
        let value = property.value()
        guard value.signature == property.signature else { return -22 }  // EINVAL: a programming error
        do throws(DBusError) {
            try DBusMessageWriter.append(value, to: OpaquePointer(reply))
        } catch {
            if case let .system(_, code) = error { return -code }
            return -22
        }
        return 1
    }

    static let released: msgpipe_release = { userdata in
        guard let userdata else { return }
        Unmanaged<DBusExportedInterface>.fromOpaque(userdata).release()
    }
}

extension DBusConnection {
    /// Exports `interface` on the object at `path` until the registration is cancelled or released.
    public func export(_ interface: DBusInterface, at path: String) async throws(DBusError) -> DBusRegistration {
        let exported = DBusExportedInterface(interface: interface, connection: self)
        let slot = try await perform { bus throws(DBusError) in
            guard let vtable = msgpipe_vtable_new(interface.methods.count + interface.properties.count) else {
                throw .system(operation: "building the vtable of \(interface.name)", errno: 12)
            }
            do throws(DBusError) {
                for method in interface.methods {
                    try DBusError.check(msgpipe_vtable_add_method(vtable, method.name, method.inputSignature, method.outputSignature),
                                        "adding \(interface.name).\(method.name)")
                }
                for property in interface.properties {
                    try DBusError.check(msgpipe_vtable_add_property(vtable, property.name, property.signature,
                                                                    property.emitsChange ? 1 : 0),
                                        "adding the property \(interface.name).\(property.name)")
                }
                let context = Unmanaged.passRetained(exported).toOpaque()
                var slot: UnsafeMutableRawPointer?
                let status = msgpipe_vtable_export(UnsafeMutableRawPointer(bus), &slot, path, interface.name, vtable,
                                                   DBusExportedInterface.method, DBusExportedInterface.property,
                                                   DBusExportedInterface.released, context)
                guard status >= 0, let slot else {
                    Unmanaged<DBusExportedInterface>.fromOpaque(context).release()
                    throw .system(operation: "exporting \(interface.name) at \(path)", errno: -status)
                }
                return BusPointer(pointer: OpaquePointer(slot))
            } catch {
                msgpipe_vtable_free(vtable)
                throw error
            }
        }
        return DBusRegistration(connection: self, slot: slot.pointer)
    }

    /// Serves `org.freedesktop.DBus.ObjectManager` at `path`: GetManagedObjects lists the exported objects
    /// below it with all their properties.
    public func addObjectManager(at path: String) async throws(DBusError) -> DBusRegistration {
        let slot = try await perform { bus throws(DBusError) in
            var slot: OpaquePointer?
            try DBusError.check(sd_bus_add_object_manager(bus, &slot, path), "adding an object manager at \(path)")
            guard let slot else { throw .closed }
            return BusPointer(pointer: slot)
        }
        return DBusRegistration(connection: self, slot: slot.pointer)
    }
}
