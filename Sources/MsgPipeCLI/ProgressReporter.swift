import MsgPipe
import Synchronization

/// Draws a ``ProgressBar`` on standard error while bytes go out, at most every `interval`, only when
/// standard error is a terminal (never with --json, never into a log file).
final class ProgressReporter: Sendable {
    private struct State {
        var done = 0
        var lastDrawn: ContinuousClock.Instant?
        var drawn = false
    }

    private let bar: ProgressBar?
    private let start = ContinuousClock.now
    private let interval: Duration
    private let state = Mutex(State())

    /// A reporter for `total` bytes; it draws nothing unless `enabled` and standard error is a terminal.
    init(total: Int, enabled: Bool, interval: Duration = .milliseconds(100)) {
        bar = enabled && OutputBuffer.isTerminal(2) ? ProgressBar(total: total) : nil
        self.interval = interval
    }

    /// Counts `bytes` more sent and redraws when the last drawing is older than the interval.
    func add(_ bytes: Int) {
        let now = ContinuousClock.now
        let (done, line) = state.withLock { state -> (Int, String?) in
            state.done += bytes
            guard let bar, state.lastDrawn.map({ $0.duration(to: now) >= interval }) ?? true else {
                return (state.done, nil)
            }
            state.lastDrawn = now
            state.drawn = true
            return (state.done, bar.render(done: state.done, elapsed: start.duration(to: now)))
        }
        CommandTaps.current.sentBytes?(done)
        if let line { draw("\r" + line + "\u{1B}[K") }
    }

    /// Draws the final state and ends the line (when anything was drawn).
    func finish(complete: Bool) {
        guard let bar else { return }
        let line = state.withLock { state -> String? in
            guard state.drawn else { return nil }
            return bar.render(done: complete ? max(state.done, bar.total) : state.done, elapsed: start.duration(to: .now))
        }
        if let line { draw("\r" + line + "\u{1B}[K\n") }
    }

    /// Prints a diagnostic line without garbling the bar.
    func note(_ message: String) {
        let drawn = state.withLock { $0.drawn }
        if drawn && bar != nil { draw("\r\u{1B}[K") }
        printError(message)
    }

    private func draw(_ text: String) { try? OutputBuffer.write(Array(text.utf8), to: 2) }
}
