import Exchange
import ExchangePosix
import Glibc
public import Logging
public import MsgPipeCore
import Secure
import Synchronization
public import Transport

/// A durable queue for one peer: a message stays on disk from ``enqueue(_:)`` until the peer acknowledged it,
/// and goes again after a restart with the same session and id (docs/PROTOCOL.md 3.11; with end-to-end keys they
/// go sealed with it, as its origin). Never drops what it holds; one outbox per directory.
///
/// ```swift
/// let outbox = try MessageOutbox(directory: "/var/spool/readings")
/// try outbox.enqueue(Array("21.5 C".utf8))                      // durable now
/// try await outbox.deliver(to: "kitchen", options: MessagePipe.Options())   // returns once all were acknowledged
/// ```
public final class MessageOutbox: Sendable {
    public struct Options: Sendable {
        /// The most bytes of messages the outbox holds; a message that would pass it is refused.
        public var maximumBytes = 256 << 20
        /// The most messages the outbox holds.
        public var maximumMessages = 100_000
        /// The largest message it takes (and sends).
        public var maximumMessageSize = 16 << 20
        public var logger: Logger?

        public init() {}
    }

    /// A queued message: its id in the outbox's sender session, and its size.
    public struct Entry: Sendable, Hashable {
        public let id: UInt32
        public let size: Int
    }

    /// A message the peer refused for good, set aside (never deleted) at `path`.
    public struct RefusedMessage: Sendable, Equatable {
        public let id: UInt32
        public let path: String
        public let reason: String
    }

    /// What one ``deliver(to:options:waitingForMore:onDelivered:)`` did.
    public struct Report: Sendable, Equatable {
        /// Messages the peer acknowledged.
        public var delivered = 0
        /// Messages the peer refused, set aside in `refused/`.
        public var refused: [RefusedMessage] = []
    }

    static let lockName = ".msgpipe-lock"
    static let refusedFolder = "refused"

    public let directory: String
    private let options: Options
    private let lock: Mutex<DirectoryLock?>
    private let state: Mutex<State>
    /// Serializes the file work of enqueueing and taking out: ids are given in order, the state file has one writer.
    private let writing = Mutex(())

    private struct State {
        var saved: OutboxState
        var pending: [Entry]
        var bytes: Int
        /// The id the next enqueued message gets (may pass UInt32.max: then the session is renewed when empty).
        var nextID: UInt64
        var waiters: [CheckedContinuation<Void, Never>] = []
        var closed = false
    }

