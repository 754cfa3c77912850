import Framing

/// A Transport control packet (PROTOCOL.md 3.4): `C0 11`, a type byte, its fields, a 2-byte check.
enum TransportControl: Equatable, Sendable {
    /// Which segments of a message the receiver holds (type 0x01, or 0x0C for a checked message).
    case acknowledgement(Acknowledgement)
    /// The message arrived whole and intact and was accepted (type 0x02).
    case complete(messageID: UInt32)
    /// The message's CRC-32 failed; the receiver dropped its data and waits for a checked restart (type 0x03).
    case checkFailed(messageID: UInt32)
    /// Packets arrived on a channel with no message open: the Start was lost (type 0x04).
    case startMissing(channel: Int)
    /// The sender asks for the state of a message (type 0x05).
    case query(messageID: UInt32)
    /// The receiver holds no state for the message (type 0x06).
    case unknown(messageID: UInt32)
    /// The receiver has no room for the message now (type 0x07).
    case busy(messageID: UInt32)
    /// The receiver has room again after a busy (type 0x08).
    case ready
    /// The sender abandoned the message (type 0x09).
    case cancel(messageID: UInt32)
    /// The receiver dropped the abandoned message (type 0x0A).
    case cancelled(messageID: UInt32)
    /// The receiver refused the message for good (type 0x0B).
    case rejected(messageID: UInt32, reason: RejectionReason)
    /// The sender names its session (a random 64-bit value per sender process) and the lowest message id
    /// it may still send, first on every connection (type 0x0D, PROTOCOL.md 3.9).
    case hello(session: UInt64, firstMessageID: UInt32)
    /// The receiver took the sender's `hello` for `session`; data may follow (type 0x0E).
    case welcome(session: UInt64)

    var type: UInt8 {
        switch self {
        case let .acknowledgement(ack): Self.acknowledgementType(checked: ack.checked)
        case .complete: 0x02
        case .checkFailed: 0x03
        case .startMissing: 0x04
        case .query: 0x05
        case .unknown: 0x06
        case .busy: 0x07
        case .ready: 0x08
        case .cancel: 0x09
        case .cancelled: 0x0A
        case .rejected: 0x0B
        case .hello: 0x0D
        case .welcome: 0x0E
        }
    }

    /// The type byte of an acknowledgement: 0x0C when the receiver holds the message checked, else 0x01.
    static func acknowledgementType(checked: Bool) -> UInt8 { checked ? 0x0C : 0x01 }

    /// Writes the whole packet into `out` (replacing its contents).
    func encode(into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: ControlPacket.prefix)
        out.append(type)
        switch self {
        case let .acknowledgement(ack):
            out.appendULEB128(ack.messageID)
            out.appendULEB128(ack.cumulative)
            out.appendULEB128(ack.bitmapStart - ack.cumulative)
            out.append(contentsOf: ack.bitmap)
        case let .complete(id), let .checkFailed(id), let .query(id), let .unknown(id), let .busy(id),
            let .cancel(id), let .cancelled(id):
            out.appendULEB128(id)
        case let .startMissing(channel):
            out.append(UInt8(channel & 0x3))
        case .ready:
            break
        case let .rejected(id, reason):
            out.appendULEB128(id)
            out.append(reason.rawValue)
        case let .hello(session, firstMessageID):
            out.appendUInt64LittleEndian(session)
            out.appendULEB128(firstMessageID)
        case let .welcome(session):
            out.appendUInt64LittleEndian(session)
        }
        PacketCheck.appendControl(to: &out)
    }

    /// Decodes a control packet (including its `C0 11` prefix); nil when malformed or the check fails.
    init?(decoding packet: ArraySlice<UInt8>) {
        guard packet.count >= 5, packet.prefix(2).elementsEqual(ControlPacket.prefix),
            PacketCheck.verifiesControl(packet)
        else { return nil }
        var reader = ByteReader(packet.dropFirst(2).dropLast(2))
        guard let type = try? reader.readByte("control type") else { return nil }
        switch type {
        case 0x01, 0x0C:
            guard let id = try? reader.readULEB128("message id"), let cumulative = try? reader.readULEB128("cumulative"),
                let gap = try? reader.readULEB128("gap"), UInt64(cumulative) + UInt64(gap) <= UInt64(UInt32.max)
            else { return nil }
            self = .acknowledgement(
                Acknowledgement(
                    messageID: id, checked: type == 0x0C, cumulative: cumulative, bitmapStart: cumulative + gap,
                    bitmap: reader.remaining))
            return
        case 0x04:
            guard let channel = try? reader.readByte("channel"), channel <= 3, reader.isAtEnd else { return nil }
            self = .startMissing(channel: Int(channel))
            return
        case 0x08:
            guard reader.isAtEnd else { return nil }
            self = .ready
            return
        case 0x0D:
            guard let session = reader.readUInt64LittleEndian(), let first = try? reader.readULEB128("message id"),
                reader.isAtEnd
            else { return nil }
            self = .hello(session: session, firstMessageID: first)
            return
        case 0x0E:
            guard let session = reader.readUInt64LittleEndian(), reader.isAtEnd else { return nil }
            self = .welcome(session: session)
            return
        default:
            break
        }
        guard let id = try? reader.readULEB128("message id") else { return nil }
        switch type {
        case 0x02: self = .complete(messageID: id)
        case 0x03: self = .checkFailed(messageID: id)
        case 0x05: self = .query(messageID: id)
        case 0x06: self = .unknown(messageID: id)
        case 0x07: self = .busy(messageID: id)
        case 0x09: self = .cancel(messageID: id)
        case 0x0A: self = .cancelled(messageID: id)
        case 0x0B:
            guard let raw = try? reader.readByte("reason"), let reason = RejectionReason(rawValue: raw) else { return nil }
            self = .rejected(messageID: id, reason: reason)
        default: return nil
        }
        guard reader.isAtEnd else { return nil }
    }
}

/// Why a receiver refused a message for good (the reason byte of a `rejected` control packet).
public enum RejectionReason: UInt8, Sendable, Equatable {
    /// The announced length exceeds the receiver's maximum message size.
    case tooLarge = 1
    /// The deflated body did not inflate within the maximum message size (corrupt or a zip bomb).
    case inflateFailed = 2
    /// The receiving application refused the message: the sender is not authenticated (a peer that asks for
    /// end-to-end keys got a message without them), so it never delivers it.
    case notAuthenticated = 3
}

extension ByteReader {
    /// Eight bytes as a little-endian UInt64; nil when fewer remain.
    mutating func readUInt64LittleEndian() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) {
            guard let byte = try? readByte("session") else { return nil }
            value |= UInt64(byte) << UInt64(shift)
        }
        return value
    }
}

extension [UInt8] {
    /// Appends `value` as eight little-endian bytes.
    mutating func appendUInt64LittleEndian(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
