public import Transport

extension TransportOptions {
    /// Short timers for tests over in-memory links: retransmission after 50 ms (at least 20 ms), acknowledgements
    /// after 2 ms.
    public static var fastForTests: TransportOptions {
        var options = TransportOptions()
        options.endpoint.initialRetransmissionTimeout = .milliseconds(50)
        options.endpoint.minimumRetransmissionTimeout = .milliseconds(20)
        options.endpoint.acknowledgementDelay = .milliseconds(2)
        return options
    }
}
