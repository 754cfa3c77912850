import CZlib

/// zlib deflate/inflate for message bodies (PROTOCOL.md 3.8). Inflate output is bounded.
enum Deflate {
    /// The zlib stream of `bytes`, or nil when it would not be smaller.
    static func compress(_ bytes: [UInt8], level: Int32 = 6) throws(TransportError) -> [UInt8]? {
        guard bytes.count > 16 else { return nil }
        var bound = compressBound(UInt(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(bound))
        let code = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &bound, input.baseAddress, UInt(input.count), level)
            }
        }
        guard code == Z_OK else { throw .deflateFailed(code: code) }
        guard Int(bound) < bytes.count else { return nil }
        output.removeSubrange(Int(bound)...)
        return output
    }

    /// Inflates a zlib stream; nil when it is malformed, truncated, or inflates to more than `limit` bytes.
    static func decompress(_ bytes: ArraySlice<UInt8>, limit: Int) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var input = Array(bytes)
        let finished: Bool = input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let (code, produced) = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    let code = inflate(&stream, Z_NO_FLUSH)
                    return (code, out.count - Int(stream.avail_out))
                }
                guard output.count + produced <= limit else { return false }
                output.append(contentsOf: chunk[0 ..< produced])
                switch code {
                case Z_STREAM_END: return stream.avail_in == 0
                case Z_OK: continue
                case Z_BUF_ERROR where produced > 0: continue
                default: return false
                }
            }
        }
        return finished ? output : nil
    }
}
