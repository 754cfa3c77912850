import MsgPipe
import Synchronization

/// Messages for the centrals from `PREFIX/ID/down` (persistent session, QoS 1): each journaled (fsync) before
/// its PUBACK, handed out by ``messages`` (after a restart: the journal first), reported on `PREFIX/ID/ack` once
/// ``acknowledged(_:centrals:)`` says its centrals have it. ``deliver(through:)`` does all of it for a server;
/// ``start(serving:)`` and ``start(connectingTo:options:)`` serve or connect first and run it in the background.
/// ```swift
/// let downlink = try await MQTTDownlink.connect(to: broker, gatewayID: "gw1", journal: "/var/lib/gw/down")
/// let server = try await MessagePipe.serve(at: "kiosk")
/// await downlink.deliver(through: server)        // until close(); or deliver(to: pipe) as the central
/// ```
public final class MQTTDownlink: Sendable {
    /// One message for the centrals.
    public struct Message: Sendable, Equatable {
        /// Its `id` user property (or `ID-N`, made from the gateway id and the arrival number, without one).
        public let id: String
        /// Its `peer` user property: the one central it is for; nil: every connected central.
        public let peer: String?
        public let bytes: [UInt8]
        let journalName: String
    }

    public let url: MQTTBrokerURL
    public let gatewayID: String
    /// `PREFIX/ID/down`: where the fleet's backend publishes messages for this gateway's centrals.
    public var downTopic: String { "\(url.prefix)/\(gatewayID)/down" }
    /// `PREFIX/ID/ack`: one message (payload and `id` property: the message's id) per acknowledged message.
    public var ackTopic: String { "\(url.prefix)/\(gatewayID)/ack" }
    /// `PREFIX/ID/metrics`: this process's metrics line every ``MQTTGateway/Options/metricsInterval``.
    public var metricsTopic: String { "\(url.prefix)/\(gatewayID)/metrics" }

    /// What the journal held at start, then each message as it arrives. Ends at ``close()``.
    public let messages: AsyncStream<Message>
    private let continuation: AsyncStream<Message>.Continuation
    private let journal: DownlinkJournal
    private let client: MQTTClient
    let options: MQTTGateway.Options
    let counters = Mutex(MQTTGatewayMetrics())
    let recorded: RecordedMetrics
    let centrals = DownlinkCentrals()
    private let metricsTask = Mutex<Task<Void, Never>?>(nil)
    /// Files the journal could not read at start (left in place).
    public let unreadableJournalFiles: [String]

    private init(
        url: MQTTBrokerURL, gatewayID: String, journal: DownlinkJournal, client: MQTTClient, unreadable: [String],
        options: MQTTGateway.Options, stream: (AsyncStream<Message>, AsyncStream<Message>.Continuation)
    ) {
        self.options = options
        recorded = RecordedMetrics(gatewayID: gatewayID)
        self.url = url
        self.gatewayID = gatewayID
        self.journal = journal
        self.client = client
        unreadableJournalFiles = unreadable
        (messages, continuation) = stream
    }

    /// Opens the journal in `directory` (created if missing), connects with a persistent session and
    /// subscribes to `PREFIX/ID/down`. Throws as ``MQTTGateway/connect(to:gatewayID:options:)`` does, and
    /// ``MQTTGatewayError/journal(_:)`` when the directory cannot be used.
    public static func connect(
        to url: MQTTBrokerURL, gatewayID: String, journal directory: String,
        options: MQTTGateway.Options = MQTTGateway.Options()
    ) async throws(MQTTGatewayError) -> MQTTDownlink {
        guard !gatewayID.isEmpty, !gatewayID.contains(where: { "/+#\0".contains($0) }) else {
            throw .badGatewayID(gatewayID)
        }
        let journal = try DownlinkJournal(directory: directory)
        let (held, unreadable) = journal.pending()
        let stream = AsyncStream<Message>.makeStream()
        for message in held { stream.continuation.yield(message) }
        let number = Mutex(journal.nextNumber())
        let client = MQTTClient(
            url: url, clientID: "msgpipe-\(gatewayID)-down", will: nil, persistentSession: true,
            trustedCAFile: options.trustedCAFile,
            onLost: { cause in options.onNote("lost the broker \(url): \(cause); reconnecting") },
            onMessage: { _, payload, id, peer in
                // On paho's thread, before the PUBACK: the message is on disk before the broker forgets it.
                let name = number.withLock { number in
                    defer { number += 1 }
                    let digits = String(number)
                    return String(repeating: "0", count: 20 - digits.count) + digits + ".down"
                }
                let message = Message(
                    id: id ?? "\(gatewayID)-\(name.prefix(20))", peer: peer, bytes: payload, journalName: name)
                do throws(MQTTGatewayError) {
                    try journal.store(message)
                } catch {
                    options.onNote("downlink journal: \(error); the broker delivers the message again")
                    return false
                }
                stream.continuation.yield(message)
                return true
            })
        try await client.connect(timeout: options.connectTimeout)
        let downlink = MQTTDownlink(
            url: url, gatewayID: gatewayID, journal: journal, client: client, unreadable: unreadable, options: options,
            stream: stream)
        do throws(MQTTGatewayError) {
            try await client.subscribe(downlink.downTopic)
        } catch {
            await client.close()
            throw error
        }
        if let interval = options.metricsInterval {
            downlink.metricsTask.withLock {
                $0 = RecordedMetrics.repeating(every: interval) { try? await downlink.publishMetrics() }
            }
        }
        return downlink
    }

    /// `centrals` centrals acknowledged `message`: publishes its id to `PREFIX/ID/ack` (user properties `id`
    /// and `centrals`; returns once the broker has it, waiting while the broker is away), then removes it from
    /// the journal.
    public func acknowledged(_ message: Message, centrals: Int = 1) async throws(MQTTGatewayError) {
        try await client.publish(
            MQTTClient.Message(
                topic: ackTopic, payload: Array(message.id.utf8),
                properties: [("id", message.id), ("centrals", String(centrals))]))
        try journal.remove(message)
        counters.withLock {
            $0.messagesDown += 1
            $0.bytesDown += message.bytes.count
        }
        recorded.messagesDown.increment()
        recorded.bytesDown.increment(by: message.bytes.count)
    }

    /// The counters so far: messages and bytes down (acknowledged by their centrals), retransmissions, the
    /// centrals connected.
    public var metrics: MQTTGatewayMetrics {
        let centrals = centrals.connectedCount
        return counters.withLock { metrics in
            metrics.centralsConnected = centrals
            return metrics
        }
    }

    /// Publishes the metrics line (``MQTTGatewayMetrics/jsonLine``) to ``metricsTopic`` now.
    public func publishMetrics() async throws(MQTTGatewayError) {
        recorded.centrals.record(centrals.connectedCount)
        try await client.publish(MQTTClient.Message(topic: metricsTopic, payload: Array(metrics.jsonLine.utf8)))
    }

    /// Ends ``messages`` and ``deliver(through:)``, and disconnects; what the journal holds stays for the next
    /// start.
    public func close() async {
        metricsTask.withLock { $0 }?.cancel()
        centrals.finish()
        continuation.finish()
        await client.close()
    }
}
