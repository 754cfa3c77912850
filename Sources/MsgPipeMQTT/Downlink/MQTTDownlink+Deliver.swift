public import MsgPipe

extension MQTTDownlink {
    /// As the peripheral: delivers each message to the centrals of `server` until ``close()`` or cancellation.
    /// A message with a `peer` goes to that central only; without one to every central connected when its
    /// turn comes. It is reported on `PREFIX/ID/ack` once every addressed central acknowledged it (a central
    /// whose session ends first is no longer waited for; at least one must acknowledge). Messages go out in
    /// arrival order: one whose central is not connected waits, in the journal, and holds the later ones.
    public func deliver(through server: PipeServer) async {
        let centrals = self.centrals
        let intake = Task {
            for await pipe in server.centrals {
                // Those whose session ended go as new ones come: the list stays within the server's sessions.
                for known in centrals.all where await known.transport?.isClosed ?? false { centrals.remove(known) }
                centrals.add(pipe)
            }
        }
        defer { intake.cancel() }
        await deliverMessages()
    }

    /// As the central: delivers each message to `pipe` (whatever its `peer` says), reporting each once the
    /// peripheral acknowledged it, until ``close()`` or cancellation.
    public func deliver(to pipe: MessagePipe) async {
        centrals.add(pipe)
        await deliverMessages(ignoringPeer: true)
    }

    private func deliverMessages(ignoringPeer: Bool = false) async {
        for await message in messages {
            guard let count = await deliver(message, peer: ignoringPeer ? nil : message.peer) else { return }
            while !Task.isCancelled {
                do throws(MQTTGatewayError) {
                    try await acknowledged(message, centrals: count)
                    break
                } catch {
                    options.onNote("acknowledgement of \(message.id): \(error); trying again in a second")
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    /// Sends `message` to its centrals; returns how many acknowledged it, nil when cancelled or closed. A
    /// failed send to a central whose session lasts is tried again a second later (it may be resuming).
    private func deliver(_ message: Message, peer: String?) async -> Int? {
        while !Task.isCancelled {
            let (targets, version) = centrals.targets(for: peer)
            if targets.isEmpty {
                guard await centrals.wait(after: version) else { return nil }
                continue
            }
            var waiting = targets
            var acknowledged = 0
            while !waiting.isEmpty, !Task.isCancelled {
                let outcomes = await withTaskGroup(of: (MessagePipe, Bool).self) { group in
                    for pipe in waiting {
                        group.addTask { (pipe, await self.send(message, to: pipe)) }
                    }
                    var outcomes: [(MessagePipe, Bool)] = []
                    for await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                waiting = []
                for (pipe, sent) in outcomes {
                    if sent {
                        acknowledged += 1
                    } else if await pipe.transport?.isClosed ?? false {
                        centrals.remove(pipe)  // its session ended: the central left for good
                    } else {
                        waiting.append(pipe)
                    }
                }
                if !waiting.isEmpty { try? await Task.sleep(for: .seconds(1)) }
            }
            if Task.isCancelled { return nil }
            if acknowledged > 0 { return acknowledged }
        }
        return nil
    }

    /// One send; true once the central acknowledged it. Counts the segments Transport sent again meanwhile
    /// (the only sender on the pipe is this delivery, one message at a time).
    private func send(_ message: Message, to pipe: MessagePipe) async -> Bool {
        let before = await pipe.transport?.retransmittedSegments ?? 0
        let sent: Bool
        do {
            try await pipe.send(message.bytes)
            sent = true
        } catch {
            options.onNote("message \(message.id) to \(pipe.peer): \(error)")
            sent = false
        }
        let resent = (await pipe.transport?.retransmittedSegments ?? 0) - before
        if resent > 0 {
            counters.withLock { $0.retransmissions += resent }
            recorded.retransmissions.increment(by: resent)
        }
        return sent
    }
}
