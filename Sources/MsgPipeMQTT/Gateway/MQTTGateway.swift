import Framing
import Metrics
public import MsgPipe
import Synchronization

/// A gateway on an MQTT broker: each message a central sends is published (MQTT 5, QoS 1) to `PREFIX/ID/up`
/// and acknowledged to the central only after the broker's PUBACK (the pipes hold their acknowledgements);
/// while the broker is away the centrals see backpressure. `PREFIX/ID/status`: `online`, `offline` as Will.
/// ```swift
/// let gateway = try await MQTTGateway.connect(to: MQTTBrokerURL("mqtt://broker/fleet"), gatewayID: "gw1")
/// var options = MessagePipe.Options()
/// options.holdsAcknowledgements = true
/// let server = try await MessagePipe.serve(at: "kiosk", options: options)
/// try await gateway.uplink(from: server)      // until the server ends; throws if the broker refuses
/// await gateway.close()
/// ```
public final class MQTTGateway: Sendable {
    /// The broker and topic prefix.
    public let url: MQTTBrokerURL
    /// The gateway's id: the second topic level.
    public let gatewayID: String
    /// `PREFIX/ID/up`: one publish per received message.
    public var upTopic: String { "\(url.prefix)/\(gatewayID)/up" }
    /// `PREFIX/ID/status`: `online` or `offline`, retained.
    public var statusTopic: String { "\(url.prefix)/\(gatewayID)/status" }
    /// `PREFIX/ID/metrics`: a JSON line every metrics interval.
    public var metricsTopic: String { "\(url.prefix)/\(gatewayID)/metrics" }
    /// `PREFIX/ID/served`: `serve`'s outcome lines.
    public var servedTopic: String { "\(url.prefix)/\(gatewayID)/served" }

    private let client: MQTTClient
    private let counters = Mutex(MQTTGatewayMetrics())
    private let recorded: RecordedMetrics
    /// Where the metrics line's `refused_handshakes` comes from (``countRefusedHandshakes(of:)``).
    private let refusals = Mutex<(@Sendable () -> Int)?>(nil)
    private let metricsTask = Mutex<Task<Void, Never>?>(nil)

    /// How a gateway runs.
    public struct Options: Sendable {
        /// The first connection must be up within this long (later outages are waited out).
        public var connectTimeout: Duration = .seconds(10)
        /// For `mqtts://`: a PEM file of the CAs the broker's certificate must chain to, trusted instead of
        /// the system's (/etc/ssl/certs); nil: the system's.
        public var trustedCAFile: String?
        /// How often a metrics line goes to `PREFIX/ID/metrics`; nil: never.
        public var metricsInterval: Duration? = .seconds(60)
        /// Told about lost and restored broker connections (the library never prints).
        public var onNote: @Sendable (String) -> Void = { _ in }

        /// Options with the defaults above but what is given; `listen`, `serve` and `send --mqtt` make theirs so.
        ///
        /// ```swift
        /// let options = MQTTGateway.Options(trustedCAFile: "/etc/msgpipe/ca.pem", metricsInterval: nil) { print($0) }
        /// ```
        public init(
            trustedCAFile: String? = nil, metricsInterval: Duration? = .seconds(60),
            onNote: @escaping @Sendable (String) -> Void = { _ in }
        ) {
            self.trustedCAFile = trustedCAFile
            self.metricsInterval = metricsInterval
            self.onNote = onNote
        }
    }

    private init(url: MQTTBrokerURL, gatewayID: String, client: MQTTClient) {
        self.url = url
        self.gatewayID = gatewayID
        self.client = client
        recorded = RecordedMetrics(gatewayID: gatewayID)
    }

    /// Connects to the broker and publishes `online`. Throws ``MQTTGatewayError/badGatewayID(_:)``,
    /// ``MQTTGatewayError/connectionRefused(broker:reasonCode:reason:)`` (bad credentials, not authorized) or
    /// ``MQTTGatewayError/unreachable(broker:detail:)`` (nothing answered within the connect timeout), or
    /// ``MQTTGatewayError/untrustedBroker(broker:detail:)`` (TLS: the broker's certificate is not trusted).
    public static func connect(
        to url: MQTTBrokerURL, gatewayID: String, options: Options = Options()
    ) async throws(MQTTGatewayError) -> MQTTGateway {
        guard !gatewayID.isEmpty, !gatewayID.contains(where: { "/+#\0".contains($0) }) else {
            throw .badGatewayID(gatewayID)
        }
        let status = "\(url.prefix)/\(gatewayID)/status"
        let online = MQTTClient.Message(topic: status, payload: Array("online".utf8), retained: true)
        let box = Mutex<MQTTClient?>(nil)
        let client = MQTTClient(
            url: url, clientID: "msgpipe-\(gatewayID)",
            will: MQTTClient.Message(topic: status, payload: Array("offline".utf8), retained: true),
            trustedCAFile: options.trustedCAFile,
            onConnected: {
                // Every connect sets the will again; `online` follows it.
                guard let client = box.withLock({ $0 }) else { return }
                Task { try? await client.publish(online) }
            },
            onLost: { cause in options.onNote("lost the broker \(url): \(cause); reconnecting") })
        box.withLock { $0 = client }
        try await client.connect(timeout: options.connectTimeout)
        let gateway = MQTTGateway(url: url, gatewayID: gatewayID, client: client)
        if let interval = options.metricsInterval {
            gateway.metricsTask.withLock { $0 = RecordedMetrics.repeating(every: interval) { try? await gateway.publishMetrics() } }
        }
        return gateway
    }

