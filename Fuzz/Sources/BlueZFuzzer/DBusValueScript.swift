import BluetoothCore
import BlueZLink
import SDBus
import FuzzSupport

/// A D-Bus type as a ``DBusValueScript`` spells it: every type sd-bus can hand over except UNIX descriptors
/// (`h`), which the fuzzer never creates. `ay` is always ``bytes``, as the message reader decodes it.
indirect enum ScriptType: Equatable, Sendable {
    case basic(Character)
    case bytes
    case array(ScriptType)
    case dictionary(key: Character, value: ScriptType)
    case variant
    case structure([ScriptType])

    /// The basic types, by tag (0-11); also the dictionary key types.
    static let basics: [Character] = Array("ybnqiuxtdsog")

    /// How many container types one tag (16 on) spells: ``shortcut(_:)``.
    static let shortcutCount = 8

    static let tagCount = 16 + shortcutCount

    /// The container type tag 16 + `index` spells: the shapes of bluetoothd's messages. (Built on each call:
    /// a global of this indirect enum would hold its boxes through tagged pointers, which LeakSanitizer and so
    /// libFuzzer's leak check take for leaks.)
    static func shortcut(_ index: Int) -> ScriptType {
        switch index {
        case 0: .bytes
        case 1: .dictionary(key: "s", value: .variant)  // a{sv}: properties, options, ServiceData
        case 2: .array(.basic("s"))  // as: UUIDs, Flags, invalidated properties
        case 3: .array(.basic("o"))  // ao
        case 4: .dictionary(key: "q", value: .variant)  // a{qv}: ManufacturerData
        case 5: .dictionary(key: "y", value: .variant)  // a{yv}: AdvertisingData
        case 6: .dictionary(key: "s", value: .dictionary(key: "s", value: .variant))  // a{sa{sv}}: InterfacesAdded
        default: .dictionary(key: "o", value: shortcut(6))  // a{oa{sa{sv}}}: GetManagedObjects
        }
    }

    var signature: String {
        switch self {
        case let .basic(code): String(code)
        case .bytes: "ay"
        case let .array(element): "a" + element.signature
        case let .dictionary(key, value): "a{" + String(key) + value.signature + "}"
        case .variant: "v"
        case let .structure(fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    /// Container levels below a value of this type (a variant counts one; its content is decoded later).
    var nesting: Int {
        switch self {
        case .basic: 0
        case .bytes, .variant: 1
        case let .array(element): 1 + element.nesting
        case let .dictionary(_, value): 1 + value.nesting
        case let .structure(fields): 1 + (fields.map(\.nesting).max() ?? 0)
        }
    }

    /// The type of `value` (never a `.unixFD`: the fuzzer makes none).
    init(of value: DBusValue) {
        switch value {
        case .bytes: self = .bytes
        case let .array(element, _): self = .array(ScriptType(signature: element) ?? .bytes)
        case let .dictionary(key, value, _):
            self = .dictionary(key: key.first ?? "s", value: ScriptType(signature: value) ?? .variant)
        case .variant: self = .variant
        case let .structure(fields): self = .structure(fields.map(ScriptType.init(of:)))
        case .unixFD: fatalError("the fuzzer never creates UNIX descriptors")
        default: self = .basic(value.signature.first ?? "s")
        }
    }

    /// Parses one complete type; nil for anything else.
    init?(signature: String) {
        var rest = Substring(signature)
        guard let type = Self.parse(&rest), rest.isEmpty else { return nil }
        self = type
    }

    private static func parse(_ rest: inout Substring) -> ScriptType? {
        guard let first = rest.popFirst() else { return nil }
        switch first {
        case "a":
            if rest.first == "{" {
                rest.removeFirst()
                guard let key = rest.popFirst(), basics.contains(key), let value = parse(&rest), rest.popFirst() == "}"
                else { return nil }
                return .dictionary(key: key, value: value)
            }
            guard let element = parse(&rest) else { return nil }
            return element == .basic("y") ? .bytes : .array(element)
        case "v":
            return .variant
        case "(":
            var fields: [ScriptType] = []
            while rest.first != ")" {
                guard let field = parse(&rest) else { return nil }
                fields.append(field)
            }
            rest.removeFirst()
            return fields.isEmpty ? nil : .structure(fields)
        default:
            return basics.contains(first) ? .basic(first) : nil
        }
    }
}

/// Builds the ``DBusValue`` trees sd-bus would hand over from fuzz bytes, deterministically and within bounds:
/// at most ``maximumDepth`` container levels and ``maximumValues`` values per input (a container stops
/// early when they are spent), so the decoder's own work is bounded by the input's length.
///
/// - A type is a tag byte (mod ``ScriptType/tagCount``): 0-11 the basic types `ybnqiuxtdsog`; 12 `a` and
///   the element type (an array of `y` is `ay`); 13 `a{` a key byte (a basic type, mod 12) and the value type;
///   14 `v`; 15 a structure: a byte (1 + n mod 4 fields) and the field types; 16 on ``ScriptType/shortcut(_:)``. A
///   container that would nest too deep decodes as `s`.
/// - A value of a basic type is its little-endian bytes (`b`: the low bit; `d`: a little-endian Int32, so
///   it is never NaN); `ay` a 12-bit length (two bytes) and the bytes; an array or dictionary a count byte and
///   its elements (key then value); a variant its type and value; a structure its fields.
/// - A string (also `o`, `g`) is a byte below 0x80 for one of ``known`` (mod its count), or 0x80 | the high
///   7 bits of its length, the low byte, and that many bytes of UTF-8 (only their ASCII bytes when they are
///   not valid UTF-8, which sd-bus would refuse).
/// - A message's arguments are a count byte (mod 5) and that many types with values.
///
/// Past the end of the input every byte reads as 0. ``DBusValueScriptWriter`` writes the inverse.
struct DBusValueScript {
    static let maximumDepth = 8
    static let maximumValues = 4096

    /// Strings bluetoothd's messages carry: property and interface names, paths, values, UUIDs.
    static let known: [String] = [
        "Address", "AddressType", "Name", "Alias", "RSSI", "UUIDs", "ManufacturerData", "ServiceData", "TxPower",
        "Connected", "ServicesResolved", "Paired", "Trusted", "Blocked", "Adapter", "Appearance", "Icon",
        "AdvertisingFlags", "AdvertisingData", "Powered", "Discovering", "UUID", "Device", "Service", "Flags", "MTU",
        "Value", "Primary", "Notifying", "WriteAcquired", "NotifyAcquired", "device", "mtu", "link", "offset", "type",
        "org.bluez.Device1", "org.bluez.Adapter1", "org.bluez.GattService1", "org.bluez.GattCharacteristic1",
        "org.bluez.GattManager1", "org.bluez.LEAdvertisingManager1", "org.freedesktop.DBus.Properties",
        "org.freedesktop.DBus.Introspectable", "org.bluez",
        "/", "/org/bluez", "/org/bluez/hci0", "/org/bluez/hci1", "/org/bluez/hci0/dev_C0_11_22_33_44_55",
        "/org/bluez/hci0/dev_C0_11_22_33_44_55/service000a", "/org/bluez/hci0/dev_C0_11_22_33_44_55/service000a/char000b",
        "/org/bluez/hci0/dev_C0_11_22_33_44_55/service000a/char000d", "/org/bluez/hci0/dev_7A_2B_3C_4D_5E_6F",
        "/org/bluez/hci1/dev_C0_11_22_33_44_55", "/org/bluez/hci0/dev_00_00_00_00_00_00",
        "public", "random", "C0:11:22:33:44:55", "C0-11-22-33-44-55", "7A:2B:3C:4D:5E:6F", "7A-2B-3C-4D-5E-6F",
        "00:00:00:00:00:00", "msgpipe", "kitchen", "", "LE", "le", "command", "request", "read", "write",
        "write-without-response", "notify", "indicate", "0000180d-0000-1000-8000-00805f9b34fb",
        "0000feaa-0000-1000-8000-00805f9b34fb", "12345678-0000-1000-8000-00805f9b34fb",
        "4d500001-8c5d-4e2b-9f1a-6d7367706970", "4d500002-8c5d-4e2b-9f1a-6d7367706970",
        "4d500003-8c5d-4e2b-9f1a-6d7367706970", "6e400001-b5a3-f393-e0a9-e50e24dcca9e", "180D", "0000180d", ":1.4",
    ]

    private var script: FuzzScript
    private var remaining = maximumValues

    init(_ input: [UInt8]) { script = FuzzScript(input) }

    var isAtEnd: Bool { script.isAtEnd }

    mutating func byte() -> UInt8 { script.byte() }

    /// A message's arguments: up to four values, each its type and its value.
    mutating func arguments() -> [DBusValue] {
        var values: [DBusValue] = []
        for _ in 0..<Int(script.byte() % 5) { values.append(value(of: type(depth: 0), depth: 0)) }
        return values
    }

    mutating func string() -> String {
        let tag = script.byte()
        if tag < 0x80 { return Self.known[Int(tag) % Self.known.count] }
        let length = Int(tag & 0x7F) << 8 | Int(script.byte())
        let utf8 = script.take(length)
        // sd-bus hands over valid UTF-8 only; the ASCII of an invalid literal keeps its length within the field.
        return String(validating: utf8, as: UTF8.self) ?? String(decoding: utf8.filter { $0 < 0x80 }, as: UTF8.self)
    }

    /// A type whose values nest at most to ``maximumDepth`` when they start at `depth`.
    mutating func type(depth: Int) -> ScriptType {
        let tag = Int(script.byte()) % ScriptType.tagCount
        let room = Self.maximumDepth - depth
        if tag < 12 { return .basic(ScriptType.basics[tag]) }
        guard room >= 1 else { return .basic("s") }
        switch tag {
        case 12:
            let element = type(depth: depth + 1)
            return element == .basic("y") ? .bytes : .array(element)
        case 13:
            let key = ScriptType.basics[Int(script.byte()) % ScriptType.basics.count]
            return .dictionary(key: key, value: type(depth: depth + 1))
        case 14:
            return .variant
        case 15:
            var fields: [ScriptType] = []
            for _ in 0...Int(script.byte() % 4) { fields.append(type(depth: depth + 1)) }
            return .structure(fields)
        default:
            let shortcut = ScriptType.shortcut(tag - 16)
            return shortcut.nesting <= room ? shortcut : .basic("s")
        }
    }

    /// A value of `type` at `depth` (the type fits there: ``type(depth:)`` made it).
    mutating func value(of type: ScriptType, depth: Int) -> DBusValue {
        remaining -= 1
        switch type {
        case let .basic(code):
            return basic(code)
        case .bytes:
            return .bytes(Array(script.take(script.uint16() & 0x0FFF)))
        case let .array(element):
            var values: [DBusValue] = []
            for _ in 0..<Int(script.byte()) where remaining > 0 { values.append(value(of: element, depth: depth + 1)) }
            return .array(elementSignature: element.signature, values)
        case let .dictionary(key, valueType):
            var entries: [DBusDictionaryEntry] = []
            for _ in 0..<Int(script.byte()) where remaining > 0 {
                remaining -= 1
                let entryKey = basic(key)
                entries.append(DBusDictionaryEntry(key: entryKey, value: value(of: valueType, depth: depth + 1)))
            }
            return .dictionary(keySignature: String(key), valueSignature: valueType.signature, entries)
        case .variant:
            let inner = self.type(depth: depth + 1)
            return .variant(value(of: inner, depth: depth + 1))
        case let .structure(fields):
            var values: [DBusValue] = []
            for field in fields { values.append(value(of: field, depth: depth + 1)) }
            return .structure(values)
        }
    }

    private mutating func basic(_ code: Character) -> DBusValue {
        switch code {
        case "y": .byte(script.byte())
        case "b": .boolean(script.byte() & 1 == 1)
        case "n": .int16(Int16(truncatingIfNeeded: script.uint16()))
        case "q": .uint16(UInt16(truncatingIfNeeded: script.uint16()))
        case "i": .int32(Int32(bitPattern: uint32()))
        case "u": .uint32(uint32())
        case "x": .int64(Int64(bitPattern: uint64()))
        case "t": .uint64(uint64())
        case "d": .double(Double(Int32(bitPattern: uint32())))
        case "s": .string(string())
        case "o": .objectPath(string())
        default: .signature(string())
        }
    }

    private mutating func uint32() -> UInt32 { UInt32(script.uint16()) | UInt32(script.uint16()) << 16 }

    private mutating func uint64() -> UInt64 { UInt64(uint32()) | UInt64(uint32()) << 32 }
}

/// Writes what ``DBusValueScript`` reads: values (of the shapes it can make) come back equal. For the seeds.
struct DBusValueScriptWriter {
    private(set) var bytes: [UInt8] = []

    mutating func byte(_ byte: UInt8) { bytes.append(byte) }

    /// Up to four arguments; traps unless they read back equal.
    mutating func arguments(_ values: [DBusValue]) {
        require(values.count < 5, "at most four arguments")
        let start = bytes.count
        bytes.append(UInt8(values.count))
        for value in values {
            type(ScriptType(of: value))
            self.value(value)
        }
        var check = DBusValueScript(Array(bytes[start...]))
        require(check.arguments() == values, "\(values) does not read back from its script")
    }

    mutating func string(_ text: String) {
        if let index = DBusValueScript.known.firstIndex(where: { $0.utf8.elementsEqual(text.utf8) }) {
            bytes.append(UInt8(index))
            return
        }
        let utf8 = Array(text.utf8)
        require(utf8.count < 0x8000, "a string of \(utf8.count) bytes")
        bytes += [0x80 | UInt8(utf8.count >> 8), UInt8(utf8.count & 0xFF)] + utf8
    }

    mutating func type(_ type: ScriptType) {
        if let index = (0..<ScriptType.shortcutCount).first(where: { ScriptType.shortcut($0) == type }) {
            bytes.append(UInt8(16 + index))
            return
        }
        switch type {
        case let .basic(code):
            bytes.append(UInt8(ScriptType.basics.firstIndex(of: code) ?? 9))
        case .bytes:
            bytes.append(16)
        case let .array(element):
            bytes.append(12)
            self.type(element)
        case let .dictionary(key, value):
            bytes += [13, UInt8(ScriptType.basics.firstIndex(of: key) ?? 9)]
            self.type(value)
        case .variant:
            bytes.append(14)
        case let .structure(fields):
            require((1...4).contains(fields.count), "a structure of \(fields.count) fields")
            bytes += [15, UInt8(fields.count - 1)]
            for field in fields { self.type(field) }
        }
    }

    mutating func value(_ value: DBusValue) {
        switch value {
        case let .byte(byte): bytes.append(byte)
        case let .boolean(flag): bytes.append(flag ? 1 : 0)
        case let .int16(number): little(UInt64(UInt16(bitPattern: number)), 2)
        case let .uint16(number): little(UInt64(number), 2)
        case let .int32(number): little(UInt64(UInt32(bitPattern: number)), 4)
        case let .uint32(number): little(UInt64(number), 4)
        case let .int64(number): little(UInt64(bitPattern: number), 8)
        case let .uint64(number): little(number, 8)
        case let .double(number):
            guard let whole = Int32(exactly: number) else { fatalError("the script spells doubles as Int32, not \(number)") }
            little(UInt64(UInt32(bitPattern: whole)), 4)
        case let .string(text), let .objectPath(text), let .signature(text): string(text)
        case .unixFD: fatalError("the fuzzer never creates UNIX descriptors")
        case let .bytes(data):
            require(data.count <= 0x0FFF, "an ay of \(data.count) bytes")
            little(UInt64(data.count), 2)
            bytes += data
        case let .array(_, values):
            require(values.count <= 0xFF, "an array of \(values.count) elements")
            bytes.append(UInt8(values.count))
            for element in values { self.value(element) }
        case let .dictionary(_, _, entries):
            require(entries.count <= 0xFF, "a dictionary of \(entries.count) entries")
            bytes.append(UInt8(entries.count))
            for entry in entries {
                self.value(entry.key)
                self.value(entry.value)
            }
        case let .variant(inner):
            type(ScriptType(of: inner))
            self.value(inner)
        case let .structure(fields):
            for field in fields { self.value(field) }
        }
    }

    private mutating func little(_ number: UInt64, _ count: Int) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: number >> (8 * index))) }
    }
}
