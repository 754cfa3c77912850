public import Backpressure
import Synchronization

/// A GATT client over one ATT bearer: MTU exchange, discovery, reads, writes and subscriptions
/// (Bluetooth Core Vol 3 Part G, 4). One request is outstanding at a time (requests take turns for one
/// credit, in order; one cancelled while waiting throws ``ATTError/cancelled`` and is never sent); each has the
/// ATT transaction timeout, after which the bearer is closed and every later request fails.
///
/// Notifications and indications arrive in order on ``notifications``, backpressured: while nobody reads
/// them the client stops reading the bearer (responses then wait too). Indications are confirmed once queued.
public final class GATTClient: Sendable {
    /// The pushes from the server, in arrival order. Single consumer.
    public let notifications: BoundedAsyncQueue<GATTNotification, Never>
    public let bearer: any ATTConnection
    private let core: Core

    public init(bearer: any ATTConnection, notificationCapacity: Int = 64, transactionTimeout: Duration = .seconds(30),
                clock: ATTClock = .continuous) {
        self.bearer = bearer
        notifications = BoundedAsyncQueue(capacity: notificationCapacity)
        core = Core(bearer: bearer, clock: clock, timeout: transactionTimeout)
        let (bearer, notifications, core) = (bearer, notifications, core)
        core.state.withLock { $0.reader = Task { await Self.read(bearer, notifications, core) } }
    }

    deinit { core.close() }

    /// The ATT_MTU in effect: 23 until ``exchangeMTU(_:)``.
    public var mtu: Int { core.state.withLock { $0.mtu } }

    /// The longest Write Command value at the current MTU: min(ATT_MTU - 3, 512).
    public var maximumWriteCommandLength: Int { ATTOpcode.maximumValueLength(mtu: mtu) }

    /// Why the client stopped working (disconnect, timeout, close), if it did.
    public var failure: ATTError? { core.state.withLock { $0.failure } }

    /// Closes the bearer; pending and later requests fail with ``ATTError/closed``.
    public func close() { core.close() }

    // MARK: - MTU

    /// Exchanges MTUs (do it first); returns the effective ATT_MTU, the smaller of both, at least 23.
    @discardableResult
    public func exchangeMTU(_ clientMTU: Int = ATTOpcode.maximumMTU) async throws(ATTError) -> Int {
        let mine = min(max(clientMTU, ATTOpcode.defaultMTU), ATTOpcode.maximumMTU)
        let response = try await request(ATTExchangeMTURequest(clientMTU: UInt16(mine)), ATTExchangeMTUResponse.self)
        let effective = min(mine, max(Int(response.serverMTU), ATTOpcode.defaultMTU))
        core.state.withLock { $0.mtu = effective }
        return effective
    }

    // MARK: - Discovery

    /// Every primary service (Read By Group Type over all handles).
    public func discoverPrimaryServices() async throws(ATTError) -> [GATTRemoteService] {
        var services: [GATTRemoteService] = []
        var start: UInt16 = 1
        while services.count < Self.discoveryLimit {
            let request = ATTReadByGroupTypeRequest(range: .init(start: start, end: 0xFFFF), type: .primaryService)
            guard let response = try await requestUnlessNotFound(request, ATTReadByGroupTypeResponse.self) else { break }
            for entry in response.entries {
                guard entry.value.count == 2 || entry.value.count == 16 else {
                    throw .malformed(.invalidField(opcode: ATTReadByGroupTypeResponse.opcode, field: "service UUID length",
                                                   value: entry.value.count))
                }
                let uuid = entry.value.count == 2
                    ? BluetoothUUID.bit16(UInt16(entry.value[0]) | UInt16(entry.value[1]) << 8)
                    : BluetoothUUID(littleEndian: entry.value[...])
                services.append(GATTRemoteService(uuid: uuid, handles: entry.handles))
            }
            guard let last = response.entries.last?.handles.end, last < 0xFFFF, last >= start else { break }
            start = last + 1
        }
        return services
    }

