/// An inclusive range of attribute handles as requests carry it: valid when `0 < start <= end`.
public struct ATTHandleRange: Sendable, Hashable {
    public var start: UInt16
    public var end: UInt16

    public init(start: UInt16, end: UInt16) {
        self.start = start
        self.end = end
    }

    /// Every handle, 0x0001-0xFFFF.
    public static let all = ATTHandleRange(start: 0x0001, end: 0xFFFF)

    /// False for a start of 0 or a start above the end: the server answers Invalid Handle.
    public var isValid: Bool { start != 0 && start <= end }

    func encode(into out: inout [UInt8]) {
        out.appendLittleEndian(start)
        out.appendLittleEndian(end)
    }
}

extension ATTReader {
    mutating func handleRange() throws(ATTDecodeError) -> ATTHandleRange {
        ATTHandleRange(start: try uint16(), end: try uint16())
    }
}
