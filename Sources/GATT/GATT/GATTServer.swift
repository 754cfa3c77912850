/// The GATT server side of one ATT bearer as a sans-I/O state machine: request PDU bytes in, response PDU
/// bytes and application events out (Bluetooth Core Vol 3 Parts F and G).
///
/// It reads no clock and does no I/O. A driver feeds it every PDU from the client with ``receive(_:now:)``,
/// sends the returned response and then calls ``responseSent()``, and fires ``handleTimeout(now:)`` at
/// ``nextTimeout``. Peer input never traps and never grows its state beyond the configured limits.
public struct GATTServer: Sendable {
    public struct Configuration: Sendable {
        /// The server's receive MTU offered in the MTU exchange, 23...517.
        public var maximumMTU: Int
        /// Prepared writes held at most per client; one more gets Prepare Queue Full.
        public var prepareQueueLimit: Int
        /// How long an indication may wait for its confirmation (30 s in the spec).
        public var transactionTimeout: Duration
        /// The link security that reading or writing a characteristic value or descriptor needs (discovery
        /// stays open). Below it requests get Insufficient Authentication, so a phone pairs and tries again,
        /// and Write Commands are dropped (they have no answer). `.open`: no requirement.
        public var requiredSecurity: ATTLinkSecurity

        public init(maximumMTU: Int = ATTOpcode.maximumMTU, prepareQueueLimit: Int = 32,
                    transactionTimeout: Duration = .seconds(30), requiredSecurity: ATTLinkSecurity = .open) {
            self.maximumMTU = min(max(maximumMTU, ATTOpcode.defaultMTU), ATTOpcode.maximumMTU)
            self.prepareQueueLimit = max(prepareQueueLimit, 1)
            self.transactionTimeout = transactionTimeout
            self.requiredSecurity = requiredSecurity
        }
    }

    /// What one received PDU produced: a response to send (then call ``responseSent()``) and an event.
    public struct Reaction: Sendable, Equatable {
        public var response: [UInt8]?
        public var event: GATTServerEvent?
        static let none = Reaction(response: nil, event: nil)
    }

    public private(set) var database: GATTDatabase
    public let configuration: Configuration
    /// The ATT_MTU in effect: 23 until the MTU exchange, then the smaller of both sides' MTUs.
    public private(set) var mtu = ATTOpcode.defaultMTU
    /// The longest notification or indication value at the current MTU: min(ATT_MTU - 3, 512).
    public var maximumPushLength: Int { ATTOpcode.maximumValueLength(mtu: mtu) }
    /// True once the server detected a protocol violation or a transaction timeout: it answers nothing more.
    public private(set) var isFailed = false
    /// The link's security as the driver last reported it (``linkSecured(_:)``); `.open` until then.
    public private(set) var linkSecurity: ATTLinkSecurity = .open
    /// True while the configuration requires more security than the link was reported to have: the driver
    /// should ask the bearer and call ``linkSecured(_:)`` before the next PDU.
    public var awaitsSecurity: Bool { linkSecurity < configuration.requiredSecurity }

    private var mtuExchanged = false
    private var subscriptions: [UInt16: GATTSubscription] = [:]
    private var prepareQueue: [ATTPrepareWriteRequest] = []
    private var responsePending = false
    private var outstandingIndication: (valueHandle: UInt16, deadline: Duration)?

    public init(database: GATTDatabase, configuration: Configuration = Configuration()) {
        self.database = database
        self.configuration = configuration
    }

    /// The earliest time ``handleTimeout(now:)`` must run: the deadline of an unconfirmed indication.
    public var nextTimeout: Duration? { isFailed ? nil : outstandingIndication?.deadline }

    /// What the client subscribed to on the characteristic whose value is at `valueHandle`.
    public func subscription(valueHandle: UInt16) -> GATTSubscription {
        guard case let .characteristicValue(_, cccd?) = database[valueHandle]?.role else { return [] }
        return subscriptions[cccd] ?? []
    }