    /// The primary service with `uuid` (Find By Type Value); throws ``ATTError/notFound(_:)`` without one.
    public func discoverPrimaryService(_ uuid: BluetoothUUID) async throws(ATTError) -> GATTRemoteService {
        var value: [UInt8] = []
        uuid.encode(into: &value)
        let request = ATTFindByTypeValueRequest(range: .all, type: 0x2800, value: value)
        guard let response = try await requestUnlessNotFound(request, ATTFindByTypeValueResponse.self),
              let handles = response.handles.first, handles.isValid else { throw .notFound(uuid) }
        return GATTRemoteService(uuid: uuid, handles: handles)
    }

    /// The characteristics of `service` (Read By Type 0x2803 over its handles).
    public func discoverCharacteristics(of service: GATTRemoteService) async throws(ATTError) -> [GATTRemoteCharacteristic] {
        var found: [GATTRemoteCharacteristic] = []
        var start = service.handles.start
        while start <= service.handles.end, found.count < Self.discoveryLimit {
            let request = ATTReadByTypeRequest(range: .init(start: start, end: service.handles.end), type: .characteristic)
            guard let response = try await requestUnlessNotFound(request, ATTReadByTypeResponse.self) else { break }
            for entry in response.entries {
                let value = entry.value
                guard value.count == 5 || value.count == 19 else {
                    throw .malformed(.invalidField(opcode: ATTReadByTypeResponse.opcode, field: "declaration length",
                                                   value: value.count))
                }
                let uuid = value.count == 5
                    ? BluetoothUUID.bit16(UInt16(value[3]) | UInt16(value[4]) << 8)
                    : BluetoothUUID(littleEndian: value[3...])
                if let index = found.indices.last { found[index].endHandle = entry.handle &- 1 }
                found.append(GATTRemoteCharacteristic(
                    uuid: uuid, properties: GATTCharacteristicProperties(rawValue: value[0]),
                    declarationHandle: entry.handle, valueHandle: UInt16(value[1]) | UInt16(value[2]) << 8,
                    endHandle: service.handles.end))
            }
            guard let last = response.entries.last?.handle, last >= start, last < 0xFFFF else { break }
            start = last + 1
        }
        return found
    }

    /// The descriptors of `characteristic` (Find Information after its value handle).
    public func discoverDescriptors(of characteristic: GATTRemoteCharacteristic) async throws(ATTError) -> [GATTRemoteDescriptor] {
        var found: [GATTRemoteDescriptor] = []
        guard characteristic.valueHandle < 0xFFFF else { return found }
        var start = characteristic.valueHandle + 1
        while start <= characteristic.endHandle, found.count < Self.discoveryLimit {
            let request = ATTFindInformationRequest(range: .init(start: start, end: characteristic.endHandle))
            guard let response = try await requestUnlessNotFound(request, ATTFindInformationResponse.self) else { break }
            found += response.entries.map { GATTRemoteDescriptor(handle: $0.handle, uuid: $0.type) }
            guard let last = response.entries.last?.handle, last >= start, last < 0xFFFF else { break }
            start = last + 1
        }
        return found
    }

    /// The characteristic `uuid` of `service`, with its descriptors' handles resolved lazily by ``subscribe(to:indications:)``.
    public func characteristic(_ uuid: BluetoothUUID, of service: GATTRemoteService) async throws(ATTError) -> GATTRemoteCharacteristic {
        guard let found = try await discoverCharacteristics(of: service).first(where: { $0.uuid == uuid }) else {
            throw .notFound(uuid)
        }
        return found
    }

    // MARK: - Reads and writes

    /// Reads the whole value at `handle`: a Read, then Read Blobs while the parts come back full (at most 512 bytes).
    public func read(_ handle: UInt16) async throws(ATTError) -> [UInt8] {
        var value = try await request(ATTReadRequest(handle: handle), ATTReadResponse.self).value
        var part = value.count
        while part == mtu - 1, value.count < ATTOpcode.maximumAttributeLength {
            let blob = ATTReadBlobRequest(handle: handle, offset: UInt16(value.count))
            do {
                let next = try await request(blob, ATTReadBlobResponse.self).value
                value += next
                part = next.count
            } catch .errorResponse(_, _, .attributeNotLong) {
                break
            }
        }
        return Array(value.prefix(ATTOpcode.maximumAttributeLength))
    }

