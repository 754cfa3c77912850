import CMQTTShim
// Links paho-mqtt3as (its module map's `link`), which CMQTTShim's C calls.
import CPahoMQTT
import Glibc
import Synchronization

/// An MQTT 5 connection through paho's MQTTAsync that survives the broker going away: ``publish(_:)``
/// returns only once the broker acknowledged the message (PUBACK with a success reason code, QoS 1), and a
/// publish cut by a lost connection is sent again after the reconnect (same payload and properties).
/// Reconnects run with a backoff of 0.2 s to 5 s until ``close()``.
final class MQTTClient: Sendable {
    struct Message: Sendable {
        var topic: String
        var payload: [UInt8]
        var properties: [(String, String)] = []
        var contentType: String?
        var retained = false
    }

    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct Pending {
        var message: Message
        var tag: Int64?
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var handle: Handle?
        var connected = false
        var closed = false
        var reconnecting = false
        var connectWaiter: CheckedContinuation<Void, any Error>?
        var pending: [Int: Pending] = [:]
        var nextKey = 0
        var nextTag: Int64 = 1
        var subscribeWaiter: CheckedContinuation<Void, any Error>?
        /// Topics subscribed so far: subscribed again when a reconnect finds the session gone.
        var subscriptions: [String] = []
        /// Subscribing again is due (the session was lost and the renewal has not been granted yet).
        var resubscribe = false
    }

    let url: MQTTBrokerURL
    let clientID: String
    private let will: Message?
    private let persistentSession: Bool
    private let trustedCAFile: String?
    private let state = Mutex(State())
    /// Called after every successful connect (the first and each reconnect), before held publishes resume.
    private let onConnected: @Sendable () -> Void
    /// Called when the connection is lost (with paho's cause).
    private let onLost: @Sendable (String) -> Void
    /// A message on a subscription: return true once it is stored (its PUBACK goes out after that).
    private let onMessage: @Sendable (String, [UInt8], String?, String?) -> Bool

    init(
        url: MQTTBrokerURL, clientID: String, will: Message?, persistentSession: Bool = false,
        trustedCAFile: String? = nil, onConnected: @escaping @Sendable () -> Void = {}, onLost: @escaping @Sendable (String) -> Void = { _ in },
        onMessage: @escaping @Sendable (String, [UInt8], String?, String?) -> Bool = { _, _, _, _ in true }
    ) {
        self.url = url
        self.clientID = clientID
        self.will = will
        self.persistentSession = persistentSession
        self.trustedCAFile = trustedCAFile
        self.onConnected = onConnected
        self.onLost = onLost
        self.onMessage = onMessage
    }

