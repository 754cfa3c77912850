import Framing

extension ByteReader {
    /// Reads `count` bytes, mapping a short read to ``ExchangeError/malformedEnvelope(_:)``.
    mutating func readBytes(_ count: Int, _ field: String) throws(ExchangeError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        for _ in 0..<count { out.append(try readEnvelopeByte(field)) }
        return out
    }

    /// Reads one byte, mapping a short read to ``ExchangeError/malformedEnvelope(_:)``.
    mutating func readEnvelopeByte(_ field: String) throws(ExchangeError) -> UInt8 {
        do {
            return try readByte(field)
        } catch {
            throw .malformedEnvelope("truncated before \(field)")
        }
    }

    /// Reads a length-prefixed request id.
    mutating func readRequestID() throws(ExchangeError) -> RequestID {
        let count = Int(try readEnvelopeByte("id length"))
        return try RequestID(decoding: try readBytes(count, "id"))
    }
}

/// The version byte every envelope starts with (PROTOCOL.md 6.5).
let envelopeVersion: UInt8 = 1
