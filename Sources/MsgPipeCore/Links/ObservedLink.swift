public import Transport

/// A `Link` that forwards another one and shows an observer what passes: the link's events (to learn of a
/// disconnect while Transport consumes them) and the size of each packet sent (for progress).
public struct ObservedLink<Base: Link>: Link {
    public let base: Base
    public let events: ObservedEvents<Base.Events>
    private let onSent: @Sendable (Int) -> Void

    public init(
        _ base: Base, onEvent: @escaping @Sendable (LinkEvent) -> Void, onSent: @escaping @Sendable (Int) -> Void
    ) {
        self.base = base
        events = ObservedEvents(base: base.events, observer: onEvent)
        self.onSent = onSent
    }

    public func send(_ packet: [UInt8]) async throws {
        try await base.send(packet)
        onSent(packet.count)
    }

    public func close() async { await base.close() }

    public func renewIncoming() async { await base.renewIncoming() }
}

/// The events of an ``ObservedLink``: those of the base link, each shown to `observer` before it is passed on.
public struct ObservedEvents<Base: AsyncSequence<LinkEvent, Never> & Sendable>: AsyncSequence, Sendable {
    public typealias Element = LinkEvent
    public typealias Failure = Never
    let base: Base
    let observer: @Sendable (LinkEvent) -> Void

    /// `base`'s events, each shown to `observer` before it is passed on.
    public init(base: Base, observer: @escaping @Sendable (LinkEvent) -> Void) {
        self.base = base
        self.observer = observer
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let observer: @Sendable (LinkEvent) -> Void

        public mutating func next() async -> LinkEvent? {
            let event = await base.next(isolation: nil)
            if let event { observer(event) }
            return event
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> LinkEvent? {
            let event = await base.next(isolation: actor)
            if let event { observer(event) }
            return event
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), observer: observer) }
}