    /// Connects within `timeout`; throws ``MQTTGatewayError/connectionRefused(broker:reasonCode:reason:)``,
    /// ``MQTTGatewayError/untrustedBroker(broker:detail:)`` or ``MQTTGatewayError/unreachable(broker:detail:)``.
    func connect(timeout: Duration) async throws(MQTTGatewayError) {
        var error = [CChar](repeating: 0, count: 256)
        // paho's threads call back into this object until close() destroys the handle: they hold a reference.
        let context = Unmanaged.passRetained(self).toOpaque()
        guard
            let pointer = mp_mqtt_create(
                url.serverURI, clientID, context, mqttEvent, mqttMessage, &error, error.count)
        else {
            Unmanaged<MQTTClient>.fromOpaque(context).release()
            throw .client(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        state.withLock { $0.handle = Handle(pointer: pointer) }
        let seconds = Int32(max(1, timeout.components.seconds))
        do {
            try await firstConnect(pointer, timeoutSeconds: seconds)
        } catch {
            await close(grace: .zero)
            throw error
        }
    }

    private func firstConnect(_ pointer: OpaquePointer, timeoutSeconds seconds: Int32) async throws(MQTTGatewayError) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { $0.connectWaiter = continuation }
                let rc = startConnect(pointer, timeoutSeconds: seconds)
                if rc != 0 {
                    let waiter = state.withLock { state in
                        defer { state.connectWaiter = nil }
                        return state.connectWaiter
                    }
                    waiter?.resume(throwing: MQTTGatewayError.unreachable(broker: url.description, detail: "paho code \(rc)"))
                }
            }
        } catch let error as MQTTGatewayError {
            throw error
        } catch {
            throw .client("\(error)")
        }
    }

    private func startConnect(_ pointer: OpaquePointer, timeoutSeconds: Int32) -> Int32 {
        mp_mqtt_connect(
            pointer, url.user, url.password, will?.topic, will.map { String(decoding: $0.payload, as: UTF8.self) },
            persistentSession ? 0 : 1, persistentSession ? 7 * 24 * 3600 : 0, timeoutSeconds, url.usesTLS ? 1 : 0,
            trustedCAFile)
    }

    /// Publishes at QoS 1 and returns once the broker acknowledged it; while the broker is away it waits
    /// (sending again after each reconnect). Throws ``MQTTGatewayError/publishRefused(topic:reasonCode:reason:)``
    /// when the broker answers with a failure reason code, ``MQTTGatewayError/closed`` after ``close()``.
    func publish(_ message: Message) async throws(MQTTGatewayError) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let send = state.withLock { state -> (Handle, Int64)? in
                    if state.closed {
                        continuation.resume(throwing: MQTTGatewayError.closed)
                        return nil
                    }
                    let key = state.nextKey
                    state.nextKey += 1
                    var pending = Pending(message: message, tag: nil, continuation: continuation)
                    guard state.connected, let handle = state.handle else {
                        state.pending[key] = pending
                        return nil
                    }
                    let tag = state.nextTag
                    state.nextTag += 1
                    pending.tag = tag
                    state.pending[key] = pending
                    return (handle, tag)
                }
                if let send { transmit(message, handle: send.0, tag: send.1) }
            }
        } catch let error as MQTTGatewayError {
            throw error
        } catch {
            throw .client("\(error)")
        }
    }

    /// Subscribes at QoS 1; messages arrive through `onMessage`. The subscription is renewed after any
    /// reconnect whose CONNACK says the broker did not keep the session (it restarted without its store).
    func subscribe(_ topic: String) async throws(MQTTGatewayError) {
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let handle = state.withLock { state -> Handle? in
                    state.subscribeWaiter = continuation
                    if !state.subscriptions.contains(topic) { state.subscriptions.append(topic) }
                    return state.handle
                }
                guard let handle, mp_mqtt_subscribe(handle.pointer, topic) == 0 else {
                    state.withLock { $0.subscribeWaiter = nil }
                    continuation.resume(throwing: MQTTGatewayError.subscribeRefused(topic: topic, reasonCode: 0x80, reason: "not connected"))
                    return
                }
            }
        } catch let error as MQTTGatewayError {
            throw error
        } catch {
            throw .client("\(error)")
        }
    }

    /// Publishes waiting for the PUBACK.
    var isConnected: Bool { state.withLock { $0.connected } }

    /// Publishes held for the broker (sent and not acknowledged, or waiting for the connection).
    var heldPublishes: Int { state.withLock { $0.pending.count } }

    /// Disconnects (after up to `grace` for in-flight work) and fails what is still held with
    /// ``MQTTGatewayError/closed``.
    func close(grace: Duration = .milliseconds(500)) async {
        let (handle, pending) = state.withLock { state -> (Handle?, [Pending]) in
            state.closed = true
            defer {
                state.handle = nil
                state.pending = [:]
            }
            return (state.handle, Array(state.pending.values))
        }
        if let handle {
            let milliseconds = Int32(grace.components.seconds * 1000 + grace.components.attoseconds / 1_000_000_000_000_000)
            await Task.detached { mp_mqtt_destroy(handle.pointer, milliseconds) }.value
            Unmanaged.passUnretained(self).release()  // paho's reference, taken in connect
        }
        for item in pending { item.continuation.resume(throwing: MQTTGatewayError.closed) }
    }

    private func transmit(_ message: Message, handle: Handle, tag: Int64) {
        let keys = message.properties.map { strdup($0.0) }
        let values = message.properties.map { strdup($0.1) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keyPointers = keys.map { UnsafePointer($0) }
        let valuePointers = values.map { UnsafePointer($0) }
        let rc = message.payload.withUnsafeBytes { payload in
            keyPointers.withUnsafeBufferPointer { keyBuffer in
                valuePointers.withUnsafeBufferPointer { valueBuffer in
                    mp_mqtt_publish(
                        handle.pointer, message.topic, payload.baseAddress, Int32(payload.count), 1,
                        message.retained ? 1 : 0, keyBuffer.baseAddress, valueBuffer.baseAddress, Int32(keys.count),
                        message.contentType, tag)
                }
            }
        }
        // Not sent (e.g. the connection just went): held until the next connect sends it again.
        if rc != 0 { state.withLock { state in unassign(tag, in: &state) } }
    }

    private func unassign(_ tag: Int64, in state: inout State) {
        for (key, pending) in state.pending where pending.tag == tag { state.pending[key]?.tag = nil }
    }

    // MARK: Events from paho's threads

    fileprivate func handle(kind: Int32, tag: Int64, code: Int32, text: String?) {
        switch kind {
        case Int32(MP_MQTT_CONNECTED.rawValue):
            let (waiter, resend, handle, topics) = state.withLock {
                state -> (CheckedContinuation<Void, any Error>?, [(Message, Int64)], Handle?, [String]) in
                state.connected = true
                state.reconnecting = false
                let waiter = state.connectWaiter
                state.connectWaiter = nil
                var resend: [(Message, Int64)] = []
                for key in state.pending.keys.sorted() where state.pending[key]?.tag == nil {
                    let tag = state.nextTag
                    state.nextTag += 1
                    state.pending[key]?.tag = tag
                    resend.append((state.pending[key]!.message, tag))
                }
                if code == 0, !state.subscriptions.isEmpty { state.resubscribe = true }
                return (waiter, resend, state.handle, state.resubscribe ? state.subscriptions : [])
            }
            onConnected()
            if let handle {
                // A renewal that fails is tried again at the next connect.
                for topic in topics { _ = mp_mqtt_subscribe(handle.pointer, topic) }
                for (message, tag) in resend { transmit(message, handle: handle, tag: tag) }
            }
            waiter?.resume()
        case Int32(MP_MQTT_CONNECT_FAILED.rawValue):
            let waiter = state.withLock { state in
                state.connected = false
                // A reconnect attempt ended: the next one may start (scheduleReconnect keeps one at a time).
                if state.connectWaiter == nil { state.reconnecting = false }
                defer { state.connectWaiter = nil }
                return state.connectWaiter
            }
            if let waiter {
                let reason = text ?? "connect failed"
                let error: MQTTGatewayError =
                    if code >= 0x80 {
                        .connectionRefused(broker: url.description, reasonCode: Int(code), reason: reason)
                    } else if code == MP_MQTT_TLS_FAILURE {
                        .untrustedBroker(broker: url.description, detail: reason)
                    } else {
                        .unreachable(broker: url.description, detail: reason)
                    }
                waiter.resume(throwing: error)
            } else {
                scheduleReconnect()
            }
        case Int32(MP_MQTT_CONNECTION_LOST.rawValue):
            state.withLock { state in
                state.connected = false
                for key in state.pending.keys { state.pending[key]?.tag = nil }
            }
            onLost(text ?? "connection lost")
            scheduleReconnect()
        case Int32(MP_MQTT_PUBLISHED.rawValue), Int32(MP_MQTT_PUBLISH_FAILED.rawValue):
            let refused = code >= 0x80
            let failedInTransit = kind == Int32(MP_MQTT_PUBLISH_FAILED.rawValue) && !refused
            let done = state.withLock { state -> (CheckedContinuation<Void, any Error>, String)? in
                guard let key = state.pending.first(where: { $0.value.tag == tag })?.key else { return nil }
                if failedInTransit {
                    state.pending[key]?.tag = nil  // sent again after the next connect
                    return nil
                }
                let pending = state.pending.removeValue(forKey: key)!
                return (pending.continuation, pending.message.topic)
            }
            guard let done else {
                if failedInTransit { resendIfConnected() }
                return
            }
            if refused {
                done.0.resume(
                    throwing: MQTTGatewayError.publishRefused(topic: done.1, reasonCode: Int(code), reason: text ?? "refused"))
            } else {
                done.0.resume()
            }
        case Int32(MP_MQTT_SUBSCRIBED.rawValue), Int32(MP_MQTT_SUBSCRIBE_FAILED.rawValue):
            let failed = code >= 0x80 || kind == Int32(MP_MQTT_SUBSCRIBE_FAILED.rawValue)
            let waiter = state.withLock { state in
                if state.subscribeWaiter == nil { state.resubscribe = failed }
                defer { state.subscribeWaiter = nil }
                return state.subscribeWaiter
            }
            if failed {
                waiter?.resume(
                    throwing: MQTTGatewayError.subscribeRefused(topic: "", reasonCode: Int(max(code, 0x80)), reason: text ?? "refused"))
            } else {
                waiter?.resume()
            }
        default:
            break
        }
    }

    /// A publish failed in transit on a live connection: send what is unassigned again now.
    private func resendIfConnected() {
        let (resend, handle) = state.withLock { state -> ([(Message, Int64)], Handle?) in
            guard state.connected, !state.closed else { return ([], nil) }
            var resend: [(Message, Int64)] = []
            for key in state.pending.keys.sorted() where state.pending[key]?.tag == nil {
                let tag = state.nextTag
                state.nextTag += 1
                state.pending[key]?.tag = tag
                resend.append((state.pending[key]!.message, tag))
            }
            return (resend, state.handle)
        }
        if let handle { for (message, tag) in resend { transmit(message, handle: handle, tag: tag) } }
    }

    private func scheduleReconnect() {
        let start = state.withLock { state -> Bool in
            guard !state.closed, !state.reconnecting else { return false }
            state.reconnecting = true
            return true
        }
        guard start else { return }
        Task.detached { [self] in
            var pause = Duration.milliseconds(200)
            while true {
                try? await Task.sleep(for: pause)
                let handle = state.withLock { state -> Handle? in
                    guard !state.closed, !state.connected else {
                        state.reconnecting = false
                        return nil
                    }
                    return state.handle
                }
                guard let handle else { return }
                if startConnect(handle.pointer, timeoutSeconds: 5) == 0 {
                    // The attempt is in flight until its outcome arrives as an event (it may come before this
                    // line on paho's thread): CONNECTED or CONNECT_FAILED ends it, and a failure schedules the next.
                    return
                }
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    fileprivate func deliver(topic: String, payload: [UInt8], id: String?, peer: String?) -> Bool {
        onMessage(topic, payload, id, peer)
    }
}

private func mqttEvent(
    context: UnsafeMutableRawPointer?, kind: Int32, tag: Int64, code: Int32, text: UnsafePointer<CChar>?
) {
    guard let context else { return }
    let client = Unmanaged<MQTTClient>.fromOpaque(context).takeUnretainedValue()
    client.handle(kind: kind, tag: tag, code: code, text: text.map { String(cString: $0) })
}

private func mqttMessage(
    context: UnsafeMutableRawPointer?, topic: UnsafePointer<CChar>?, payload: UnsafeRawPointer?, length: Int32,
    id: UnsafePointer<CChar>?, peer: UnsafePointer<CChar>?
) -> Int32 {
    guard let context, let topic else { return 1 }
    let client = Unmanaged<MQTTClient>.fromOpaque(context).takeUnretainedValue()
    let bytes = payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
    return client.deliver(
        topic: String(cString: topic), payload: bytes, id: id.map { String(cString: $0) },
        peer: peer.map { String(cString: $0) }) ? 1 : 0
}
