/// Packet boundaries on a byte stream (an L2CAP credit-based channel as iOS and Android hand it to an app):
/// each packet goes as a 2-byte little-endian length, 1...65535, then that many bytes (PROTOCOL.md 7.1).
///
/// ```swift
/// var bytes: [UInt8] = []
/// StreamFrames.append(packet, to: &bytes)            // 03 00 01 02 03 for [1, 2, 3]
/// var deframer = StreamDeframer(maximumFrameSize: 4096)
/// try deframer.receive(bytes[...]) { packet in ... }  // any split of the stream gives the same packets
/// ```
public enum StreamFrames {
    /// The bytes before each packet.
    public static let headerSize = 2
    /// The largest packet a frame carries.
    public static let maximumFrameSize = 0xFFFF

    /// Appends `packet` as one frame. Throws ``FramingError/packetTooLarge(size:limit:)`` above 65535 bytes and
    /// ``FramingError/emptyPacket`` for none (a zero length is not a frame).
    public static func append(_ packet: some Collection<UInt8>, to out: inout [UInt8]) throws(FramingError) {
        guard !packet.isEmpty else { throw .emptyPacket }
        guard packet.count <= maximumFrameSize else { throw .packetTooLarge(size: packet.count, limit: maximumFrameSize) }
        out.append(UInt8(truncatingIfNeeded: packet.count))
        out.append(UInt8(truncatingIfNeeded: packet.count >> 8))
        out.append(contentsOf: packet)
    }
}

/// Cuts a byte stream back into the packets ``StreamFrames`` framed, whatever chunks the stream arrives in.
/// Holds at most one frame (2 + `maximumFrameSize` bytes). A length of 0 or above `maximumFrameSize` is an
/// error after which the stream cannot be trusted: the deframer keeps refusing until ``reset()`` (a new
/// connection).
public struct StreamDeframer: Sendable {
    public let maximumFrameSize: Int
    private var buffer: [UInt8] = []
    /// The length of the frame being read, once its header is whole.
    private var expected: Int?
    private var failure: FramingError?

    /// `maximumFrameSize` is clamped to 1...65535.
    public init(maximumFrameSize: Int = StreamFrames.maximumFrameSize) {
        self.maximumFrameSize = min(max(1, maximumFrameSize), StreamFrames.maximumFrameSize)
        buffer.reserveCapacity(StreamFrames.headerSize)
    }

    /// Bytes of a frame received so far but not yet handed out.
    public var pendingBytes: Int { buffer.count }

    /// Takes the next bytes of the stream and hands out every packet they complete, in order. Throws
    /// ``FramingError/invalidFrameLength(length:limit:)`` for a length of 0 or over the maximum (the packets
    /// before it were handed out), and what `packet` throws.
    public mutating func receive(_ bytes: ArraySlice<UInt8>, packet: ([UInt8]) throws -> Void) throws {
        if let failure { throw failure }
        var rest = bytes
        while !rest.isEmpty {
            guard let length = expected else {
                let take = min(StreamFrames.headerSize - buffer.count, rest.count)
                buffer.append(contentsOf: rest.prefix(take))
                rest = rest.dropFirst(take)
                guard buffer.count == StreamFrames.headerSize else { return }
                let length = Int(buffer[0]) | Int(buffer[1]) << 8
                buffer.removeAll(keepingCapacity: true)
                guard (1 ... maximumFrameSize).contains(length) else {
                    try fail(.invalidFrameLength(length: length, limit: maximumFrameSize))
                }
                expected = length
                buffer.reserveCapacity(length)
                continue
            }
            let take = min(length - buffer.count, rest.count)
            buffer.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            guard buffer.count == length else { return }
            let whole = buffer
            buffer = []
            buffer.reserveCapacity(StreamFrames.headerSize)
            expected = nil
            try packet(whole)
        }
    }

    /// Forgets a partial frame and a past error (the next byte starts a frame).
    public mutating func reset() {
        buffer = []
        expected = nil
        failure = nil
    }

    private mutating func fail(_ error: FramingError) throws -> Never {
        failure = error
        buffer = []
        expected = nil
        throw error
    }
}