    /// True while an indication waits for its confirmation.
    public var isIndicationOutstanding: Bool { outstandingIndication != nil }

    /// Handles one PDU from the client.
    public mutating func receive(_ pdu: ArraySlice<UInt8>, now: Duration) -> Reaction {
        guard !isFailed, let opcode = pdu.first else { return .none }
        if opcode == ATTOpcode.handleValueConfirmation { return confirm(pdu) }
        if ATTOpcode.isCommand(opcode) { return command(opcode, pdu) }
        guard Self.requestOpcodes.contains(opcode) || !Self.peerPushOrResponseOpcodes.contains(opcode) else {
            return .none  // a response or push the server never asked for: nothing to answer
        }
        guard !responsePending else {
            isFailed = true
            return Reaction(response: nil, event: .protocolViolation(
                "request 0x\(hex(opcode)) arrived before the response to the previous request was sent"))
        }
        responsePending = true
        var event: GATTServerEvent?
        var response: [UInt8] = []
        do throws(RequestFailure) {
            guard pdu.count <= mtu else { throw RequestFailure(.invalidPDU, handle: 0) }
            try answer(opcode, pdu, into: &response, event: &event)
        } catch {
            response.removeAll(keepingCapacity: true)
            ATTErrorResponse(requestOpcode: opcode, handle: error.handle, error: error.code).encode(into: &response)
        }
        return Reaction(response: response, event: event)
    }

    /// The link's security rose (the kernel reports it for the bearer); it never falls on one link.
    public mutating func linkSecured(_ level: ATTLinkSecurity) { linkSecurity = max(linkSecurity, level) }

    /// The driver handed the last response to the bearer: the client may now send its next request.
    public mutating func responseSent() { responsePending = false }

    /// Encodes a notification of `value` for the characteristic at `valueHandle` into `out` (replacing it).
    ///
    /// Throws unless the client enabled notifications and `value` fits ``maximumPushLength``.
    public func notification(valueHandle: UInt16, value: ArraySlice<UInt8>, into out: inout [UInt8]) throws(ATTError) {
        try checkPush(valueHandle: valueHandle, value: value, kind: .notifications)
        out.removeAll(keepingCapacity: true)
        out.append(ATTOpcode.handleValueNotification)
        out.appendLittleEndian(valueHandle)
        out.append(contentsOf: value)
    }

    /// Encodes an indication of `value` for `valueHandle` and arms the transaction timer.
    ///
    /// Throws ``ATTError/indicationPending`` while the previous indication is unconfirmed.
    public mutating func indication(valueHandle: UInt16, value: ArraySlice<UInt8>, now: Duration,
                                    into out: inout [UInt8]) throws(ATTError) {
        guard !isFailed else { throw .protocolViolation("the bearer failed") }
        guard outstandingIndication == nil else { throw .indicationPending }
        try checkPush(valueHandle: valueHandle, value: value, kind: .indications)
        out.removeAll(keepingCapacity: true)
        out.append(ATTOpcode.handleValueIndication)
        out.appendLittleEndian(valueHandle)
        out.append(contentsOf: value)
        outstandingIndication = (valueHandle, now + configuration.transactionTimeout)
    }

    /// The indication from ``indication(valueHandle:value:now:into:)`` was never sent (the send failed or was
    /// cancelled): frees the slot and disarms its timer.
    public mutating func withdrawIndication() { outstandingIndication = nil }

    /// Fires the indication transaction timer: past its deadline the bearer has failed.
    public mutating func handleTimeout(now: Duration) -> GATTServerEvent? {
        guard !isFailed, let outstanding = outstandingIndication, now >= outstanding.deadline else { return nil }
        isFailed = true
        outstandingIndication = nil
        return .transactionTimedOut(valueHandle: outstanding.valueHandle)
    }

