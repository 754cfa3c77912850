import GATT
import ArgumentParser
import Synchronization
import Transport

extension ListenCommand {
    /// `listen --to` / `--role central`: connects to the peripheral, subscribes, and writes every message it
    /// sends; reconnects after each drop (without limit, with backoff) so Transport resumes, until a signal
    /// or `--count` messages.
    func receiveAsCentral(sink: sending MessageSink, shutdown: ShutdownSignal) async throws {
        let peerLink = try await link.makeCentralLink(verbose: verbose, receivesUnnumbered: format != .msgpipe)
        let outcomes = AsyncStream<CentralOutcome>.makeStream()
        let verbose = verbose
        let receiverBox = ReceiverBox()
        let reconnector = CentralReconnector(
            link: link, peerLink: peerLink, attempts: nil,
            note: { if verbose { printError($0) } },
            onReconnected: { _ in receiverBox.receiver?.connections.add(1, ordering: .relaxed) },
            onGiveUp: {})
        let receiver = MessageReceiver(
            format: format, maximumMessageSize: maximumMessageSize, verbose: verbose, dropAfterBytes: dropAfterBytes,
            onDisconnected: { reconnector.dropped($0) })
        receiverBox.receiver = receiver
        let receiving = receiver.start(on: peerLink, sink: sink, count: count)
        do {
            let peer = try await link.connect(peerLink) { if verbose { printError($0) } }
            receiver.connections.add(1, ordering: .relaxed)
            printError("connected to \(peer)")
        } catch {
            printError("cannot connect to \(link.displayName): \(error)")
            await reconnector.stop()
            throw ExitCode(1)
        }
        if let info = peerLink.peerInfo, !info.formats.contains(Self.advertisedFormats(format)) {
            printError("the peripheral does not speak --format \(format.rawValue) (its info characteristic says so)")
            await reconnector.stop()
            await peerLink.close()
            throw ExitCode(1)
        }
        Task {
            let error = await receiving.value
            outcomes.continuation.yield(.received(error))
        }
        Task {
            _ = await shutdown.wait()
            outcomes.continuation.yield(.signal)
        }
        var iterator = outcomes.stream.makeAsyncIterator()
        switch await iterator.next() {
        case let .received(error)?:
            if let error { try fail(error) }
            // --count: let the peripheral take its last acknowledgement (plain formats: the confirmation of
            // its last indication) and end the connection (at most 2 s).
            await reconnector.stop(awaitingDropWithin: .seconds(2))
            await receiver.finish(peerLink)
        case .signal?, nil:
            await reconnector.stop()
            // Whole messages were written as they arrived; a partial one is dropped with the process.
            if let error = receiver.outputError { try fail(error) }
        }
    }

}

/// How `listen --to` ended.
private enum CentralOutcome: Sendable {
    /// The receiving task ended: `--count` messages written (nil) or the output failed.
    case received(FileIOError?)
    case signal
}

/// The receiver, set once after it was made, for the reconnector's callback (they refer to each other).
private final class ReceiverBox: Sendable {
    private let value = Mutex<MessageReceiver?>(nil)

    var receiver: MessageReceiver? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
