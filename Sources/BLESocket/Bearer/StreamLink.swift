public import Backpressure
public import BluetoothCore
import Framing
import Glibc
public import GATT
import Synchronization
public import Transport

/// Transport's ``Link`` over one connected SOCK_SEQPACKET socket carrying a byte stream (an LE credit-based
/// channel): each packet one frame of PROTOCOL.md 7.1 in one SDU; what arrives is deframed however the peer cut
/// it. No credits (a full socket) makes a send wait for POLLOUT through the `ReadinessGate`, in call order;
/// receiving is backpressured. One connection: after `.disconnected` it does not come back.
/// ```swift
/// let link = try StreamLink(adopting: fd, sendUnit: StreamLink.preferredUnit)
/// let transport = Transport(link: link)
/// ```
public final class StreamLink: Link {
    public let events: BoundedAsyncQueue<LinkEvent, Never>
    /// The largest packet sent: one SDU of at most `sendUnit` and ``preferredUnit`` bytes, less the frame's
    /// 2-byte length. Packets of any size up to 65535 are received.
    public let maximumPacketSize: Int

    /// The SDU msgpipe sends on a channel: 2221 bytes, which with the SDU's 2-byte length fill exactly nine
    /// K-frames of MPS 247, each one full 251-byte LL PDU where the controller has Data Length Extension (a
    /// 2050-byte SDU left a tenth of 80 bytes: 1.1% less goodput at 2M, under GATT's). Large enough that headers
    /// are noise, small enough that a lost or refused one is cheap to send again and that a send buffer holds many.
    public static let preferredUnit = 2221
    private let core: BearerCore
    private let pump = Mutex<Task<Void, Never>?>(nil)

    /// True when packets travel as PROTOCOL.md 7.1 frames; false for a plain format, whose bytes are the stream
    /// itself (each packet one SDU, each SDU received one packet).
    public let isFramed: Bool

    /// Takes ownership of `fd`. `sendUnit`: the largest SDU the socket sends (the channel's send MTU);
    /// `receiveUnit`: the largest SDU it receives (its receive MTU). Both at most 65535. The socket's send
    /// buffer must hold a whole SDU, or a send waits for ever (``L2CAPChannel`` enlarges it). `framed: false`
    /// carries a plain format's bytes as they are (see ``isFramed``).
    ///
    /// A stream with a hole cannot be read on: when the kernel drops an SDU (Linux 6.1 does, silently, when the
    /// socket's receive buffer is full, and gives the peer its credit back), the link ends with
    /// ``LinkEvent/disconnected(reason:)`` naming the loss, and no packet read after the hole is handed on.
    public convenience init(
        adopting fd: Int32, sendUnit: Int, receiveUnit: Int = 65535, receiveCapacity: Int = 16, framed: Bool = true
    ) throws(ATTError) {
        try self.init(
            adopting: fd, sendUnit: sendUnit, receiveUnit: receiveUnit, receiveCapacity: receiveCapacity, framed: framed,
            kernelDrops: BearerCore.socketDrops)
    }

    /// As the public initializer, with the kernel's drop count read by `kernelDrops` and each read made by
    /// `receive` (tests stand in for the kernel).
    init(
        adopting fd: Int32, sendUnit: Int, receiveUnit: Int = 65535, receiveCapacity: Int = 16, framed: Bool = true,
        kernelDrops: @escaping @Sendable (Int32) -> UInt32?,
        receive: @escaping @Sendable (Int32, UnsafeMutableRawBufferPointer) -> (Int, Int32) = BearerCore.systemReceive
    ) throws(ATTError) {
        isFramed = framed
        maximumPacketSize = max(1, min(sendUnit, Self.preferredUnit) - (framed ? StreamFrames.headerSize : 0))
        core = try BearerCore(
            fd: fd, receiveCapacity: max(1, receiveCapacity), receiveBufferSize: max(3, min(receiveUnit, 65535)) + 1,
            kernelDrops: kernelDrops, receive: receive)
        events = BoundedAsyncQueue(capacity: max(2, receiveCapacity))
        try core.start()
        try? events.pushIgnoringCapacity(.connected(maximumPacketSize: maximumPacketSize))
        let (core, events) = (core, events)
        pump.withLock {
            $0 = Task {
                var deframer = StreamDeframer(maximumFrameSize: StreamFrames.maximumFrameSize)
                while let event = await core.receive() {
                    switch event {
                    case let .pdu(bytes):
                        // The packets one SDU completes (bounded by the SDU), handed on with backpressure:
                        // a consumer that stops reading stops this task, the bearer, and the peer's credits.
                        guard framed else {
                            try? await events.push(.packet(bytes))
                            continue
                        }
                        var packets: [[UInt8]] = []
                        do {
                            try deframer.receive(bytes[...]) { packets.append($0) }
                        } catch {
                            for packet in packets { try? await events.push(.packet(packet)) }
                            // A stream that breaks its framing cannot be read further: end the connection.
                            core.close()
                            try? events.pushIgnoringCapacity(.disconnected(reason: "\(error)"))
                            events.finish()
                            return
                        }
                        for packet in packets {
                            try? await events.push(.packet(packet))
                        }
                    case let .disconnected(reason):
                        try? events.pushIgnoringCapacity(.disconnected(reason: reason))
                        events.finish()
                        return
                    }
                }
                events.finish()
            }
        }
    }

