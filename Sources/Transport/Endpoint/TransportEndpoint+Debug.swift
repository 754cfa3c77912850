extension TransportEndpoint {
    /// A one-paragraph dump of the sender's and receiver's state, for diagnostics and failing tests.
    public var debugSummary: String {
        "sender: \(senderSummary)\nreceiver: \(receiverSummary)"
    }
}

extension Sender {
    var summary: String {
        "session \(String(session, radix: 16)) greeted \(greeted) first unfinished \(firstUnfinishedID) inFlight \(inFlight) "
            + messages.map { message in
            "[id \(message.messageID) ch \(message.channel) \(message.phase) checked \(message.isChecked) acked \(message.acked.count)/\(message.encoder?.packetCount ?? -1) next \(message.nextUnsent) rq \(message.retransmitQueue.count) flights \(message.flights.count) piece \(String(describing: message.piece)) timer \(String(describing: message.timerAt)) timeouts \(message.timeoutsWithoutProgress) query \(message.queryPending)/\(String(describing: message.querySequence))]"
        }.joined(separator: " ")
    }
}

extension Receiver {
    var summary: String {
        "session \(peerSession.map { String($0, radix: 16) } ?? "-") greeted \(greetedOnConnection) held \(messagesHeld) "
            + "ahead \(aheadIDs) unaccepted \(unacceptedIDs) next \(nextDeliveryID) channels \(channels) buffered \(bufferedBytes) app \(applicationQueue.count) " + open.map {
            "[id \($0.header.messageID) held \($0.held.count)/\($0.cut.count) first missing \($0.held.firstMissing()) highest \($0.highest) partial \($0.stream.partialSegments)]"
        }.joined(separator: " ")
    }
}
