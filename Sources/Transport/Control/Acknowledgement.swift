/// The receiver's view of one message (control type 0x01, PROTOCOL.md 3.4).
///
/// Segments `0 ..< cumulative` are held; segment `cumulative` is missing (unless all are held); bit `k` of the
/// bitmap (byte `k / 8`, least significant bit first) tells whether segment `bitmapStart + k` is held.
/// Segments between `cumulative` and `bitmapStart` are not reported by this acknowledgement.
struct Acknowledgement: Equatable, Sendable {
    var messageID: UInt32
    /// The receiver holds the message as checked (type 0x0C) or unchecked (type 0x01): after a checked restart,
    /// the sender ignores acknowledgements of the unchecked attempt still on the way.
    var checked = false
    var cumulative: UInt32
    var bitmapStart: UInt32
    /// A view into the packet it was decoded from (nothing copied).
    var bitmap: ArraySlice<UInt8>

    init(messageID: UInt32, checked: Bool = false, cumulative: UInt32, bitmapStart: UInt32, bitmap: ArraySlice<UInt8>) {
        self.messageID = messageID
        self.checked = checked
        self.cumulative = cumulative
        self.bitmapStart = bitmapStart
        self.bitmap = bitmap
    }

    /// The first segment index after what this acknowledgement reports.
    var coverageEnd: Int { Int(bitmapStart) + bitmap.count * 8 }

    func isHeldInBitmap(_ segment: Int) -> Bool {
        let offset = segment - Int(bitmapStart)
        guard offset >= 0, offset < bitmap.count * 8 else { return false }
        return bitmap[bitmap.startIndex + offset / 8] & (1 << UInt8(offset % 8)) != 0
    }

    /// True when this acknowledgement states that `segment` is missing.
    func reportsMissing(_ segment: Int) -> Bool {
        if segment == Int(cumulative) { return true }
        return segment >= Int(bitmapStart) && segment < coverageEnd && !isHeldInBitmap(segment)
    }
}