    deinit { core.close() }

    /// Sends `packet` as one frame (or as it is, unframed) in one SDU, suspending while the channel has no credits.
    public func send(_ packet: [UInt8]) async throws {
        guard packet.count <= maximumPacketSize else {
            throw LinkError.packetTooLarge(size: packet.count, limit: maximumPacketSize)
        }
        var frame: [UInt8] = []
        if isFramed {
            frame.reserveCapacity(packet.count + StreamFrames.headerSize)
            try StreamFrames.append(packet, to: &frame)
        } else {
            frame = packet
        }
        do {
            try await core.send(frame[...])
        } catch {
            switch error {
            case .closed: throw LinkError.closed
            case let .disconnected(reason): throw LinkError.disconnected(reason: reason)
            case .cancelled: throw CancellationError()
            default: throw LinkError.io("\(error)")
            }
        }
    }

    /// Sends `packet` as ``send(_:)`` does, then waits until the socket has handed every byte queued on it to
    /// the controller, so that closing the channel afterwards loses nothing: Linux purges an LE channel's queue
    /// when it closes, and a plain format has no acknowledgement of its own. What the controller has is sent
    /// before the channel's disconnection, in order. The kernel signals no empty queue, so this reads the
    /// queue's length (TIOCOUTQ) every few milliseconds; throws ``LinkError/io(_:)`` when nothing left the queue
    /// for `stall` (a peer that grants no credits), or the link's error.
    public func sendConfirmed(_ packet: [UInt8], stall: Duration) async throws {
        try await send(packet)
        var lastUnsent = Int.max
        var lastProgress = ContinuousClock.now
        var pause = Duration.milliseconds(1)
        while true {
            guard let unsent = unsentBytes() else { throw LinkError.closed }
            if unsent == 0 { return }
            if unsent < lastUnsent {
                (lastUnsent, lastProgress) = (unsent, .now)
            } else if lastProgress.duration(to: .now) >= stall {
                throw LinkError.io("\(unsent) bytes stayed queued on the channel for \(stall): the peer grants no credits")
            }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// ``sendConfirmed(_:stall:)`` with a stall of 10 seconds.
    public func sendConfirmed(_ packet: [UInt8]) async throws {
        try await sendConfirmed(packet, stall: .seconds(10))
    }

    /// The LE PHYs of the channel's connection, while it is open and the kernel tells them (nil for a UNIX
    /// socket).
    public var phy: LinkPHY? { core.phy }

    /// Bytes queued on the socket that the kernel has not yet handed to the controller (nil once closed).
    /// TIOCOUTQ counts them on a UNIX socket, and the free send buffer on a Bluetooth one.
    func unsentBytes() -> Int? {
        core.withOpenDescriptor { fd -> Int? in
            var queue: Int32 = 0
            guard ioctl(fd, UInt(TIOCOUTQ), &queue) == 0 else { return nil }
            var address = sockaddr()
            var length = socklen_t(MemoryLayout<sockaddr>.size)
            guard getsockname(fd, &address, &length) == 0 else { return nil }
            if address.sa_family == sa_family_t(AF_UNIX) { return Int(queue) }
            var buffer: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, &size) == 0 else { return nil }
            return max(0, Int(buffer) - Int(queue))
        } ?? nil
    }

    public func close() async {
        core.close()
        let task = pump.withLock { $0 }
        await task?.value
        events.finish()
    }
}
