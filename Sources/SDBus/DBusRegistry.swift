import CSystemd

/// What the bus thread keeps track of: the method calls waiting for their reply. Touched only on the bus
/// thread (hence unchecked), so it needs no lock.
final class DBusRegistry: @unchecked Sendable {
    private var pendingCalls: [ObjectIdentifier: DBusPendingCall] = [:]

    func add(_ call: DBusPendingCall) { pendingCalls[ObjectIdentifier(call)] = call }

    func remove(_ call: DBusPendingCall) { pendingCalls[ObjectIdentifier(call)] = nil }

    /// The bus is going away: every pending call fails with `error`.
    func tearDown(_ error: DBusError) {
        let calls = pendingCalls.values
        pendingCalls.removeAll()
        for call in calls { call.finish(.failure(error)) }
    }
}

/// A method call sent and not answered yet; lives in the ``DBusRegistry`` until its reply (or the bus's end).
final class DBusPendingCall: @unchecked Sendable {
    private var continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>?
    var slot: OpaquePointer?
    let limits: DBusLimits
    unowned let registry: DBusRegistry

    init(continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>, limits: DBusLimits, registry: DBusRegistry) {
        self.continuation = continuation
        self.limits = limits
        self.registry = registry
    }

    /// Resumes the caller once and releases the reply slot. Bus thread only.
    func finish(_ result: Result<[DBusValue], DBusError>) {
        registry.remove(self)
        if let slot = slot.take() { sd_bus_slot_unref(slot) }
        continuation.take()?.resume(returning: result)
    }

    /// sd-bus's reply callback: the reply, an error reply, or one sd-bus made up (timeout, disconnect).
    static let replied: sd_bus_message_handler_t = { message, userdata, _ in
        guard let userdata else { return 0 }
        let call = Unmanaged<DBusPendingCall>.fromOpaque(userdata).takeUnretainedValue()
        guard let message else {
            call.finish(.failure(.malformed("a reply without a message")))
            return 0
        }
        call.finish(DBusMessageInfo.result(of: message, limits: call.limits))
        return 0
    }
}

/// Header fields of a received message.
enum DBusMessageInfo {
    static func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

    /// A method reply as values, or its error as ``DBusError/remote(name:message:)``.
    static func result(of message: OpaquePointer, limits: DBusLimits) -> Result<[DBusValue], DBusError> {
        if sd_bus_message_is_method_error(message, nil) != 0 {
            let error = sd_bus_message_get_error(message)
            return .failure(.remote(name: string(error?.pointee.name), message: string(error?.pointee.message)))
        }
        do throws(DBusError) {
            return .success(try DBusMessageReader.arguments(of: message, limits: limits))
        } catch {
            return .failure(error)
        }
    }
}