    /// Replaces the value of a readable attribute (e.g. the info characteristic).
    public mutating func setValue(_ value: [UInt8], at handle: UInt16) throws(ATTError) {
        try database.setValue(value, at: handle)
    }

    // MARK: - Dispatch

    private static let requestOpcodes: Set<UInt8> = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18]
    private static let peerPushOrResponseOpcodes: Set<UInt8> = [
        0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x1B, 0x1D,
    ]

    private mutating func confirm(_ pdu: ArraySlice<UInt8>) -> Reaction {
        guard (try? ATTHandleValueConfirmation(decoding: pdu)) != nil, let outstanding = outstandingIndication else {
            return .none
        }
        outstandingIndication = nil
        return Reaction(response: nil, event: .indicationConfirmed(valueHandle: outstanding.valueHandle))
    }

    private mutating func command(_ opcode: UInt8, _ pdu: ArraySlice<UInt8>) -> Reaction {
        guard opcode == ATTOpcode.writeCommand, pdu.count <= mtu,
              let command = try? ATTWriteCommand(decoding: pdu) else { return .none }
        var event: GATTServerEvent?
        guard let attribute = database[command.handle], (try? requireSecurity(for: attribute)) != nil else { return .none }
        try? write(command.handle, command.value, withResponse: false, event: &event)
        return Reaction(response: nil, event: event)
    }

    private mutating func answer(_ opcode: UInt8, _ pdu: ArraySlice<UInt8>, into out: inout [UInt8],
                                 event: inout GATTServerEvent?) throws(RequestFailure) {
        switch opcode {
        case ATTOpcode.exchangeMTURequest:
            let request = try decode(ATTExchangeMTURequest.self, pdu)
            if !mtuExchanged {
                mtuExchanged = true
                mtu = min(max(Int(request.clientMTU), ATTOpcode.defaultMTU), configuration.maximumMTU)
                event = .mtuExchanged(mtu)
            }
            ATTExchangeMTUResponse(serverMTU: UInt16(configuration.maximumMTU)).encode(into: &out)
        case ATTOpcode.findInformationRequest:
            try findInformation(try decode(ATTFindInformationRequest.self, pdu), into: &out)
        case ATTOpcode.findByTypeValueRequest:
            try findByTypeValue(try decode(ATTFindByTypeValueRequest.self, pdu), into: &out)
        case ATTOpcode.readByTypeRequest:
            try readByType(try decode(ATTReadByTypeRequest.self, pdu), into: &out)
        case ATTOpcode.readByGroupTypeRequest:
            try readByGroupType(try decode(ATTReadByGroupTypeRequest.self, pdu), into: &out)
        case ATTOpcode.readRequest:
            let request = try decode(ATTReadRequest.self, pdu)
            let value = try readableValue(request.handle)
            ATTReadResponse(value: Array(value.prefix(mtu - 1))).encode(into: &out)
        case ATTOpcode.readBlobRequest:
            try readBlob(try decode(ATTReadBlobRequest.self, pdu), into: &out)
        case ATTOpcode.readMultipleRequest:
            let request = try decode(ATTReadMultipleRequest.self, pdu)
            var value: [UInt8] = []
            for handle in request.handles { value += try readableValue(handle).prefix(mtu - 1 - value.count) }
            ATTReadMultipleResponse(value: value).encode(into: &out)
        case ATTOpcode.writeRequest:
            let request = try decode(ATTWriteRequest.self, pdu)
            try write(request.handle, request.value, withResponse: true, event: &event)
            ATTWriteResponse().encode(into: &out)
        case ATTOpcode.prepareWriteRequest:
            let request = try decode(ATTPrepareWriteRequest.self, pdu)
            _ = try writableAttribute(request.handle)
            guard prepareQueue.count < configuration.prepareQueueLimit else {
                throw RequestFailure(.prepareQueueFull, handle: request.handle)
            }
            prepareQueue.append(request)
            ATTPrepareWriteResponse(handle: request.handle, offset: request.offset, value: request.value).encode(into: &out)
        case ATTOpcode.executeWriteRequest:
            try executeWrite(try decode(ATTExecuteWriteRequest.self, pdu), event: &event)
            ATTExecuteWriteResponse().encode(into: &out)
        default:
            throw RequestFailure(.requestNotSupported, handle: 0)
        }
    }

    private func decode<PDU: ATTPDUCoding>(_ type: PDU.Type, _ pdu: ArraySlice<UInt8>) throws(RequestFailure) -> PDU {
        do { return try PDU(decoding: pdu) } catch { throw RequestFailure(.invalidPDU, handle: 0) }
    }

    // MARK: - Discovery

    private func checked(_ range: ATTHandleRange) throws(RequestFailure) -> ArraySlice<GATTAttribute> {
        guard range.isValid else { throw RequestFailure(.invalidHandle, handle: range.start) }
        return database.attributes(in: range)
    }

    private func findInformation(_ request: ATTFindInformationRequest, into out: inout [UInt8]) throws(RequestFailure) {
        let attributes = try checked(request.range)
        guard let first = attributes.first else { throw RequestFailure(.attributeNotFound, handle: request.range.start) }
        let entrySize = 2 + first.type.wireLength
        let fit = (mtu - 2) / entrySize
        let entries = attributes.prefix { $0.type.wireLength == first.type.wireLength }.prefix(fit)
            .map { ATTFindInformationResponse.Entry(handle: $0.handle, type: $0.type) }
        ATTFindInformationResponse(entries: entries).encode(into: &out)
    }

    private func findByTypeValue(_ request: ATTFindByTypeValueRequest, into out: inout [UInt8]) throws(RequestFailure) {
        let type = BluetoothUUID.bit16(request.type)
        var found: [ATTHandleRange] = []
        for attribute in try checked(request.range) where attribute.type == type {
            guard found.count < (mtu - 1) / 4 else { break }
            guard attribute.permissions.contains(.read), readValue(attribute)[...] == request.value[...] else { continue }
            if case let .service(end) = attribute.role {
                found.append(ATTHandleRange(start: attribute.handle, end: end))
            } else {
                found.append(ATTHandleRange(start: attribute.handle, end: attribute.handle))
            }
        }
        guard !found.isEmpty else { throw RequestFailure(.attributeNotFound, handle: request.range.start) }
        ATTFindByTypeValueResponse(handles: found).encode(into: &out)
    }

    private func readByType(_ request: ATTReadByTypeRequest, into out: inout [UInt8]) throws(RequestFailure) {
        var entries: [ATTReadByTypeResponse.Entry] = []
        var used = 2
        for attribute in try checked(request.range) where attribute.type == request.type {
            guard attribute.permissions.contains(.read) else {
                if entries.isEmpty { throw RequestFailure(.readNotPermitted, handle: attribute.handle) }
                break
            }
            do throws(RequestFailure) {
                try requireSecurity(for: attribute)
            } catch {
                if entries.isEmpty { throw error }
                break
            }
            let value = Array(readValue(attribute).prefix(min(mtu - 4, 253)))
            if let first = entries.first, first.value.count != value.count { break }
            guard used + 2 + value.count <= mtu else { break }
            used += 2 + value.count
            entries.append(.init(handle: attribute.handle, value: value))
        }
        guard !entries.isEmpty else { throw RequestFailure(.attributeNotFound, handle: request.range.start) }
        ATTReadByTypeResponse(entries: entries).encode(into: &out)
    }

    private func readByGroupType(_ request: ATTReadByGroupTypeRequest, into out: inout [UInt8]) throws(RequestFailure) {
        let attributes = try checked(request.range)
        guard request.type == .primaryService || request.type == .secondaryService else {
            throw RequestFailure(.unsupportedGroupType, handle: request.range.start)
        }
        var entries: [ATTReadByGroupTypeResponse.Entry] = []
        var used = 2
        for attribute in attributes where attribute.type == request.type {
            guard case let .service(end) = attribute.role else { continue }
            let value = Array(attribute.value.prefix(min(mtu - 6, 251)))
            if let first = entries.first, first.value.count != value.count { break }
            guard used + 4 + value.count <= mtu else { break }
            used += 4 + value.count
            entries.append(.init(handles: ATTHandleRange(start: attribute.handle, end: end), value: value))
        }
        guard !entries.isEmpty else { throw RequestFailure(.attributeNotFound, handle: request.range.start) }
        ATTReadByGroupTypeResponse(entries: entries).encode(into: &out)
    }

    // MARK: - Reads

    private func readValue(_ attribute: GATTAttribute) -> [UInt8] {
        guard case .clientConfiguration = attribute.role else { return attribute.value }
        let bits = subscriptions[attribute.handle]?.rawValue ?? 0
        return [UInt8(truncatingIfNeeded: bits), UInt8(truncatingIfNeeded: bits >> 8)]
    }

    private func readableValue(_ handle: UInt16) throws(RequestFailure) -> [UInt8] {
        guard let attribute = database[handle] else { throw RequestFailure(.invalidHandle, handle: handle) }
        guard attribute.permissions.contains(.read) else { throw RequestFailure(.readNotPermitted, handle: handle) }
        try requireSecurity(for: attribute)
        return readValue(attribute)
    }

    private func readBlob(_ request: ATTReadBlobRequest, into out: inout [UInt8]) throws(RequestFailure) {
        let value = try readableValue(request.handle)
        if let attribute = database[request.handle], attribute.isFixedLength, value.count <= mtu - 1 {
            throw RequestFailure(.attributeNotLong, handle: request.handle)
        }
        let offset = Int(request.offset)
        guard offset <= value.count else { throw RequestFailure(.invalidOffset, handle: request.handle) }
        ATTReadBlobResponse(value: Array(value[offset...].prefix(mtu - 1))).encode(into: &out)
    }

    // MARK: - Writes

    private func writableAttribute(_ handle: UInt16) throws(RequestFailure) -> GATTAttribute {
        guard let attribute = database[handle] else { throw RequestFailure(.invalidHandle, handle: handle) }
        guard attribute.permissions.contains(.write) else { throw RequestFailure(.writeNotPermitted, handle: handle) }
        try requireSecurity(for: attribute)
        return attribute
    }

    /// Values and descriptors need the configured security; declarations (discovery) never do. Insufficient
    /// Authentication is what makes iOS and Android pair (and a bonded phone encrypt) and try again.
    private func requireSecurity(for attribute: GATTAttribute) throws(RequestFailure) {
        switch attribute.role {
        case .service, .characteristicDeclaration: return
        case .characteristicValue, .clientConfiguration, .descriptor: break
        }
        guard linkSecurity >= configuration.requiredSecurity else {
            throw RequestFailure(.insufficientAuthentication, handle: attribute.handle)
        }
    }

    private mutating func write(_ handle: UInt16, _ value: [UInt8], withResponse: Bool,
                                event: inout GATTServerEvent?) throws(RequestFailure) {
        let attribute = try writableAttribute(handle)
        guard value.count <= attribute.maximumLength else {
            throw RequestFailure(.invalidAttributeValueLength, handle: handle)
        }
        if case let .clientConfiguration(valueHandle) = attribute.role {
            event = .subscriptionChanged(valueHandle: valueHandle, try configure(attribute, valueHandle, value))
            return
        }
        store(value, in: attribute)
        event = .write(handle: handle, value: value, withResponse: withResponse)
    }

    private mutating func configure(_ cccd: GATTAttribute, _ valueHandle: UInt16,
                                    _ value: [UInt8]) throws(RequestFailure) -> GATTSubscription {
        let requested = try subscription(requestedBy: value, of: cccd, valueHandle: valueHandle)
        subscriptions[cccd.handle] = requested
        return requested
    }

    /// What writing `value` to `cccd` asks for; throws the Error Response for a value it may not take.
    private func subscription(requestedBy value: [UInt8], of cccd: GATTAttribute,
                              valueHandle: UInt16) throws(RequestFailure) -> GATTSubscription {
        guard value.count == 2 else { throw RequestFailure(.invalidAttributeValueLength, handle: cccd.handle) }
        guard case let .characteristicValue(properties, _)? = database[valueHandle]?.role else {
            throw RequestFailure(.unlikelyError, handle: cccd.handle)
        }
        var supported: GATTSubscription = []
        if properties.contains(.notify) { supported.insert(.notifications) }
        if properties.contains(.indicate) { supported.insert(.indications) }
        let requested = GATTSubscription(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8)
        guard supported.isSuperset(of: requested) else { throw RequestFailure(.cccdImproperlyConfigured, handle: cccd.handle) }
        return requested
    }

    private mutating func store(_ value: [UInt8], in attribute: GATTAttribute) {
        if attribute.permissions.contains(.read) { try? database.setValue(value, at: attribute.handle) }
    }

    private mutating func executeWrite(_ request: ATTExecuteWriteRequest, event: inout GATTServerEvent?) throws(RequestFailure) {
        let queue = prepareQueue
        prepareQueue.removeAll()
        switch request.flags {
        case ATTExecuteWriteRequest.cancel: return
        case ATTExecuteWriteRequest.write: break
        default: throw RequestFailure(.invalidPDU, handle: 0)
        }
        var writes: [GATTWrite] = []
        for part in queue {
            let attribute = try writableAttribute(part.handle)
            let index = writes.firstIndex { $0.handle == part.handle }
            let current = index.map { writes[$0].value } ?? readValue(attribute)
            guard Int(part.offset) <= current.count else { throw RequestFailure(.invalidOffset, handle: part.handle) }
            let value = current.prefix(Int(part.offset)) + part.value
            guard value.count <= attribute.maximumLength else {
                throw RequestFailure(.invalidAttributeValueLength, handle: part.handle)
            }
            if let index { writes[index].value = Array(value) } else { writes.append(GATTWrite(handle: part.handle, value: Array(value))) }
        }
        guard !writes.isEmpty else { return }
        // All or nothing: every CCCD value is checked before anything is written.
        var configurations: [(cccd: UInt16, GATTSubscription)] = []
        for write in writes {
            guard let attribute = database[write.handle], case let .clientConfiguration(valueHandle) = attribute.role else { continue }
            configurations.append((write.handle, try subscription(requestedBy: write.value, of: attribute, valueHandle: valueHandle)))
        }
        for (cccd, subscription) in configurations { subscriptions[cccd] = subscription }
        var applied: [GATTWrite] = []
        for write in writes {
            guard let attribute = database[write.handle] else { continue }
            if case .clientConfiguration = attribute.role { continue }
            store(write.value, in: attribute)
            applied.append(write)
        }
        event = .preparedWritesExecuted(applied)
    }

    // MARK: - Pushes

    private func checkPush(valueHandle: UInt16, value: ArraySlice<UInt8>, kind: GATTSubscription) throws(ATTError) {
        guard case let .characteristicValue(_, cccd?) = database[valueHandle]?.role else { throw .invalidHandle(valueHandle) }
        guard subscriptions[cccd]?.contains(kind) == true else { throw .notSubscribed(handle: valueHandle) }
        guard value.count <= maximumPushLength else { throw .valueTooLong(length: value.count, limit: maximumPushLength) }
    }
}

/// An Error Response the server sends: the code and the handle it names.
struct RequestFailure: Error {
    let code: ATTErrorCode
    let handle: UInt16
    init(_ code: ATTErrorCode, handle: UInt16) {
        self.code = code
        self.handle = handle
    }
}
