import Transport

/// A ``Link`` that forwards another one and reports to an observer what passes: the link's events (so the
/// command learns of a disconnect while Transport consumes the events) and the bytes of each packet sent
/// (for the progress bar).
struct ObservedLink<Base: Link>: Link {
    let base: Base
    let events: ObservedEvents<Base.Events>
    private let onSent: @Sendable (Int) -> Void

    init(
        _ base: Base, onEvent: @escaping @Sendable (LinkEvent) -> Void, onSent: @escaping @Sendable (Int) -> Void
    ) {
        self.base = base
        events = ObservedEvents(base: base.events, observer: onEvent)
        self.onSent = onSent
    }

    func send(_ packet: [UInt8]) async throws {
        try await base.send(packet)
        onSent(packet.count)
    }

    func close() async { await base.close() }

    func renewIncoming() async { await base.renewIncoming() }
}

/// The events of an ``ObservedLink``: those of the base link, each shown to `observer` before it is passed on.
struct ObservedEvents<Base: AsyncSequence<LinkEvent, Never> & Sendable>: AsyncSequence, Sendable {
    typealias Element = LinkEvent
    typealias Failure = Never
    let base: Base
    let observer: @Sendable (LinkEvent) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let observer: @Sendable (LinkEvent) -> Void

        mutating func next() async -> LinkEvent? {
            let event = await base.next(isolation: nil)
            if let event { observer(event) }
            return event
        }

        mutating func next(isolation actor: isolated (any Actor)?) async -> LinkEvent? {
            let event = await base.next(isolation: actor)
            if let event { observer(event) }
            return event
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), observer: observer) }
}