    /// Writes `value` to `handle` with a Write Request, or with prepared writes when it is longer than ATT_MTU - 3.
    public func write(_ value: [UInt8], to handle: UInt16) async throws(ATTError) {
        guard value.count <= ATTOpcode.maximumAttributeLength else {
            throw .valueTooLong(length: value.count, limit: ATTOpcode.maximumAttributeLength)
        }
        guard value.count > ATTOpcode.maximumValueLength(mtu: mtu) else {
            _ = try await request(ATTWriteRequest(handle: handle, value: value), ATTWriteResponse.self)
            return
        }
        var offset = 0
        while offset < value.count {
            let part = Array(value[offset..<min(value.count, offset + mtu - 5)])
            let prepare = ATTPrepareWriteRequest(handle: handle, offset: UInt16(offset), value: part)
            let echo = try await request(prepare, ATTPrepareWriteResponse.self)
            guard echo.handle == handle, echo.offset == UInt16(offset), echo.value == part else {
                _ = try? await request(ATTExecuteWriteRequest(flags: ATTExecuteWriteRequest.cancel), ATTExecuteWriteResponse.self)
                throw .protocolViolation("the prepared write at offset \(offset) came back altered")
            }
            offset += part.count
        }
        _ = try await request(ATTExecuteWriteRequest(flags: ATTExecuteWriteRequest.write), ATTExecuteWriteResponse.self)
    }

    /// Sends a Write Command (no response), suspending while the bearer is not ready. `value` must fit
    /// ``maximumWriteCommandLength``.
    public func writeWithoutResponse(_ value: ArraySlice<UInt8>, to handle: UInt16) async throws(ATTError) {
        try core.check()
        let limit = maximumWriteCommandLength
        guard value.count <= limit else { throw .valueTooLong(length: value.count, limit: limit) }
        var pdu: [UInt8] = []
        pdu.reserveCapacity(value.count + 3)
        pdu.append(ATTOpcode.writeCommand)
        pdu.appendLittleEndian(handle)
        pdu.append(contentsOf: value)
        try await bearer.send(pdu[...])
    }

    /// Enables notifications (or indications) of `characteristic` by writing its CCCD.
    public func subscribe(to characteristic: GATTRemoteCharacteristic, indications: Bool = false) async throws(ATTError) {
        try await subscribe(to: characteristic, enabling: indications ? .indications : .notifications)
    }

    /// Writes `subscription` (notifications, indications or both) to the characteristic's CCCD.
    public func subscribe(to characteristic: GATTRemoteCharacteristic, enabling subscription: GATTSubscription) async throws(ATTError) {
        let descriptors = try await discoverDescriptors(of: characteristic)
        guard let cccd = descriptors.first(where: { $0.uuid == .clientCharacteristicConfiguration }) else {
            throw .notFound(.clientCharacteristicConfiguration)
        }
        try await write([UInt8(truncatingIfNeeded: subscription.rawValue), UInt8(truncatingIfNeeded: subscription.rawValue >> 8)], to: cccd.handle)
    }

    // MARK: - Requests

    static let discoveryLimit = 1024

    private func requestUnlessNotFound<Response: ATTPDUCoding>(
        _ pdu: some ATTPDUCoding, _ responseType: Response.Type
    ) async throws(ATTError) -> Response? {
        do {
            return try await request(pdu, responseType)
        } catch .errorResponse(_, _, .attributeNotFound) {
            return nil
        }
    }

    private func request<Response: ATTPDUCoding>(
        _ pdu: some ATTPDUCoding, _ responseType: Response.Type
    ) async throws(ATTError) -> Response {
        let answer = try await core.transact(pdu.bytes)
        let requestOpcode = Swift.type(of: pdu).opcode
        if answer.first == ATTOpcode.errorResponse {
            let error: ATTErrorResponse
            do { error = try ATTErrorResponse(decoding: answer[...]) } catch { throw .malformed(error) }
            throw .errorResponse(request: error.requestOpcode, handle: error.handle, code: error.error)
        }
        guard answer.first == Response.opcode else {
            throw .unexpectedResponse(request: requestOpcode, response: answer.first ?? 0)
        }
        do { return try Response(decoding: answer[...]) } catch { throw .malformed(error) }
    }

