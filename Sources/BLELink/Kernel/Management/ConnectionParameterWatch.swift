import Glibc
import PollThread
import Synchronization

/// Reports the New Connection Parameter events of one controller (a peer's parameter update that its kernel
/// accepted) from a mgmt socket of its own, on a thread of its own, until ``stop()``. The kernel sends them only
/// to a socket bound with CAP_NET_ADMIN: ``isTrusted`` says whether this one was, and without it nothing arrives.
/// A socket that fails or hangs up ends the watch for good: ``stopReason`` then says why.
///
/// ```swift
/// let watch = try ConnectionParameterWatch(controller: 0) { event in print(event.peer, event.minimumInterval) }
/// defer { watch.stop() }
/// ```
public final class ConnectionParameterWatch: Sendable {
    /// The process had CAP_NET_ADMIN when the socket was bound, so the kernel sends it the events.
    public let isTrusted: Bool
    private let wake: WakePipe
    /// Owned by the thread, which closes it when it ends (so its descriptor is never reused under a poll).
    private let management: Mutex<ManagementSocket?>
    private let descriptor: Int32
    private let ended = Mutex<String?>(nil)

    /// Why the watch ended on its own (its socket failed or hung up); once set it stays, and no event arrives
    /// from then on. nil while it reads or when ``stop()`` ended it.
    public var stopReason: String? { ended.withLock { $0 } }

    /// Opens and binds the socket (events from here on are kept for the thread) and starts reading.
    public init(
        controller: UInt16, onEvent: @escaping @Sendable (NewConnectionParameter) -> Void
    ) throws(BluetoothError) {
        let socket = try ManagementSocket()
        isTrusted = Self.hasNetworkAdministration(procStatus: ATTChannelOwner.readSmallFile("/proc/self/status") ?? "")
        do {
            wake = try WakePipe()
        } catch {
            throw .system(call: "pipe", errno: error.errno, message: "cannot create the parameter watch's wake pipe")
        }
        descriptor = socket.descriptor
        management = Mutex(socket)
        let status = DetachedThread.spawn { [self] in run(controller: controller, onEvent: onEvent) }
        guard status == 0 else {
            wake.close()
            throw .system(call: "pthread_create", errno: status, message: "cannot start the parameter watch's thread")
        }
    }

    /// Stops reading; the thread closes the socket. Idempotent.
    public func stop() { wake.wake() }

    /// Whether a `/proc/PID/status` text's effective capabilities (`CapEff`, hex) hold CAP_NET_ADMIN (bit 12).
    public static func hasNetworkAdministration(procStatus: String) -> Bool {
        for line in procStatus.split(separator: "\n") where line.hasPrefix("CapEff:") {
            let hex = String(line.dropFirst("CapEff:".count).filter { $0 != " " && $0 != "\t" })
            guard let mask = UInt64(hex, radix: 16) else { return false }
            return mask & (1 << 12) != 0
        }
        return false
    }

    private func run(controller: UInt16, onEvent: @Sendable (NewConnectionParameter) -> Void) {
        let reason = readEvents(controller: controller, onEvent: onEvent)
        ended.withLock { $0 = reason }
        management.withLock { $0 = nil }
        wake.close()
    }

    /// Reads until ``stop()`` (returns nil) or the socket fails (returns why).
    private func readEvents(controller: UInt16, onEvent: @Sendable (NewConnectionParameter) -> Void) -> String? {
        while true {
            let revents: Int16
            switch wake.wait(for: descriptor) {
            case .woken: return nil
            case let .failed(number): return "poll failed: \(String(cString: strerror(number))) (errno \(number))"
            case let .events(events): revents = events
            }
            if revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0, revents & Int16(POLLIN) == 0 {
                return revents & Int16(POLLHUP) != 0 ? "the mgmt socket hung up" : "the mgmt socket failed"
            }
            let result = management.withLock { socket -> Result<ManagementEvent?, BluetoothError> in
                do throws(BluetoothError) {
                    return .success(try socket?.nextEvent(until: Deadline.after(.zero)))
                } catch {
                    return .failure(error)
                }
            }
            let event: ManagementEvent?
            switch result {
            case let .success(next): event = next
            case .failure(.malformedManagementPacket): continue  // that packet was read and is not ours to judge
            case let .failure(error): return error.description
            }
            if let event, event.controllerIndex == controller, case let .newConnectionParameter(update) = event.kind {
                onEvent(update)
            }
        }
    }
}
