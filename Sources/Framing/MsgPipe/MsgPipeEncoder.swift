/// Cuts one data message into msgpipe packets (PROTOCOL 1.3) and writes any of them on demand into a
/// caller's reusable buffer: no per-packet allocation, the payload is read in place, never copied whole.
///
/// Packets are numbered from 0 (the Start packet) in the greedy cut at ``packetSize``. For retransmission
/// and resume, ``writePacket(fromStreamOffset:sequence:explicitOffset:into:)`` writes a packet that starts
/// at any stream offset, with the offset sent explicitly (X), at the current packet size.
///
/// A `reliable` message's Start and explicit-offset packets end with the 2-byte check, a `checked` message's
/// every packet (PROTOCOL 3.2, 3.3): the cut leaves room for it and the writers append it.
public struct MsgPipeEncoder<Payload: PayloadBytes>: FrameEncoder where Payload.Index == Int {
    /// The message body, read in place.
    public let payload: Payload
    /// The message header the Start packet carries.
    public let header: MessageHeader
    /// The channel (0-3) every packet of the message carries.
    public let channel: UInt8
    /// The size of every packet but the last; change it with ``setPacketSize(_:)``.
    public private(set) var packetSize: Int
    /// The CRC-32 of the payload, sent as the 4-byte trailer.
    public let checksum: UInt32
    /// The packet ``writeNextPacket(into:)`` writes next.
    public private(set) var nextPacketIndex = 0
    /// The greedy cut at ``packetSize``.
    public private(set) var cut: MsgPipeCut
    /// Packets in the greedy cut at ``packetSize``.
    @inlinable public var packetCount: Int { cut.count }
    /// Which packets end with the 2-byte check (from the header's flags).
    @inlinable public var checks: PacketChecks { cut.checks }
    /// `payload.count`, kept so the per-packet path needs no collection calls.
    @usableFromInline let bodyCount: Int

    /// An encoder for `payload` as message `messageID`; throws for a payload over 2^32 - 5 bytes, a channel
    /// above 3, or a packet size too small for the Start packet.
    public init(
        payload: Payload, messageID: UInt32, flags: MessageFlags = [], correlationID: UInt32? = nil,
        channel: UInt8 = 0, packetSize: Int
    ) throws(FramingError) {
        guard payload.count <= MessageHeader.maximumLength else {
            throw .payloadTooLarge(size: payload.count, limit: MessageHeader.maximumLength)
        }
        guard channel <= 3 else { throw .invalidChannel(channel) }
        let header = MessageHeader(
            messageID: messageID, length: UInt32(payload.count), flags: flags.subtracting(.reserved),
            correlationID: correlationID)
        self.payload = payload
        self.header = header
        self.channel = channel
        self.packetSize = packetSize
        bodyCount = payload.count
        cut = try Self.cut(packetSize: packetSize, header: header)
        checksum = CRC32.checksum(payload)
    }

    /// The smallest packet size that carries this header's Start packet and any explicit-offset packet.
    ///
    /// With checks (a `reliable` message) the Start packet may carry no stream byte, as Transport allows.
    public static func minimumPacketSize(for header: MessageHeader) -> Int {
        let checks = PacketChecks(flags: header.flags)
        let startStream = checks == .none ? 1 : 0
        return max(
            1 + header.encodedCount + checks.startCount + startStream,
            1 + ULEB128.maximumCount + checks.explicitCount + 1)
    }

    /// Changes the packet size for the packets written from now on (after an MTU change). The greedy cut
    /// changes with it: continue a message already under way with explicit-offset packets.
    public mutating func setPacketSize(_ packetSize: Int) throws(FramingError) {
        cut = try Self.cut(packetSize: packetSize, header: header)
        self.packetSize = packetSize
    }

    /// The greedy cut at `packetSize`; throws when the packet size is below the minimum.
    private static func cut(packetSize: Int, header: MessageHeader) throws(FramingError) -> MsgPipeCut {
        let minimum = minimumPacketSize(for: header)
        guard packetSize >= minimum,
            let cut = MsgPipeCut(
                streamCount: Int(header.length) + 4, packetSize: packetSize, headerCount: header.encodedCount,
                checks: PacketChecks(flags: header.flags))
        else {
            throw .packetSizeTooSmall(format: "msgpipe", packetSize: packetSize, minimum: minimum)
        }
        return cut
    }

    /// Body plus 4-byte CRC trailer: the bytes the packets carry after the headers.
    @inlinable
    public var streamCount: Int { bodyCount + 4 }

    /// The stream bytes packet `index` of the greedy cut carries.
    @inlinable
    public func streamRange(ofPacket index: Int) throws(FramingError) -> Range<Int> {
        guard index >= 0, index < cut.count else { throw .packetIndexOutOfRange(index: index, count: cut.count) }
        return cut.range(of: index)
    }