    /// Reads the bearer until it ends: responses to the waiting request, pushes to the queue.
    private static func read(_ bearer: any ATTConnection, _ notifications: BoundedAsyncQueue<GATTNotification, Never>, _ core: Core) async {
        while let event = await bearer.receive() {
            guard case let .pdu(pdu) = event else {
                if case let .disconnected(reason) = event { core.fail(.disconnected(reason: reason)) }
                break
            }
            guard let opcode = pdu.first else { continue }
            switch opcode {
            case ATTOpcode.handleValueNotification:
                guard let push = try? ATTHandleValueNotification(decoding: pdu[...]) else { continue }
                try? await notifications.send(GATTNotification(handle: push.handle, value: push.value, isIndication: false))
            case ATTOpcode.handleValueIndication:
                guard let push = try? ATTHandleValueIndication(decoding: pdu[...]) else { continue }
                try? await notifications.send(GATTNotification(handle: push.handle, value: push.value, isIndication: true))
                try? await bearer.send(ATTHandleValueConfirmation().bytes[...])
            case _ where Core.responseOpcodes.contains(opcode):
                core.deliver(pdu)
            case _ where !ATTOpcode.isCommand(opcode):
                // This side hosts no attributes: the peer's requests are not supported.
                let error = ATTErrorResponse(requestOpcode: opcode, handle: 0, error: .requestNotSupported)
                try? await bearer.send(error.bytes[...])
            default:
                continue
            }
        }
        core.fail(.closed)
        notifications.finish()
    }
}

extension GATTClient {
    /// The client's shared state: the outstanding request and the failure that ended the bearer.
    final class Core: Sendable {
        struct State {
            var mtu = ATTOpcode.defaultMTU
            var pending: ResponseWaiter?
            var failure: ATTError?
            var reader: Task<Void, Never>?
        }

        static let responseOpcodes: Set<UInt8> = [0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19]

        let state = Mutex(State())
        let bearer: any ATTConnection
        let clock: ATTClock
        let timeout: Duration
        /// The one outstanding request ATT allows: requests take turns for it, in order.
        let transaction = CreditPool.attTransaction()

        init(bearer: any ATTConnection, clock: ATTClock, timeout: Duration) {
            self.bearer = bearer
            self.clock = clock
            self.timeout = timeout
        }

        func check() throws(ATTError) {
            if let failure = state.withLock({ $0.failure }) { throw failure }
        }

        /// Sends one request and waits for its answer, bounded by the transaction timeout.
        func transact(_ pdu: [UInt8]) async throws(ATTError) -> [UInt8] {
            try await transaction.acquireTransaction()
            defer { transaction.release() }
            let waiter = ResponseWaiter(requestOpcode: pdu[0])
            try state.withLock { state throws(ATTError) in
                if let failure = state.failure { throw failure }
                state.pending = waiter
            }
            let deadline = clock.now() + timeout
            do {
                try await bearer.send(pdu[...])
            } catch {
                state.withLock { $0.pending = nil }
                throw error
            }
            let clock = clock
            let timer = Task {
                do { try await clock.sleepUntil(deadline) } catch { return }
                waiter.complete(.failure(.transactionTimeout(request: waiter.requestOpcode)))
            }
            let result = await waiter.value()
            timer.cancel()
            state.withLock { state in if state.pending === waiter { state.pending = nil } }
            if case .failure(.transactionTimeout) = result {
                fail(.transactionTimeout(request: waiter.requestOpcode))
                bearer.close()
            }
            return try result.get()
        }

        /// A response PDU arrived: it answers the outstanding request, or (unsolicited) is ignored.
        func deliver(_ pdu: [UInt8]) {
            guard let waiter = state.withLock({ $0.pending }) else { return }
            let opcode = pdu[0]
            let answers = opcode == waiter.requestOpcode + 1
                || (opcode == ATTOpcode.errorResponse && pdu.count > 1 && pdu[1] == waiter.requestOpcode)
            waiter.complete(answers ? .success(pdu) : .failure(.unexpectedResponse(request: waiter.requestOpcode, response: opcode)))
        }

        func fail(_ error: ATTError) {
            let waiter = state.withLock { state in
                if state.failure == nil { state.failure = error }
                return state.pending.take()
            }
            waiter?.complete(.failure(error))
        }

        func close() {
            fail(.closed)
            bearer.close()
        }
    }
}