    /// Opens (or creates) the outbox in `directory`: removes what a crash left half written, and messages
    /// acknowledged before it whose removal did not reach the disk.
    ///
    /// Throws ``OutboxError/inUse(directory:)``, ``OutboxError/foreignState(path:)``,
    /// ``OutboxError/corruptState(path:)`` or ``OutboxError/io(_:)``.
    public init(directory: String, options: Options = Options()) throws(OutboxError) {
        self.directory = directory
        self.options = options
        try Self.io { () throws(DurableFiles.Failure) in try DurableFiles.makeDirectory(directory, mode: 0o700) }
        let lock: DirectoryLock
        do throws(DirectoryLock.Failure) {
            lock = try DirectoryLock(directory: directory, fileName: Self.lockName)
        } catch {
            switch error {
            case .inUse: throw .inUse(directory: directory)
            case let .system(operation, reason): throw .io("\(operation) failed: \(reason)")
            }
        }
        self.lock = Mutex(lock)
        let statePath = directory + "/" + OutboxState.fileName
        let saved: OutboxState
        if DurableFiles.size(of: statePath) != nil {
            let bytes = try Self.io { () throws(DurableFiles.Failure) in try DurableFiles.read(statePath) }
            do throws(OutboxState.Unreadable) {
                saved = try OutboxState(decoding: bytes)
            } catch {
                switch error {
                case .foreign: throw .foreignState(path: statePath)
                case .corrupt: throw .corruptState(path: statePath)
                }
            }
        } else {
            saved = OutboxState(session: SenderSession.random().id, removedThrough: 0)
            try Self.save(saved, in: directory)
        }
        var pending: [Entry] = []
        var removedLeftovers = false
        for name in try Self.io({ () throws(DurableFiles.Failure) in try DurableFiles.entries(of: directory) }) {
            if name.hasPrefix("."), name.hasSuffix(".msg.part") {
                unlink(directory + "/" + name)  // a crash mid-enqueue: never queued
            } else if let id = Self.id(of: name) {
                if id <= saved.removedThrough {
                    unlink(directory + "/" + name)  // acknowledged; its removal was lost
                    removedLeftovers = true
                } else {
                    pending.append(Entry(id: id, size: DurableFiles.size(of: directory + "/" + name) ?? 0))
                }
            }
        }
        if removedLeftovers { try Self.io { () throws(DurableFiles.Failure) in try DurableFiles.syncDirectory(directory) } }
        pending.sort { $0.id < $1.id }
        let refusedFolder = directory + "/" + Self.refusedFolder
        let refused = DurableFiles.isDirectory(refusedFolder)
            ? (try? DurableFiles.entries(of: refusedFolder))?.compactMap(Self.id(of:)) ?? [] : []
        let highest = max(saved.removedThrough, pending.last?.id ?? 0, refused.max() ?? 0)
        state = Mutex(State(
            saved: saved, pending: pending, bytes: pending.reduce(0) { $0 + $1.size }, nextID: UInt64(highest) + 1))
    }

    /// The messages queued, oldest first.
    public var entries: [Entry] { state.withLock { $0.pending } }

    /// The sender session the queued messages go out in, and the id of the oldest one (or of the next).
    public var senderSession: SenderSession {
        state.withLock { state in
            SenderSession(id: state.saved.session, nextMessageID: state.pending.first?.id ?? UInt32(truncatingIfNeeded: state.nextID))
        }
    }

    /// Queues `bytes` as one message; returns once it is durable. Throws
    /// ``OutboxError/full(directory:messages:bytes:size:)`` (nothing queued, nothing dropped),
    /// ``OutboxError/tooLarge(size:limit:)``, ``OutboxError/io(_:)`` (e.g. a full disk: no
    /// part of the message stays), ``OutboxError/closed``. Blocks the calling thread while it writes.
    @discardableResult
    public func enqueue(_ bytes: [UInt8]) throws(OutboxError) -> Entry {
        try enqueue(contentsOf: [bytes])[0]
    }