    /// The message's id in the fleet: the central's Transport session and message id, the same on every
    /// publish of that message (also when the central resends it to another gateway), so a consumer can drop
    /// duplicates by it.
    public static func messageID(of message: PipeMessage) -> String? {
        guard let session = message.senderSession, let id = message.id else { return nil }
        let hex = String(session, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + "-" + String(id)
    }

    /// Publishes `message` from `peer` to `PREFIX/ID/up` (user properties `id`, `peer`, `crc32`, and with
    /// end-to-end keys `peer_key` and `peer_name`, the key that sealed it) and, once the broker acknowledged it, accepts it
    /// (the central's `send` completes). Waits while the broker is away. Throws
    /// ``MQTTGatewayError/publishRefused(topic:reasonCode:reason:)``: the message is then not accepted.
    public func forward(_ message: PipeMessage, from peer: String) async throws(MQTTGatewayError) {
        var properties: [(String, String)] = []
        if let id = Self.messageID(of: message) { properties.append(("id", id)) }
        properties.append(("peer", peer))
        if let sender = message.sender {
            properties.append(("peer_key", sender.key.text))
            if let name = sender.name { properties.append(("peer_name", name)) }
        }
        let crc = String(CRC32.checksum(message.bytes), radix: 16)
        properties.append(("crc32", String(repeating: "0", count: 8 - crc.count) + crc))
        recorded.held.record(counters.withLock { $0.messagesHeld += 1; return $0.messagesHeld })
        defer { recorded.held.record(counters.withLock { $0.messagesHeld -= 1; return $0.messagesHeld }) }
        try await client.publish(MQTTClient.Message(topic: upTopic, payload: message.bytes, properties: properties))
        await message.accept()
        counters.withLock {
            $0.messagesUp += 1
            $0.bytesUp += message.bytes.count
        }
        recorded.messagesUp.increment()
        recorded.bytesUp.increment(by: message.bytes.count)
    }

    /// ``forward(_:from:)`` in the shape MsgPipe's `MessageInbox.receive(from:onPipe:forwarding:as:)` takes:
    /// each message is published under its central's peer and accepted once the broker has it, before the inbox
    /// keeps it. A refused publish throws, and ends the inbox's receiving with that error.
    ///
    /// ```swift
    /// let end = await inbox.receive(from: server, forwarding: gateway.forwarding) { message, central in
    ///     MessageDirectory.Item(bytes: message.bytes)
    /// }
    /// ```
    public var forwarding: @Sendable (PipeMessage, MessagePipe) async throws -> Void {
        { message, central in try await self.forward(message, from: central.peer) }
    }

    /// Forwards every message of every central `server` hands out until the server ends (``forward(_:from:)``
    /// for each, one central's messages in order). A refused publish ends it: the error is thrown and the
    /// message that failed is not acknowledged. `onForwarded` sees each message once it is in the broker.
    public func uplink(
        from server: PipeServer, onForwarded: @escaping @Sendable (PipeMessage, MessagePipe) -> Void = { _, _ in }
    ) async throws(MQTTGatewayError) {
        let failure = FirstFailure()
        countRefusedHandshakes(of: server)
        await withDiscardingTaskGroup { group in
            for await central in server.centrals {
                noteCentrals(server.connectedCentrals)
                group.addTask {
                    for await message in central.messages {
                        do throws(MQTTGatewayError) {
                            try await self.forward(message, from: central.peer)
                            onForwarded(message, central)
                        } catch {
                            failure.record(error)
                            await server.close()
                            return
                        }
                    }
                }
            }
        }
        if let error = failure.error { throw error }
    }

    /// Publishes one line to `PREFIX/ID/served` (QoS 1), returning once the broker has it.
    public func publishServed(_ line: String) async throws(MQTTGatewayError) {
        try await client.publish(MQTTClient.Message(topic: servedTopic, payload: Array(line.utf8)))
    }

    /// The counters so far.
    public var metrics: MQTTGatewayMetrics { counters.withLock { $0 } }

    /// Updates the count of connected centrals (for the metrics line).
    public func noteCentrals(_ count: Int) {
        counters.withLock { $0.centralsConnected = count }
        recorded.centrals.record(count)
    }

    /// Counts `server`'s refused end-to-end handshakes in the metrics line (`refused_handshakes`) and in
    /// swift-metrics (`msgpipe_gateway_refused_handshakes`).
    public func countRefusedHandshakes(of server: PipeServer) {
        refusals.withLock { $0 = { server.refusedHandshakes } }
    }

    /// Publishes the metrics line now.
    public func publishMetrics() async throws(MQTTGatewayError) {
        let refused = refusals.withLock { $0 }?() ?? 0
        recorded.refusedHandshakes.record(refused)
        let snapshot = counters.withLock { metrics in
            metrics.heldForBroker = client.heldPublishes
            metrics.refusedHandshakes = refused
            return metrics
        }
        try await client.publish(MQTTClient.Message(topic: metricsTopic, payload: Array(snapshot.jsonLine.utf8)))
    }

    /// True while the broker connection is up.
    public var isConnected: Bool { client.isConnected }

    /// Publishes `offline` (retained) and disconnects. Messages not yet in the broker were not acknowledged.
    public func close() async {
        metricsTask.withLock { $0 }?.cancel()
        if client.isConnected {
            let offline = MQTTClient.Message(topic: statusTopic, payload: Array("offline".utf8), retained: true)
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await self.client.publish(offline) }
                group.addTask { try? await Task.sleep(for: .seconds(2)) }
                await group.next()
                group.cancelAll()
            }
        }
        await client.close()
    }
}

