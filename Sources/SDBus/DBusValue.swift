/// One D-Bus value of any type, with its signature: basic types, arrays (`ay` as ``bytes(_:)``),
/// dictionaries, variants, structures and UNIX file descriptors.
public indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(DBusFileDescriptor)
    /// `ay`: an array of bytes (always decoded as this case, never as an array of ``byte(_:)``).
    case bytes([UInt8])
    /// `a<elementSignature>`; every element must have that signature.
    case array(elementSignature: String, [DBusValue])
    /// `a{<key><value>}`.
    case dictionary(keySignature: String, valueSignature: String, [DBusDictionaryEntry])
    /// `v`.
    case variant(DBusValue)
    /// `(...)`.
    case structure([DBusValue])

    /// The value's D-Bus type signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case let .array(element, _): "a" + element
        case let .dictionary(key, value, _): "a{" + key + value + "}"
        case .variant: "v"
        case let .structure(fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    // MARK: - Building

    /// `as`.
    public static func strings(_ values: [String]) -> DBusValue { .array(elementSignature: "s", values.map { .string($0) }) }

    /// `ao`.
    public static func objectPaths(_ values: [String]) -> DBusValue {
        .array(elementSignature: "o", values.map { .objectPath($0) })
    }

    /// `a{sv}`, in the given order, each value wrapped in a variant.
    public static func variantDictionary(_ pairs: [(String, DBusValue)]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v",
                    pairs.map { DBusDictionaryEntry(key: .string($0.0), value: .variant($0.1)) })
    }

    // MARK: - Reading

    public var stringValue: String? {
        switch self {
        case let .string(value), let .objectPath(value), let .signature(value): value
        default: nil
        }
    }

    public var boolValue: Bool? { if case let .boolean(value) = self { value } else { nil } }
    public var uint16Value: UInt16? { if case let .uint16(value) = self { value } else { nil } }
    public var int16Value: Int16? { if case let .int16(value) = self { value } else { nil } }
    public var uint32Value: UInt32? { if case let .uint32(value) = self { value } else { nil } }
    public var bytesValue: [UInt8]? { if case let .bytes(value) = self { value } else { nil } }
    public var fileDescriptorValue: DBusFileDescriptor? { if case let .unixFD(value) = self { value } else { nil } }

    /// The value inside a variant (self if this is no variant).
    public var unwrapped: DBusValue { if case let .variant(inner) = self { inner.unwrapped } else { self } }

    /// The elements of an array (bytes of `ay` as ``byte(_:)``).
    public var arrayValues: [DBusValue]? {
        switch self {
        case let .array(_, values): values
        case let .bytes(bytes): bytes.map { .byte($0) }
        default: nil
        }
    }

    /// The strings of an `as` or `ao`.
    public var stringArray: [String]? {
        guard case let .array(_, values) = self else { return nil }
        let strings = values.compactMap(\.stringValue)
        return strings.count == values.count ? strings : nil
    }

    /// The entries of a dictionary.
    public var dictionaryEntries: [DBusDictionaryEntry]? {
        if case let .dictionary(_, _, entries) = self { entries } else { nil }
    }

    /// A dictionary keyed by strings or object paths (e.g. `a{sv}`, `a{oa{sa{sv}}}`), variants unwrapped;
    /// nil for another type. A key that repeats keeps its first value.
    public var stringKeyed: [String: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue else { return nil }
            if result[key] == nil { result[key] = entry.value.unwrapped }
        }
        return result
    }
}

/// One key and value of a ``DBusValue/dictionary(keySignature:valueSignature:_:)``.
public struct DBusDictionaryEntry: Sendable, Equatable {
    public var key: DBusValue
    public var value: DBusValue

    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}