    /// Queues every body as one message each, in order, as one operation: all of them or none (a batch that
    /// does not fit whole throws ``OutboxError/batchFull(directory:messages:bytes:count:size:)``, a batch of
    /// one ``OutboxError/full(directory:messages:bytes:size:)``; a write that fails removes the batch's files).
    /// One directory sync for the batch; only a crash mid-batch can leave a prefix of it queued.
    ///
    /// ```swift
    /// let entries = try outbox.enqueue(contentsOf: readings)   // durable, ids in order, or nothing queued
    /// ```
    @discardableResult
    public func enqueue(contentsOf bodies: [[UInt8]]) throws(OutboxError) -> [Entry] {
        if let large = bodies.first(where: { $0.count > options.maximumMessageSize }) {
            throw .tooLarge(size: large.count, limit: options.maximumMessageSize)
        }
        guard !bodies.isEmpty else { return [] }
        let size = bodies.reduce(0) { $0 + $1.count }
        return try writing.withLock { _ throws(OutboxError) -> [Entry] in
            let (first, renew) = try state.withLock { state throws(OutboxError) -> (UInt32, Bool) in
                guard !state.closed else { throw .closed }
                let lastID = state.nextID + UInt64(bodies.count) - 1
                guard state.pending.count + bodies.count <= options.maximumMessages, state.bytes + size <= options.maximumBytes,
                    lastID <= UInt64(UInt32.max) || state.pending.isEmpty
                else {
                    if bodies.count == 1 {
                        throw .full(directory: directory, messages: state.pending.count, bytes: state.bytes, size: size)
                    }
                    throw .batchFull(
                        directory: directory, messages: state.pending.count, bytes: state.bytes, count: bodies.count, size: size)
                }
                return lastID <= UInt64(UInt32.max) ? (UInt32(state.nextID), false) : (1, true)
            }
            if renew {
                // Every id of the session was used and nothing is queued: a new session starts from 1.
                let renewed = OutboxState(session: SenderSession.random().id, removedThrough: 0)
                try Self.save(renewed, in: directory)
                state.withLock { $0.saved = renewed }
            }
            let entries = bodies.enumerated().map { Entry(id: first + UInt32($0.offset), size: $0.element.count) }
            try Self.io { () throws(DurableFiles.Failure) in try write(bodies, as: entries) }
            let waiters = state.withLock { state in
                state.pending += entries
                state.bytes += size
                state.nextID = UInt64(entries[entries.count - 1].id) + 1
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
            return entries
        }
    }

    /// Writes each body (synced) under its entry's name, then syncs the directory; on a failure removes every
    /// file of the batch before it throws.
    private func write(_ bodies: [[UInt8]], as entries: [Entry]) throws(DurableFiles.Failure) {
        var written: [String] = []
        do throws(DurableFiles.Failure) {
            for (body, entry) in zip(bodies, entries) {
                let path = directory + "/" + Self.fileName(entry.id)
                let temporary = directory + "/." + Self.fileName(entry.id) + ".part"
                written += [temporary, path]
                try DurableFiles.write(body, to: temporary, sync: true, mode: 0o600)
                try DurableFiles.rename(temporary, to: path)
            }
            try DurableFiles.syncDirectory(directory)
        } catch {
            for path in written { unlink(path) }
            try? DurableFiles.syncDirectory(directory)
            throw error
        }
    }

    /// The bytes of a queued message.
    public func read(_ entry: Entry) throws(OutboxError) -> [UInt8] {
        try Self.io { () throws(DurableFiles.Failure) in try DurableFiles.read(directory + "/" + Self.fileName(entry.id)) }
    }

    /// Lets go of the directory; a ``deliver(to:options:waitingForMore:onDelivered:)`` waiting for more returns.
    public func close() {
        let waiters = state.withLock { state in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
        lock.withLock { $0 = nil }
    }

    // MARK: Delivering

    /// Sends the queued messages to `peer` in order (msgpipe format) and takes each out once acknowledged;
    /// returns when none is left (with `waitingForMore`: goes on with what is enqueued, until ``close()``).
    ///
    /// A message the peer refuses for good (too large for it, rejected) is moved to `refused/` and reported;
    /// the ones after it go on. While the peer is away it reconnects as `options.reconnect` says, counting
    /// attempts in a row without a delivery. With end-to-end keys, a peer that forgot the secure session (it
    /// restarted: `MessagePipeError.peerSessionReset`) gets what it refused again, in order, on
    /// a new pipe; its journal knows each message's origin. `options.senderSession` and `maximumMessageSize` are set here.
    ///
    /// Throws ``OutboxError/undelivered(remaining:cause:)`` when the attempts ran out,
    /// ``OutboxError/notAuthenticated(remaining:reason:)`` at once when the peer refuses our key or wants keys,
    /// ``OutboxError/cancelled(remaining:)`` when the task was cancelled (the link is closed, the peer is not
    /// told to drop the message in progress), ``OutboxError/io(_:)``, ``OutboxError/closed``. Messages not
    /// delivered stay queued for the next call, in this process or the next.
    ///
    /// `onDelivered` is told each message taken out, in order, with the time since the one before it (the
    /// first: since the call): what one message took, connecting and waiting included.
    public func deliver(
        to peer: String, options pipeOptions: MessagePipe.Options, waitingForMore: Bool = false,
        onDelivered: @escaping @Sendable (Entry, _ elapsed: Duration) -> Void = { _, _ in }
    ) async throws(OutboxError) -> Report {
        let previous = Mutex(ContinuousClock.now)
        let onDelivered: @Sendable (Entry) -> Void = { entry in
            let now = ContinuousClock.now
            onDelivered(entry, previous.withLock { last in
                defer { last = now }
                return last.duration(to: now)
            })
        }
        guard pipeOptions.format == .msgpipe else {
            throw .undelivered(remaining: entries.count, cause: "an outbox needs the msgpipe format (only it acknowledges)")
        }
        var report = Report()
        var failures = 0
        var lastFailure = ""
        while true {
            guard !Task.isCancelled else { throw .cancelled(remaining: entries.count) }
            guard let first = entries.first else {
                guard waitingForMore else { return report }
                await waitForEnqueue()
                if state.withLock({ $0.closed }) { throw .closed }
                continue
            }
            if failures > 0 {
                guard failures < max(1, pipeOptions.reconnect.attempts) else {
                    throw .undelivered(remaining: entries.count, cause: lastFailure)
                }
                do { try await Task.sleep(for: pipeOptions.reconnect.delay(afterFailures: failures)) } catch {
                    throw .cancelled(remaining: entries.count)
                }
            }
            var options = pipeOptions
            // Plain: the queued ids are the Transport ids of the outbox's session. Sealed: each connection runs its
            // own handshake in a new Transport session, and each message names its origin inside the seal.
            options.senderSession = pipeOptions.keys == nil
                ? SenderSession(id: state.withLock { $0.saved.session }, nextMessageID: first.id) : nil
            options.maximumMessageSize = max(options.maximumMessageSize, self.options.maximumMessageSize)
            let pipe: MessagePipe
            do {
                pipe = try await MessagePipe.connect(to: peer, options: options)
            } catch {
                guard !Task.isCancelled else { throw .cancelled(remaining: entries.count) }
                if let reason = Self.authenticationFailure(error) {
                    throw .notAuthenticated(remaining: entries.count, reason: reason)
                }
                failures += 1
                lastFailure = "cannot connect to \(peer): \(error)"
                self.options.logger?.info("\(lastFailure)")
                continue
            }
            let outcome: RunOutcome
            do throws(OutboxError) {
                outcome = try await run(
                over: pipe, from: first.id, sealed: pipeOptions.keys != nil, waitingForMore: waitingForMore, report: &report,
                onDelivered: onDelivered)
            } catch {
                await pipe.close()
                throw error
            }
            await pipe.close()
            switch outcome {
            case .drained, .gap: failures = 0
            case .cancelled: throw .cancelled(remaining: entries.count)
            case let .failed(cause, progressed):
                failures = progressed ? 1 : failures + 1
                lastFailure = cause
                self.options.logger?.info("delivery to \(peer) failed: \(cause)")
            }
        }
    }

    private enum RunOutcome {
        /// Nothing left to send.
        case drained
        /// The next queued message's id does not follow: a new connection goes on from it.
        case gap
        case cancelled
        case failed(cause: String, progressed: Bool)
    }

    /// Sends queued messages over `pipe`, ids from `first` on, up to ``window`` (and ``windowBytes``) in flight,
    /// and takes them out in id order as their acknowledgements come. The first failure ends the run.
    private func run(
        over pipe: MessagePipe, from first: UInt32, sealed: Bool, waitingForMore: Bool, report: inout Report,
        onDelivered: @Sendable (Entry) -> Void
    ) async throws(OutboxError) -> RunOutcome {
        let session = state.withLock { $0.saved.session }
        var nextToSubmit = first
        var inFlight: [(entry: Entry, receipt: SendReceipt)] = []
        var inFlightBytes = 0
        var progressed = false
        /// Acknowledged, not yet taken out: taken out together (one state write for several).
        var acknowledged: [Entry] = []
        func takeOutAcknowledged() throws(OutboxError) {
            guard !acknowledged.isEmpty else { return }
            try takeOutDelivered(acknowledged)
            report.delivered += acknowledged.count
            for entry in acknowledged { onDelivered(entry) }
            acknowledged = []
        }
        /// A message that could not be queued (nothing of it reached Transport), handled once those before it settled.
        var unsent: (entry: Entry, error: any Error)?
        while true {
            while unsent == nil, inFlight.count < Self.window, inFlight.isEmpty || inFlightBytes < Self.windowBytes,
                let entry = entries.first(where: { $0.id >= nextToSubmit })
            {
                guard entry.id == nextToSubmit else { break }  // a gap: a new connection goes on from it
                let bytes = try read(entry)
                do {
                    let origin = sealed ? MessageOrigin(session: session, id: entry.id) : nil
                    inFlight.append((entry, try await pipe.submit(bytes, origin: origin)))
                    inFlightBytes += entry.size
                    nextToSubmit = entry.id &+ 1
                } catch {
                    if Task.isCancelled { return .cancelled }
                    unsent = (entry, error)
                }
            }
            guard let head = inFlight.first else {
                try takeOutAcknowledged()
                if let unsent { return try settle(unsent.entry, failure: unsent.error, progressed: progressed, report: &report) }
                if !entries.isEmpty { return .gap }
                guard waitingForMore else { return .drained }
                await waitForEnqueue()
                if state.withLock({ $0.closed }) { throw .closed }
                if Task.isCancelled { return .cancelled }
                continue
            }
            // The wait runs in a task of its own: cancelling this one closes the pipe rather than cancelling the
            // message, which would tell the peer to give its id up (a resend in this session would be refused).
            let waiting = Task { try await head.receipt.acknowledged() }
            let result = await withTaskCancellationHandler {
                await waiting.result
            } onCancel: {
                Task { await pipe.close() }
            }
            inFlight.removeFirst()
            inFlightBytes -= head.entry.size
            if case .success = result {
                acknowledged.append(head.entry)
                progressed = true
            }
            if Task.isCancelled || acknowledged.count >= max(1, Self.window / 2) || inFlight.isEmpty { try takeOutAcknowledged() }
            if Task.isCancelled { return .cancelled }
            if case let .failure(error) = result {
                try takeOutAcknowledged()
                // The messages still in flight fail as the pipe closes; they stay queued for the next run.
                return try settle(head.entry, failure: error, progressed: progressed, report: &report)
            }
        }
    }

    /// The most messages, and bytes of messages, in flight at once (at least one message): enough to keep a
    /// receiver's group commit busy, few enough that memory stays bounded.
    static let window = 32
    static let windowBytes = 4 << 20

    /// What the failure of `entry`'s send means: a refusal sets it aside, an id the peer gave up renews the
    /// session (the messages in flight with it may then be kept twice by a receiver that had them), anything
    /// else is worth another connection.
    private func settle(_ entry: Entry, failure error: any Error, progressed: Bool, report: inout Report) throws(OutboxError)
        -> RunOutcome
    {
        if let reason = Self.authenticationFailure(error) {
            throw .notAuthenticated(remaining: entries.count, reason: reason)
        }
        if let reason = Self.refusal(error) {
            let path = try setAside(entry)
            report.refused.append(RefusedMessage(id: entry.id, path: path, reason: reason))
            options.logger?.warning("message \(entry.id) refused by the peer (\(reason)); set aside as \(path)")
            return .gap
        }
        if case TransportError.abandonedAtPeer = error {
            try renewSession()
            return .gap
        }
        return .failed(cause: "\(error)", progressed: progressed)
    }

    /// The reason when `error` says the peer did not take our key, or wants one we lack: no message can go
    /// until the keys change, so delivery stops with every message still queued.
    private static func authenticationFailure(_ error: any Error) -> String? {
        switch error {
        case MessagePipeError.notAuthenticated(let reason): reason
        case MessagePipeError.keysUnusable(let reason): reason
        case TransportError.rejectedByPeer(_, .notAuthenticated): "the peer takes only sealed messages (end-to-end keys)"
        default: nil
        }
    }

    /// The reason when `error` is the peer's final refusal of a message; nil for failures worth another try.
    private static func refusal(_ error: any Error) -> String? {
        switch error {
        case TransportError.rejectedByPeer(_, let reason): "rejected: \(reason)"
        case TransportError.messageTooLarge, MessagePipeError.messageTooLarge: "\(error)"
        default: nil
        }
    }

    private func waitForEnqueue() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    guard !state.closed, state.pending.isEmpty, !Task.isCancelled else { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiters = state.withLock { state in
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    // MARK: Files

    /// Sets a refused `entry` aside in `refused/` and returns its path; the state records it after the rename, so
    /// its id is never given again (opening counts the ids in `refused/`).
    private func setAside(_ entry: Entry) throws(OutboxError) -> String {
        try writing.withLock { _ throws(OutboxError) -> String in
            let name = Self.fileName(entry.id)
            let folder = directory + "/" + Self.refusedFolder
            let kept = folder + "/" + name
            try Self.io { () throws(DurableFiles.Failure) in
                try DurableFiles.makeDirectory(folder, mode: 0o700)
                try DurableFiles.rename(directory + "/" + name, to: kept)
                try DurableFiles.syncDirectory(folder)
            }
            var updated = state.withLock { $0.saved }
            updated.removedThrough = entry.id
            try Self.save(updated, in: directory)
            state.withLock { state in
                state.saved = updated
                state.pending.removeAll { $0.id == entry.id }
                state.bytes -= entry.size
            }
            return kept
        }
    }

    /// Takes out acknowledged `entries` (in id order, the oldest queued first): one state write records the
    /// last, then their files are deleted.
    private func takeOutDelivered(_ entries: [Entry]) throws(OutboxError) {
        guard let last = entries.last else { return }
        try writing.withLock { _ throws(OutboxError) in
            var updated = state.withLock { $0.saved }
            updated.removedThrough = last.id
            try Self.save(updated, in: directory)
            for entry in entries { unlink(directory + "/" + Self.fileName(entry.id)) }
            let ids = Set(entries.map(\.id))
            state.withLock { state in
                state.saved = updated
                state.pending.removeAll { ids.contains($0.id) }
                state.bytes -= entries.reduce(0) { $0 + $1.size }
            }
        }
    }

    private func renewSession() throws(OutboxError) {
        try writing.withLock { _ throws(OutboxError) in
            var renewed = state.withLock { $0.saved }
            renewed.session = SenderSession.random().id
            try Self.save(renewed, in: directory)
            state.withLock { $0.saved = renewed }
        }
    }

    /// Replaces the state file: written, synced, renamed, directory synced.
    private static func save(_ saved: OutboxState, in directory: String) throws(OutboxError) {
        let path = directory + "/" + OutboxState.fileName
        try io { () throws(DurableFiles.Failure) in
            try DurableFiles.write(saved.encoded(), to: path + ".part", sync: true, mode: 0o600)
            try DurableFiles.rename(path + ".part", to: path)
            try DurableFiles.syncDirectory(directory)
        }
    }

    /// `0000000042.msg` for id 42: names sort by id.
    static func fileName(_ id: UInt32) -> String {
        let digits = String(id)
        return String(repeating: "0", count: 10 - digits.count) + digits + ".msg"
    }

    static func id(of name: String) -> UInt32? {
        guard name.count == 14, name.hasSuffix(".msg"), name.prefix(10).allSatisfy(\.isASCII) else { return nil }
        guard let id = UInt32(name.prefix(10)), id > 0 else { return nil }
        return id
    }

    private static func io<T>(_ body: () throws(DurableFiles.Failure) -> T) throws(OutboxError) -> T {
        do { return try body() } catch { throw .io(error.description) }
    }
}
