import CZlib

/// CRC-32 (ISO-HDLC, zlib's `crc32`), computed incrementally: feed bytes in any number of pieces.
public struct CRC32: Sendable, Equatable {
    /// The checksum of every byte fed so far (0 before any).
    public private(set) var value: UInt32 = 0

    /// A checksum of no bytes.
    public init() {}

    /// The checksum of `bytes` in one call.
    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    /// Feeds `bytes` (contiguous collections go straight to zlib without a copy).
    public mutating func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            update(Array(bytes))
        }
    }

    /// Feeds raw bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var base = bytes.baseAddress?.assumingMemoryBound(to: Bytef.self) else { return }
        var left = bytes.count
        var crc = uLong(value)
        while left > 0 {
            let piece = Swift.min(left, 1 << 30)
            crc = crc32(crc, base, uInt(piece))
            base += piece
            left -= piece
        }
        value = UInt32(truncatingIfNeeded: crc)
    }
}
