import Synchronization

/// Slows down a central that keeps failing the end-to-end handshake: after each failure from an address, its
/// next connections are refused without a handshake for the policy's delay (doubling per failure in a row, up
/// to its maximum); a refusal meanwhile does not make the wait longer, so a central that backs off gets its
/// handshake once the wait is over; a success forgets the address. Remembers at most `capacity` addresses (the one that
/// failed least recently goes first), so a flood of addresses costs bounded memory. A refusal this way costs
/// no cryptography, so strangers cannot starve the known phones of CPU.
final class HandshakeBackoff: Sendable {
    private struct Entry {
        var failures: Int
        var until: ContinuousClock.Instant
    }

    let policy: ReconnectBackoff
    let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])

    init(policy: ReconnectBackoff, capacity: Int = 1024) {
        self.policy = policy
        self.capacity = max(1, capacity)
    }

    /// How long `address` must still wait before its next handshake; nil when it may try now.
    func remaining(for address: String, now: ContinuousClock.Instant = .now) -> Duration? {
        entries.withLock { entries in
            guard let entry = entries[address], entry.until > now else { return nil }
            return entry.until - now
        }
    }

    /// Failures in a row from `address` so far.
    func failures(of address: String) -> Int { entries.withLock { $0[address]?.failures ?? 0 } }

    /// Records a failed handshake from `address`; returns how long it waits now.
    @discardableResult
    func failed(_ address: String, now: ContinuousClock.Instant = .now) -> Duration {
        entries.withLock { entries in
            let failures = (entries[address]?.failures ?? 0) + 1
            let delay = policy.delay(afterFailures: failures)
            if entries[address] == nil, entries.count >= capacity,
               let oldest = entries.min(by: { $0.value.until < $1.value.until })?.key {
                entries[oldest] = nil
            }
            entries[address] = Entry(failures: failures, until: now + delay)
            return delay
        }
    }

    /// A handshake from `address` succeeded: it starts afresh.
    func succeeded(_ address: String) { _ = entries.withLock { $0.removeValue(forKey: address) } }
}
