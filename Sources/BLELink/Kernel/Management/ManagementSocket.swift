import CBluetooth
import Glibc

/// A socket on the kernel's Bluetooth management channel (HCI_CHANNEL_CONTROL): sends commands, waits for
/// their completion, and reads events. Blocking; use from one thread. Commands need CAP_NET_ADMIN.
public final class ManagementSocket {
    private let socket: SocketDescriptor
    /// Events that arrived while a command waited for its reply, handed out first by ``nextEvent(until:)``.
    private var backlog: [ManagementEvent] = []
    /// The most events kept while a command is in flight; more is an error, never a silent drop.
    static let backlogLimit = 1024

    /// Opens and binds the management socket.
    public init() throws(BluetoothError) {
        let socket = try openBluetoothSocket(type: Int32(SOCK_RAW.rawValue), protocol: BTPROTO_HCI)
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(HCI_DEV_NONE)
        address.hci_channel = UInt16(HCI_CHANNEL_CONTROL)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket.rawValue, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard result == 0 else { throw bluetoothError("bind(HCI_CHANNEL_CONTROL)", errno: errno) }
        self.socket = socket
    }

    /// Sends `command` and returns its return parameters once Command Complete arrives; a failure status
    /// throws the matching ``BluetoothError``, and no reply within `timeout` throws `commandTimedOut`.
    @discardableResult
    public func execute(_ command: ManagementCommand, timeout: Duration = .seconds(5)) throws(BluetoothError) -> [UInt8] {
        let packet = command.encoded()
        let written = packet.withUnsafeBytes { write(socket.rawValue, $0.baseAddress, $0.count) }
        guard written == packet.count else { throw bluetoothError("write(\(command.name))", errno: errno) }
        let deadline = Deadline.after(timeout)
        while let event = try readEvent(until: deadline) {
            guard event.controllerIndex == command.controllerIndex else {
                try keep(event)
                continue
            }
            switch event.kind {
            case let .commandComplete(opcode, status, parameters) where opcode == command.opcode:
                guard status == .success else { throw Self.error(for: command, status: status) }
                return parameters
            case let .commandStatus(opcode, status) where opcode == command.opcode:
                guard status == .success else { throw Self.error(for: command, status: status) }
                return []
            default:
                try keep(event)
            }
        }
        throw .commandTimedOut(command: command.description)
    }

    /// The descriptor, to wait on it beside others (``hasBufferedEvents`` first: those are read already).
    var descriptor: Int32 { socket.rawValue }

    /// Events already read (while a command waited) that ``nextEvent(until:)`` hands out without waiting.
    var hasBufferedEvents: Bool { !backlog.isEmpty }

    /// The next event (backlog first), or nil when the deadline passes first (nil deadline: wait forever).
    public func nextEvent(until deadline: Deadline?) throws(BluetoothError) -> ManagementEvent? {
        if !backlog.isEmpty { return backlog.removeFirst() }
        return try readEvent(until: deadline)
    }

    private func keep(_ event: ManagementEvent) throws(BluetoothError) {
        guard backlog.count < Self.backlogLimit else {
            throw .system(
                call: "management socket", errno: ENOBUFS,
                message: "more than \(Self.backlogLimit) events arrived while waiting for a command's reply")
        }
        backlog.append(event)
    }

    private func readEvent(until deadline: Deadline?) throws(BluetoothError) -> ManagementEvent? {
        var buffer = [UInt8](repeating: 0, count: 6 + 65_535)
        while true {
            guard try pollDescriptor(socket.rawValue, events: Int16(POLLIN), until: deadline) != 0 else { return nil }
            let count = buffer.withUnsafeMutableBytes { read(socket.rawValue, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw bluetoothError("read(management socket)", errno: errno)
            }
            return try ManagementEvent(decoding: buffer[0..<count])
        }
    }

    static func error(for command: ManagementCommand, status: ManagementStatus) -> BluetoothError {
        let adapter = "hci\(command.controllerIndex)"
        switch status {
        case .permissionDenied: return .permissionDenied(operation: command.description)
        case .notPowered: return .adapterDown(adapter: adapter)
        case .invalidIndex: return .noAdapter(selector: adapter)
        default: return .commandFailed(command: command.description, status: status)
        }
    }
}