/// The first error of several tasks.
private final class FirstFailure: Sendable {
    private let value = Mutex<MQTTGatewayError?>(nil)

    func record(_ error: MQTTGatewayError) { value.withLock { $0 = $0 ?? error } }
    var error: MQTTGatewayError? { value.withLock { $0 } }
}

/// The gateway's counters in swift-metrics, so a program can route them to its own backend
/// (`MetricsSystem.bootstrap`); each carries the dimension `gateway`.
struct RecordedMetrics: Sendable {
    let messagesUp: Counter
    let bytesUp: Counter
    let messagesDown: Counter
    let bytesDown: Counter
    let retransmissions: Counter
    let held: Gauge
    let centrals: Gauge
    let refusedHandshakes: Gauge

    init(gatewayID: String) {
        let dimensions = [("gateway", gatewayID)]
        messagesUp = Counter(label: "msgpipe_gateway_messages_up", dimensions: dimensions)
        bytesUp = Counter(label: "msgpipe_gateway_bytes_up", dimensions: dimensions)
        messagesDown = Counter(label: "msgpipe_gateway_messages_down", dimensions: dimensions)
        bytesDown = Counter(label: "msgpipe_gateway_bytes_down", dimensions: dimensions)
        retransmissions = Counter(label: "msgpipe_gateway_retransmissions", dimensions: dimensions)
        held = Gauge(label: "msgpipe_gateway_messages_held", dimensions: dimensions)
        centrals = Gauge(label: "msgpipe_gateway_centrals", dimensions: dimensions)
        refusedHandshakes = Gauge(label: "msgpipe_gateway_refused_handshakes", dimensions: dimensions)
    }

    /// Runs `body` every `interval` until the task is cancelled: the metrics line's timer.
    static func repeating(every interval: Duration, _ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                await body()
            }
        }
    }
}

/// What a gateway counted; published as one JSON line on `PREFIX/ID/metrics`.
public struct MQTTGatewayMetrics: Sendable, Equatable {
    public var centralsConnected = 0
    public var messagesUp = 0
    public var bytesUp = 0
    public var messagesDown = 0
    public var bytesDown = 0
    /// Message segments this process sent to its centrals again (Transport's retransmissions): loss on the
    /// links. Data flows to the centrals in the downlink, so that is where it counts.
    public var retransmissions = 0
    /// Messages received and not yet acknowledged by the broker.
    public var messagesHeld = 0
    /// Publishes of any kind waiting for a PUBACK.
    public var heldForBroker = 0
    /// With end-to-end keys: handshakes refused so far (unknown or revoked keys, bad handshakes, backoff).
    public var refusedHandshakes = 0

    /// `{"centrals":1,"messages_up":...}`
    public var jsonLine: String {
        "{\"centrals\":\(centralsConnected),\"messages_up\":\(messagesUp),\"bytes_up\":\(bytesUp),"
            + "\"messages_down\":\(messagesDown),\"bytes_down\":\(bytesDown),\"retransmissions\":\(retransmissions),"
            + "\"held_for_broker\":\(messagesHeld),\"refused_handshakes\":\(refusedHandshakes)}"
    }
}
