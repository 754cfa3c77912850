import Crypto

/// One connection's sealing state after the handshake: a ChaCha20-Poly1305 key and counter per direction,
/// and a replay window for what arrives. Each counter is used once; a rejected message changes nothing but
/// ``statistics``.
public struct SecureSession: Sendable {
    /// What ``open(_:)`` found: application data, data that names its origin (sealed by
    /// ``seal(_:origin:)``), or the peer's authenticated alert.
    public enum Opened: Sendable, Equatable {
        case data([UInt8])
        case originated([UInt8], origin: MessageOrigin)
        case alert(SecureAlert)
    }

    /// The highest counter ever sealed; ``seal(_:)`` throws ``SecureError/counterExhausted`` beyond it.
    public static let maximumCounter = UInt64.max - 1

    public let role: SecureRole
    public let limits: SecureLimits
    public private(set) var statistics = SecureStatistics()

    private let sendKey: SymmetricKey
    private let receiveKey: SymmetricKey
    private let sendDirection: UInt32
    private let receiveDirection: UInt32
    /// The counter of the next sealed message.
    var sendCounter: UInt64 = 0
    private var window = ReplayWindow()

    init(role: SecureRole, keys: SessionKeys, limits: SecureLimits) {
        self.role = role
        self.limits = limits
        switch role {
        case .initiator:
            (sendKey, receiveKey) = (keys.initiatorToResponder, keys.responderToInitiator)
            (sendDirection, receiveDirection) = (1, 2)
        case .responder:
            (sendKey, receiveKey) = (keys.responderToInitiator, keys.initiatorToResponder)
            (sendDirection, receiveDirection) = (2, 1)
        }
    }

    /// Seals `plaintext` under the next counter.
    public mutating func seal(_ plaintext: [UInt8]) throws(SecureError) -> [UInt8] {
        guard plaintext.count <= limits.maximumPlaintextSize else {
            throw .messageTooLarge(size: plaintext.count, limit: limits.maximumPlaintextSize)
        }
        return try seal(plaintext, type: .sealed)
    }

    /// Seals `plaintext` with its `origin` (record type 0x12): the peer opens both or neither. The limit
    /// counts the origin's 12 bytes.
    public mutating func seal(_ plaintext: [UInt8], origin: MessageOrigin) throws(SecureError) -> [UInt8] {
        let whole = origin.encoded + plaintext
        guard whole.count <= limits.maximumPlaintextSize else {
            throw .messageTooLarge(size: whole.count, limit: limits.maximumPlaintextSize)
        }
        return try seal(whole, type: .sealedWithOrigin)
    }

    /// Seals an alert telling the peer why its message was refused.
    public mutating func sealAlert(_ alert: SecureAlert) throws(SecureError) -> [UInt8] {
        try seal([alert.rawValue], type: .sealedAlert)
    }

    /// (Internal so that tests can forge a record of any type.)
    mutating func seal(_ plaintext: [UInt8], type: SecureWire.MessageType) throws(SecureError) -> [UInt8] {
        guard sendCounter <= Self.maximumCounter else { throw .counterExhausted }
        let counter = sendCounter
        sendCounter += 1
        var record = SealedRecord.header(type: type, counter: counter)
        do {
            let box = try ChaChaPoly.seal(
                plaintext, using: sendKey,
                nonce: try ChaChaPoly.Nonce(data: SealedRecord.nonce(direction: sendDirection, counter: counter)),
                authenticating: record)
            record.reserveCapacity(SealedRecord.overhead + plaintext.count)
            record += box.ciphertext
            record += box.tag
        } catch {
            throw .malformedRecord("sealing failed: \(error)")  // not reachable with a 12-byte nonce
        }
        statistics.sealed += 1
        return record
    }

    /// Opens a sealed record from the peer; throws (and counts) a replayed, tampered or malformed one.
    public mutating func open(_ bytes: [UInt8]) throws(SecureError) -> Opened {
        do {
            return try openCounted(bytes)
        } catch {
            switch error {
            case .replayed, .outsideReplayWindow: statistics.rejectedReplays += 1
            case .tampered: statistics.rejectedTampered += 1
            default: statistics.rejectedMalformed += 1
            }
            throw error
        }
    }

    private mutating func openCounted(_ bytes: [UInt8]) throws(SecureError) -> Opened {
        let record = try SealedRecord(decoding: bytes[...], maximumPlaintextSize: limits.maximumPlaintextSize)
        try window.check(record.counter)
        let plaintext: [UInt8]
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: ChaChaPoly.Nonce(data: SealedRecord.nonce(direction: receiveDirection, counter: record.counter)),
                ciphertext: record.ciphertext, tag: record.tag)
            plaintext = Array(try ChaChaPoly.open(box, using: receiveKey, authenticating: record.header))
        } catch {
            throw .tampered(counter: record.counter)
        }
        let opened: Opened
        switch record.type {
        case .sealedWithOrigin:
            guard let (origin, body) = MessageOrigin.decode(plaintext) else {
                throw .malformedRecord("a record with an origin must start with a session (not 0) and an id: \(plaintext.count) bytes")
            }
            opened = .originated(body, origin: origin)
        case .sealedAlert:
            guard plaintext.count == 1, let alert = SecureAlert(rawValue: plaintext[0]) else {
                throw .malformedRecord("sealed alert with an unknown reason")
            }
            opened = .alert(alert)
        default:
            opened = .data(plaintext)
        }
        window.accept(record.counter)
        statistics.opened += 1
        return opened
    }
}
