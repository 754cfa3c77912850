import CSystemd
import Synchronization

/// A call of an exported method: who called what with which arguments, and the way to answer it (once). If
/// it is released unanswered, the caller gets `org.freedesktop.DBus.Error.NoReply`.
public final class DBusMethodCall: Sendable {
    /// The caller's unique name.
    public let sender: String
    public let path: String
    public let interface: String
    public let member: String
    public let arguments: [DBusValue]
    let outputSignature: String
    private let connection: DBusConnection
    private let message: BusPointer
    private let answered = Mutex(false)

    /// Takes a reference to `message` (released on the bus thread when this call is).
    init(connection: DBusConnection, message: OpaquePointer, arguments: [DBusValue], outputSignature: String) {
        self.connection = connection
        self.message = BusPointer(pointer: sd_bus_message_ref(message))
        self.arguments = arguments
        self.outputSignature = outputSignature
        sender = DBusMessageInfo.string(sd_bus_message_get_sender(message))
        path = DBusMessageInfo.string(sd_bus_message_get_path(message))
        interface = DBusMessageInfo.string(sd_bus_message_get_interface(message))
        member = DBusMessageInfo.string(sd_bus_message_get_member(message))
    }

    deinit {
        let message = self.message
        let unanswered = answered.withLock { !$0 }
        connection.enqueueHousekeeping {
            if unanswered {
                Self.send(.remote(name: "org.freedesktop.DBus.Error.NoReply", message: "the method was not answered"),
                          to: message.pointer)
            }
            sd_bus_message_unref(message.pointer)
        }
    }

    /// Answers with `values` (their signatures must make the method's output signature). Later answers are
    /// ignored.
    public func reply(_ values: [DBusValue] = []) {
        guard claim() else { return }
        let message = self.message
        let outputSignature = self.outputSignature
        connection.enqueueHousekeeping { Self.send(values, outputSignature: outputSignature, to: message.pointer) }
    }

    /// Answers with an error. Later answers are ignored.
    public func fail(_ error: DBusError) {
        guard claim() else { return }
        let message = self.message
        connection.enqueueHousekeeping { Self.send(error, to: message.pointer) }
    }

    /// Marks the call answered; false if it was already.
    func claim() -> Bool {
        answered.withLock { answered in
            defer { answered = true }
            return !answered
        }
    }

    /// Sends the method return for `call` (or a Failed error if the values do not fit the signature).
    static func send(_ values: [DBusValue], outputSignature: String, to call: OpaquePointer) {
        let signature = values.map(\.signature).joined()
        guard signature == outputSignature else {
            send(.failed("the reply \(signature) does not match the method's output \(outputSignature)"), to: call)
            return
        }
        var created: OpaquePointer?
        guard sd_bus_message_new_method_return(call, &created) >= 0, let reply = created else { return }
        defer { sd_bus_message_unref(reply) }
        do throws(DBusError) {
            try DBusMessageWriter.append(values, to: reply)
        } catch {
            send(.failed(error.description), to: call)
            return
        }
        _ = sd_bus_send(nil, reply, nil)
    }

    /// Sends `error` as the error reply for `call`; a local error becomes `org.freedesktop.DBus.Error.Failed`.
    static func send(_ error: DBusError, to call: OpaquePointer) {
        let (name, text): (String, String) = switch error {
        case let .remote(name, message): (name, message)
        default: ("org.freedesktop.DBus.Error.Failed", error.description)
        }
        var busError = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&busError) }
        _ = sd_bus_error_set(&busError, name, text)
        _ = sd_bus_reply_method_error(call, &busError)
    }
}
