/// The counters already accepted in one direction: the highest, and a 64-bit bitmap of those just below it.
/// A counter is new when it is above the highest or inside the window and not yet seen.
struct ReplayWindow: Sendable, Equatable {
    static let size: UInt64 = 64

    private(set) var highest: UInt64?
    private var seen: UInt64 = 0  // bit i: highest - i was accepted

    /// Throws when `counter` was accepted before or is older than the window; does not record it.
    func check(_ counter: UInt64) throws(SecureError) {
        guard let highest, counter <= highest else { return }
        let age = highest - counter
        guard age < Self.size else { throw .outsideReplayWindow(counter: counter, highest: highest) }
        if seen & (1 << age) != 0 { throw .replayed(counter: counter) }
    }

    /// Records an authenticated `counter` (after ``check(_:)`` passed).
    mutating func accept(_ counter: UInt64) {
        guard let highest else {
            self.highest = counter
            seen = 1
            return
        }
        if counter > highest {
            let shift = counter - highest
            seen = shift >= Self.size ? 1 : (seen << shift) | 1
            self.highest = counter
        } else {
            seen |= 1 << (highest - counter)
        }
    }
}
