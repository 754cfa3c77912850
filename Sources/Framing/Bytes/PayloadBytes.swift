/// A payload the encoders accept without copying it: any random-access collection of bytes with `Int`
/// indices (`[UInt8]`, `ArraySlice<UInt8>`, `UnsafeRawBufferPointer`, ...).
public typealias PayloadBytes = RandomAccessCollection<UInt8> & Sendable

extension RandomAccessCollection where Element == UInt8, Index == Int {
    /// Appends the bytes at zero-based `offsets` (relative to `startIndex`) to `out`.
    @inlinable
    func appendBytes(at offsets: Range<Int>, to out: inout [UInt8]) {
        guard !offsets.isEmpty else { return }
        let copied: Void? = withContiguousStorageIfAvailable { buffer in
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[offsets]))
        }
        if copied == nil {
            out.append(contentsOf: self[(startIndex + offsets.lowerBound)..<(startIndex + offsets.upperBound)])
        }
    }
}
