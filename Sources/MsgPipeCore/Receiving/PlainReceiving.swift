public import Framing
public import Logging
public import Transport

/// Receiving a plain framing format (legacy, eom, lines) from a link's events: no acknowledgements, each
/// connection's packets decoded in order; a message left partial when the connection ends is logged and
/// dropped.
public enum PlainReceiving {
    /// Decodes `events` until they finish, handing each whole message to `deliver`, which returns false to
    /// stop there; stops at, and returns, the first error `deliver` throws.
    public static func receive<Events: AsyncSequence<LinkEvent, Never>, Failure: Error>(
        _ events: Events, format: FrameFormat, limits: ReassemblyLimits, logger: Logger,
        deliver: ([UInt8]) async throws(Failure) -> Bool
    ) async -> Failure? {
        var decoder = format.makeDecoder(limits: limits)
        var messages: [[UInt8]] = []
        let clock = ContinuousClock()
        let start = clock.now
        let emit = { (event: FrameEvent, messages: inout [[UInt8]]) in
            switch event {
            case let .message(message): messages.append(message.body)
            case .control: break
            case let .failure(failure): logger.warning("\(failure)")
            }
        }
        var iterator = events.makeAsyncIterator()
        while let event = await iterator.next(isolation: nil) {
            switch event {
            case let .packet(packet):
                decoder.receive(packet[...], now: start.duration(to: clock.now)) { emit($0, &messages) }
            case let .disconnected(reason):
                logger.debug("disconnected: \(reason)")
                decoder.finish { emit($0, &messages) }
            case .connected, .maximumPacketSizeChanged:
                continue
            }
            for body in messages {
                do throws(Failure) {
                    guard try await deliver(body) else { return nil }
                } catch {
                    return error
                }
            }
            messages.removeAll(keepingCapacity: true)
        }
        decoder.finish { emit($0, &messages) }
        return nil
    }

    /// Limits for a plain-format receiver of messages up to `maximumMessageSize`.
    public static func limits(maximumMessageSize: Int) -> ReassemblyLimits {
        ReassemblyLimits(maximumMessageSize: maximumMessageSize, maximumBufferedBytes: max(maximumMessageSize, 1) * 2 + 16)
    }
}
