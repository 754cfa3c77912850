import GATT
import Transport

/// The central's side of the connection layer: makes the link for the chosen backend, connects it (scanning
/// for a name, retrying transient failures within the connect timeout) and brings it back after a drop.
/// ``MessagePipe/connect(to:over:options:)`` is built on it; use it directly to drive a ``CentralLink``
/// yourself. MsgPipe adds `init(to:options:)`, which picks the stack (`PipeStacks.resolve`) when the link is made.
///
/// ```swift
/// let connector = PipeConnector(to: PipeAddress("kiosk"), options: options)
/// let link = try await connector.makeLink()
/// let peer = try await connector.connect(link)
/// let transport = Transport(link: link)
/// ```
public struct PipeConnector: Sendable {
    public let address: PipeAddress
    public let options: MessagePipe.Options
    /// Told each Bluetooth connection's PHY reader, the parameters loaded for it and the peer's accepted
    /// updates (a pipe's ``MessagePipe/linkParameters``).
    package var observation: LinkObservation?

    /// How long a central waits after a drop before its first reconnect attempt: a Linux peripheral re-arms
    /// its advertising right after the disconnect, and a Create Connection in that moment can fail
    /// (docs/LAB.md). Small next to Transport's resume window.
    public static let settleAfterDrop: Duration = .milliseconds(250)

    /// The stack that makes the link (nil: it is picked when the link is made, by the resolver MsgPipe gives).
    public let stack: (any PipeStack)?
    /// Picks the stack for the address, options and observation when none was given.
    package let resolve: (@Sendable (PipeAddress, MessagePipe.Options, LinkObservation?) async throws -> any PipeStack)?

    /// A connector to `address` over `stack`.
    ///
    /// ```swift
    /// let connector = PipeConnector(to: PipeAddress("kiosk"), over: myStack, options: options)
    /// ```
    public init(to address: PipeAddress, over stack: any PipeStack, options: MessagePipe.Options) {
        self.address = address
        self.stack = stack
        self.options = options
        resolve = nil
    }

    /// A connector to `address` whose stack `resolve` picks when the link is made.
    package init(
        to address: PipeAddress, options: MessagePipe.Options,
        resolve: @escaping @Sendable (PipeAddress, MessagePipe.Options, LinkObservation?) async throws -> any PipeStack
    ) {
        self.address = address
        stack = nil
        self.options = options
        self.resolve = resolve
    }

    /// A new central link, not yet connected, from the stack given at `init`, or else the one its resolver
    /// picks for the address and options.
    public func makeLink() async throws -> any CentralLink {
        try await resolvedStack().centralLink(to: address, options: options)
    }

    /// The stack given at `init`, or the one the resolver picks now.
    package func resolvedStack() async throws -> any PipeStack {
        if let stack { return stack }
        guard let resolve else { throw MessagePipeError.closed }
        return try await resolve(address, options, observation)
    }

    /// Connects (or reconnects) `link` to the peer: MTU exchange, discovery of the profile, subscription.
    /// Returns the peer's description. Over Bluetooth a transient failure (the peer not found yet, a Create
    /// Connection that failed or timed out, the link lost before GATT was set up) is tried again with the
    /// backoff of ``MessagePipe/Options/reconnect`` while ``MessagePipe/Options/connectTimeout`` lasts, as a
    /// phone keeps trying; anything else is thrown at once.
    @discardableResult
    public func connect(_ link: any CentralLink) async throws -> String {
        let deadline = ContinuousClock.now + options.connectTimeout
        var failures = 0
        while true {
            do {
                return try await link.connect(until: deadline)
            } catch {
                failures += 1
                let delay = options.reconnect.delay(afterFailures: failures)
                guard case .bluetooth = address, Self.isTransient(error), ContinuousClock.now + delay < deadline,
                      !Task.isCancelled else { throw error }
                options.note(.reconnect, "\(error); trying again in \(delay)")
                try await Task.sleep(for: delay)
            }
        }
    }

    /// True for a failure another attempt may fix: a backend's ``TransientError`` that says so, or GATT's
    /// timeout or disconnect.
    static func isTransient(_ error: any Error) -> Bool {
        switch error {
        case let error as any TransientError: error.isTransient
        case ATTError.transactionTimeout, ATTError.disconnected: true
        default: false
        }
    }

    /// Brings a dropped link back: after ``settleAfterDrop``, then with the backoff of
    /// ``MessagePipe/Options/reconnect``; false after `attempts` failures in a row (nil: until cancelled).
    public func reconnect(_ link: any CentralLink, attempts: Int?, onReconnected: (String) -> Void = { _ in }) async -> Bool {
        await reconnect(link, attempts: attempts, failedBefore: 0, onReconnected: onReconnected) != nil
    }

    /// ``reconnect(_:attempts:onReconnected:)`` going on from `failedBefore` failures in a row (they count for
    /// the backoff and against `attempts`): the failures in a row when it reconnected, nil when it gave up.
    func reconnect(
        _ link: any CentralLink, attempts: Int?, failedBefore: Int, onReconnected: (String) -> Void = { _ in }
    ) async -> Int? {
        var failures = failedBefore
        do { try await Task.sleep(for: Self.settleAfterDrop) } catch { return nil }
        while attempts.map({ failures < $0 }) ?? true {
            let delay = options.reconnect.delay(afterFailures: failures)
            if delay > .zero {
                do { try await Task.sleep(for: delay) } catch { return nil }
            }
            guard !Task.isCancelled else { return nil }
            do {
                let peer = try await connect(link)
                options.note(.reconnect, "reconnected to \(peer)")
                onReconnected(peer)
                return failures
            } catch {
                failures += 1
                options.note(.reconnect, "reconnect attempt \(failures)\(attempts.map { " of \($0)" } ?? "") failed: \(error)")
            }
        }
        return nil
    }
}