    /// Writes packet `index` of the greedy cut into `out`, replacing its contents (keeping its storage).
    @inlinable
    public func writePacket(index: Int, into out: inout [UInt8]) throws(FramingError) {
        let range = try streamRange(ofPacket: index)
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(packetSize)
        let end = range.upperBound == streamCount
        PacketHeader(isStart: index == 0, isEnd: end, channel: channel, sequence: index).encode(into: &out)
        if index == 0 { header.encode(into: &out) }
        appendStream(range, to: &out)
        // Plain framing (no checks) pays one comparison here.
        if cut.checks != .none, index == 0 || cut.checks == .every {
            PacketCheck.appendData(messageID: header.messageID, streamOffset: range.lowerBound, to: &out)
        }
    }

    /// Writes packet `index` again; with `explicitOffset` the packet carries its stream offset (X) and so
    /// may hold fewer bytes than the original. Returns the stream bytes written: send any rest of
    /// `streamRange(ofPacket:)` with ``writePacket(fromStreamOffset:sequence:explicitOffset:into:)``.
    @discardableResult
    public func writePacket(index: Int, explicitOffset: Bool, into out: inout [UInt8]) throws(FramingError)
        -> Range<Int>
    {
        guard explicitOffset, index > 0 else {
            try writePacket(index: index, into: &out)
            return try streamRange(ofPacket: index)
        }
        let range = try streamRange(ofPacket: index)
        return try writePacket(fromStreamOffset: range.lowerBound, sequence: index, explicitOffset: true, into: &out)
    }

    /// Writes a non-Start packet carrying stream bytes from `offset` on, as many as fit, with sequence
    /// number `sequence` (taken modulo 8) and, with `explicitOffset`, the offset itself. Returns the stream
    /// bytes written; the packet has E set when they end the stream.
    @inlinable @discardableResult
    public func writePacket(
        fromStreamOffset offset: Int, sequence: Int, explicitOffset: Bool, into out: inout [UInt8]
    ) throws(FramingError) -> Range<Int> {
        guard offset >= 0, offset < streamCount else {
            throw .streamOffsetOutOfRange(offset: offset, streamCount: streamCount)
        }
        let end = offset + (explicitOffset
            ? explicitCapacity(fromStreamOffset: offset, packetSize: packetSize)
            : packetSize - 1 - cut.checks.implicitCount)
        return writePacket(
            streamRange: offset..<min(end, streamCount), sequence: sequence, explicitOffset: explicitOffset, into: &out)
    }

    /// Stream bytes an explicit-offset packet from `offset` carries at `packetSize` (at least 1): the packet
    /// size less the header byte, the offset's ULEB128 and the check.
    @inlinable
    public func explicitCapacity(fromStreamOffset offset: Int, packetSize: Int) -> Int {
        max(packetSize - 1 - ULEB128.encodedCount(UInt32(truncatingIfNeeded: offset)) - cut.checks.explicitCount, 1)
    }

    /// Writes a non-Start packet carrying exactly the stream bytes `range` (which the caller fitted into its
    /// packet size, e.g. with ``explicitCapacity(fromStreamOffset:packetSize:)``): E set when they end the
    /// stream, the check appended when the message's checks ask for it.
    @inlinable @discardableResult
    public func writePacket(
        streamRange range: Range<Int>, sequence: Int, explicitOffset: Bool, into out: inout [UInt8]
    ) -> Range<Int> {
        let header = PacketHeader(
            isStart: false, isEnd: range.upperBound == streamCount, channel: channel, sequence: sequence,
            explicitOffset: explicitOffset ? UInt32(truncatingIfNeeded: range.lowerBound) : nil)
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(packetSize)
        header.encode(into: &out)
        appendStream(range, to: &out)
        if explicitOffset ? cut.checks != .none : cut.checks == .every {
            PacketCheck.appendData(messageID: self.header.messageID, streamOffset: range.lowerBound, to: &out)
        }
        return range
    }

    /// Writes packet ``nextPacketIndex`` of the greedy cut and advances, or returns false after the last.
    public mutating func writeNextPacket(into out: inout [UInt8]) -> Bool {
        guard nextPacketIndex < packetCount, (try? writePacket(index: nextPacketIndex, into: &out)) != nil else {
            return false
        }
        nextPacketIndex += 1
        return true
    }

    /// Appends the stream bytes at `range`: payload bytes read in place, then trailer bytes.
    @inlinable
    func appendStream(_ range: Range<Int>, to out: inout [UInt8]) {
        let bodyEnd = min(range.upperBound, bodyCount)
        if range.lowerBound < bodyEnd {
            payload.appendBytes(at: range.lowerBound..<bodyEnd, to: &out)
        }
        var offset = max(range.lowerBound, bodyCount)
        while offset < range.upperBound {
            out.append(UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(offset - bodyCount))))
            offset += 1
        }
    }
}
