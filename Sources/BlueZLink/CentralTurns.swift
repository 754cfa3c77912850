import Synchronization

/// One central at a time, for a bluetoothd before 5.76 (which hands every central the same acquired socket):
/// whose turn it is, and when the advertisement should be away. A turn begins when a device connects, or
/// acquires, while nobody is served; it lasts while the device's link is up, and ends when the device leaves,
/// its link ends, or it did not complete a link within `timeout`. `wantsAdvertising` hears each change
/// (false: a turn began, true: it ended); with `enabled` false nothing is ever refused or withdrawn.
final class CentralTurns: Sendable {
    private struct Turn {
        /// The device served now (its link is up, or it connected or acquired and has `timeout` to finish).
        var holder: String?
        /// Bumped at each new holder, so a timer of an earlier turn does nothing.
        var number = 0
        /// The holder's link is up (both descriptors acquired).
        var linked = false

        mutating func begin(_ device: String) -> Int {
            holder = device
            linked = false
            number += 1
            return number
        }
    }

    let enabled: Bool
    private let timeout: Duration
    private let wantsAdvertising: @Sendable (Bool) -> Void
    private let turn = Mutex(Turn())

    init(enabled: Bool, timeout: Duration, wantsAdvertising: @escaping @Sendable (Bool) -> Void) {
        self.enabled = enabled
        self.timeout = timeout
        self.wantsAdvertising = wantsAdvertising
    }

    /// A device under our adapter connected (Device1.Connected true). With nobody served, its turn begins:
    /// the advertisement goes away before the kernel advertises the instance again.
    func connected(_ device: String) {
        guard enabled, let number = turn.withLock({ turn -> Int? in turn.holder == nil ? turn.begin(device) : nil }) else {
            return
        }
        begin(number)
    }

    /// The device left: its turn, if it had one, ends.
    func disconnected(_ device: String) {
        end(device: device)
    }

    /// Whether `device` may acquire now. It may when it is served, when nobody is, or when the device served has
    /// no link up (it acquired nothing: not a central of ours, or one that only browsed); then its turn begins.
    func mayAcquire(_ device: String) -> Bool {
        guard enabled else { return true }
        let (allowed, begun) = turn.withLock { turn -> (Bool, Int?) in
            if turn.holder == device { return (true, nil) }
            if turn.holder != nil, turn.linked { return (false, nil) }
            return (true, turn.begin(device))
        }
        if let begun { begin(begun) }
        return allowed
    }

    /// `device`'s link is up: its turn lasts until the link ends or the device leaves.
    func linked(_ device: String, _ link: AcquiredLink) {
        guard enabled else { return }
        let number = turn.withLock { turn -> Int? in
            guard turn.holder == device else { return nil }
            turn.linked = true
            return turn.number
        }
        guard let number else { return }
        link.whenEnded { [weak self] in self?.end(number: number) }
    }

    /// bluetoothd left: nobody is served (the registration brings the advertisement back with the application).
    func reset() {
        turn.withLock { turn in
            turn.holder = nil
            turn.linked = false
            turn.number += 1
        }
    }

    /// Takes the advertisement away and ends turn `number` after `timeout` unless its link is up by then.
    private func begin(_ number: Int) {
        wantsAdvertising(false)
        Task { [weak self] in
            guard let timeout = self?.timeout else { return }
            try? await Task.sleep(for: timeout)
            self?.end(number: number, unlessLinked: true)
        }
    }

    /// Ends the current turn (only turn `number`, or `device`'s, when given): the advertisement comes back.
    private func end(number: Int? = nil, device: String? = nil, unlessLinked: Bool = false) {
        guard enabled else { return }
        let ended = turn.withLock { turn -> Bool in
            guard turn.holder != nil, number == nil || turn.number == number, device == nil || turn.holder == device,
                  !(unlessLinked && turn.linked) else { return false }
            turn.holder = nil
            turn.linked = false
            return true
        }
        if ended { wantsAdvertising(true) }
    }
}
