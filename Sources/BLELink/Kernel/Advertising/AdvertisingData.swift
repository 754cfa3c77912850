import GATT
/// Advertising / scan-response / EIR data: a sequence of AD structures `length | type | data`
/// (Core spec Vol 3 Part C §11). Decoding checks every length; encoding refuses more than fits.
public struct AdvertisingData: Equatable, Sendable {
    /// AD type codes this module reads or writes (Core Specification Supplement, Part A).
    public enum ADType: UInt8, Sendable {
        case flags = 0x01
        case incomplete16BitServiceUUIDs = 0x02
        case complete16BitServiceUUIDs = 0x03
        case incomplete32BitServiceUUIDs = 0x04
        case complete32BitServiceUUIDs = 0x05
        case incomplete128BitServiceUUIDs = 0x06
        case complete128BitServiceUUIDs = 0x07
        case shortenedLocalName = 0x08
        case completeLocalName = 0x09
        case txPowerLevel = 0x0A
    }

    /// One AD structure: its type code and data (the length byte is implied).
    public struct Structure: Equatable, Sendable {
        public var type: UInt8
        public var data: [UInt8]
        public init(type: UInt8, data: [UInt8]) {
            self.type = type
            self.data = data
        }
    }

    /// The structures in order.
    public var structures: [Structure]

    public init(structures: [Structure] = []) { self.structures = structures }

    /// Decodes AD structures. A zero length byte ends the significant part (the rest is padding, as the
    /// spec allows); a length running past the end throws ``BluetoothError/malformedAdvertisingData(_:)``.
    public init(decoding bytes: ArraySlice<UInt8>) throws(BluetoothError) {
        var structures: [Structure] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let length = Int(bytes[index])
            if length == 0 { break }
            let offset = index - bytes.startIndex
            guard length <= bytes.endIndex - index - 1 else {
                throw .malformedAdvertisingData(
                    "AD structure at offset \(offset) declares \(length) bytes, only \(bytes.endIndex - index - 1) remain")
            }
            let type = bytes[index + 1]
            structures.append(Structure(type: type, data: Array(bytes[(index + 2)..<(index + 1 + length)])))
            index += 1 + length
        }
        self.structures = structures
    }

    /// The encoded bytes; throws if a structure's data exceeds 254 bytes or the total exceeds `limit`.
    public func encoded(limit: Int = 31) throws(BluetoothError) -> [UInt8] {
        var out: [UInt8] = []
        for structure in structures {
            guard structure.data.count <= 254 else {
                throw .malformedAdvertisingData("AD structure of \(structure.data.count) bytes exceeds 254")
            }
            out.append(UInt8(structure.data.count + 1))
            out.append(structure.type)
            out.append(contentsOf: structure.data)
        }
        guard out.count <= limit else {
            throw .malformedAdvertisingData("\(out.count) bytes of advertising data exceed the limit of \(limit)")
        }
        return out
    }

    /// The complete local name, else the shortened one; invalid UTF-8 is repaired, not rejected.
    public var localName: String? {
        let name = structures.first { $0.type == ADType.completeLocalName.rawValue }
            ?? structures.first { $0.type == ADType.shortenedLocalName.rawValue }
        return name.map { String(decoding: $0.data, as: UTF8.self) }
    }

    /// Every advertised service UUID (16-, 32- and 128-bit lists, complete or not).
    /// Throws when a list's length is not a multiple of its UUID width.
    public func serviceUUIDs() throws(BluetoothError) -> [AdvertisedServiceUUID] {
        var uuids: [AdvertisedServiceUUID] = []
        for structure in structures {
            let width: Int
            switch ADType(rawValue: structure.type) {
            case .incomplete16BitServiceUUIDs, .complete16BitServiceUUIDs: width = 2
            case .incomplete32BitServiceUUIDs, .complete32BitServiceUUIDs: width = 4
            case .incomplete128BitServiceUUIDs, .complete128BitServiceUUIDs: width = 16
            default: continue
            }
            guard structure.data.count % width == 0 else {
                throw .malformedAdvertisingData(
                    "service UUID list (type 0x\(String(structure.type, radix: 16))) of \(structure.data.count) bytes "
                        + "is not a multiple of \(width)")
            }
            for start in stride(from: 0, to: structure.data.count, by: width) {
                if let uuid = AdvertisedServiceUUID(littleEndianBytes: Array(structure.data[start..<start + width])) {
                    uuids.append(uuid)
                }
            }
        }
        return uuids
    }

    /// The advertised flags byte (LE General Discoverable = 0x02, BR/EDR Not Supported = 0x04), if present.
    public var flags: UInt8? {
        structures.first { $0.type == ADType.flags.rawValue }?.data.first
    }

    /// Advertising data carrying one complete service UUID list with `service`.
    public static func serviceList(_ service: AdvertisedServiceUUID) -> AdvertisingData {
        let type: ADType = switch service.littleEndianBytes.count {
        case 2: .complete16BitServiceUUIDs
        case 4: .complete32BitServiceUUIDs
        default: .complete128BitServiceUUIDs
        }
        return AdvertisingData(structures: [Structure(type: type.rawValue, data: service.littleEndianBytes)])
    }

    /// Scan-response data carrying the local name: complete if it fits in `limit`, else shortened (cut at a
    /// UTF-8 character boundary).
    public static func localName(_ name: String, limit: Int = 31) -> AdvertisingData {
        let utf8 = Array(name.utf8)
        let room = max(0, limit - 2)
        if utf8.count <= room {
            return AdvertisingData(structures: [Structure(type: ADType.completeLocalName.rawValue, data: utf8)])
        }
        var cut = room
        while cut > 0, utf8[cut] & 0xC0 == 0x80 { cut -= 1 }
        return AdvertisingData(
            structures: [Structure(type: ADType.shortenedLocalName.rawValue, data: Array(utf8[..<cut]))])
    }
}
