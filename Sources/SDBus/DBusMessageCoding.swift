import CSystemd
import Glibc

/// sd-bus's type characters.
enum DBusType {
    static func code(_ character: Character) -> CChar { CChar(bitPattern: character.asciiValue ?? 0) }
}

/// Decodes the remaining values of an sd-bus message into ``DBusValue``s, checking every count and length
/// against ``DBusLimits``. Bus thread only (the message belongs to the bus).
struct DBusMessageReader {
    let message: OpaquePointer
    let limits: DBusLimits
    private var decoded = 0

    init(message: OpaquePointer, limits: DBusLimits) {
        self.message = message
        self.limits = limits
    }

    /// Every value left at the top level of the message.
    static func arguments(of message: OpaquePointer, limits: DBusLimits) throws(DBusError) -> [DBusValue] {
        var reader = DBusMessageReader(message: message, limits: limits)
        return try reader.readContainerContents(depth: 0)
    }

    private mutating func count(_ what: @autoclosure () -> String) throws(DBusError) {
        decoded += 1
        if decoded > limits.maximumValues { throw .limitExceeded(what: "values in one message (\(what()))", limit: limits.maximumValues) }
    }

    /// Values until the end of the current container.
    private mutating func readContainerContents(depth: Int) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while let value = try readValue(depth: depth) { values.append(value) }
        return values
    }

    /// The next value, or nil at the end of the current container.
    private mutating func readValue(depth: Int) throws(DBusError) -> DBusValue? {
        guard depth <= limits.maximumDepth else { throw .limitExceeded(what: "container nesting", limit: limits.maximumDepth) }
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        let status = sd_bus_message_peek_type(message, &type, &contentsPointer)
        try DBusError.check(status, "reading a D-Bus message")
        if status == 0 { return nil }
        try count(String(UnicodeScalar(UInt8(bitPattern: type))))
        let contents = contentsPointer.map { String(cString: $0) } ?? ""
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try basic(type, UInt8(0)))
        case UInt8(ascii: "b"): return .boolean(try basic(type, Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try basic(type, Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try basic(type, UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try basic(type, Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try basic(type, UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try basic(type, Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try basic(type, UInt64(0)))
        case UInt8(ascii: "d"): return .double(try basic(type, Double(0)))
        case UInt8(ascii: "s"): return .string(try string(type))
        case UInt8(ascii: "o"): return .objectPath(try string(type))
        case UInt8(ascii: "g"): return .signature(try string(type))
        case UInt8(ascii: "h"):
            let borrowed = try basic(type, Int32(-1))
            let owned = fcntl(borrowed, F_DUPFD_CLOEXEC, 3)
            guard owned >= 0 else { throw .system(operation: "duplicating a received file descriptor", errno: errno) }
            return .unixFD(DBusFileDescriptor(adopting: owned))
        case UInt8(ascii: "a"):
            return try array(elementSignature: contents, depth: depth)
        case UInt8(ascii: "v"):
            try enter(type, contents)
            guard let inner = try readValue(depth: depth + 1) else { throw .malformed("an empty variant") }
            try exit()
            return .variant(inner)
        case UInt8(ascii: "r"):
            try enter(type, contents)
            let fields = try readContainerContents(depth: depth + 1)
            try exit()
            return .structure(fields)
        default:
            throw .malformed("unexpected type '\(String(UnicodeScalar(UInt8(bitPattern: type))))'")
        }
    }

    private mutating func array(elementSignature: String, depth: Int) throws(DBusError) -> DBusValue {
        if elementSignature == "y" {
            var pointer: UnsafeRawPointer?
            var size = 0
            try DBusError.check(sd_bus_message_read_array(message, DBusType.code("y"), &pointer, &size), "reading a byte array")
            guard size <= limits.maximumByteArray else { throw .limitExceeded(what: "bytes in an array", limit: limits.maximumByteArray) }
            guard size > 0, let pointer else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: size)))
        }
        try enter(DBusType.code("a"), elementSignature)
        if elementSignature.hasPrefix("{") {
            let inner = String(elementSignature.dropFirst().dropLast())
            guard let keyCharacter = inner.first else { throw .malformed("dictionary signature \(elementSignature)") }
            var entries: [DBusDictionaryEntry] = []
            while true {
                var type: CChar = 0
                var contents: UnsafePointer<CChar>?
                let status = sd_bus_message_peek_type(message, &type, &contents)
                try DBusError.check(status, "reading a dictionary")
                if status == 0 { break }
                try count("dictionary entry")
                try enter(DBusType.code("e"), inner)
                guard let key = try readValue(depth: depth + 2), let value = try readValue(depth: depth + 2) else {
                    throw .malformed("a dictionary entry without key or value")
                }
                try exit()
                entries.append(DBusDictionaryEntry(key: key, value: value))
            }
            try exit()
            return .dictionary(keySignature: String(keyCharacter), valueSignature: String(inner.dropFirst()), entries)
        }
        let elements = try readContainerContents(depth: depth + 1)
        try exit()
        return .array(elementSignature: elementSignature, elements)
    }

    private func basic<T>(_ type: CChar, _ initial: T) throws(DBusError) -> T {
        var value = initial
        let status = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(message, type, $0) }
        try DBusError.check(status, "reading a D-Bus value")
        return value
    }

    private func string(_ type: CChar) throws(DBusError) -> String {
        var pointer: UnsafePointer<CChar>?
        let status = sd_bus_message_read_basic(message, type, &pointer)
        try DBusError.check(status, "reading a D-Bus string")
        guard let pointer else { throw .malformed("a string without bytes") }
        let length = strnlen(pointer, limits.maximumStringLength + 1)
        guard length <= limits.maximumStringLength else {
            throw .limitExceeded(what: "bytes in a string", limit: limits.maximumStringLength)
        }
        return String(cString: pointer)
    }

    private func enter(_ type: CChar, _ contents: String) throws(DBusError) {
        try DBusError.check(sd_bus_message_enter_container(message, type, contents), "entering a D-Bus container")
    }

    private func exit() throws(DBusError) {
        try DBusError.check(sd_bus_message_exit_container(message), "leaving a D-Bus container")
    }
}

/// Appends ``DBusValue``s to an sd-bus message being built. Bus thread only.
enum DBusMessageWriter {
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        for value in values { try append(value, to: message) }
    }

    static func append(_ value: DBusValue, to message: OpaquePointer) throws(DBusError) {
        switch value {
        case let .byte(byte): try basic("y", byte, message)
        case let .boolean(flag): try basic("b", Int32(flag ? 1 : 0), message)
        case let .int16(number): try basic("n", number, message)
        case let .uint16(number): try basic("q", number, message)
        case let .int32(number): try basic("i", number, message)
        case let .uint32(number): try basic("u", number, message)
        case let .int64(number): try basic("x", number, message)
        case let .uint64(number): try basic("t", number, message)
        case let .double(number): try basic("d", number, message)
        case let .string(text): try string("s", text, message)
        case let .objectPath(text): try string("o", text, message)
        case let .signature(text): try string("g", text, message)
        case let .unixFD(descriptor):
            guard let fd = descriptor.rawValue else { throw .malformed("a file descriptor that was already taken") }
            try basic("h", fd, message)  // sd-bus duplicates it
        case let .bytes(bytes):
            let status = bytes.withUnsafeBytes { sd_bus_message_append_array(message, DBusType.code("y"), $0.baseAddress, $0.count) }
            try DBusError.check(status, "appending a byte array")
        case let .array(element, values):
            try open("a", element, message)
            for value in values {
                guard value.signature == element else {
                    throw .malformed("an array of \(element) holding a \(value.signature)")
                }
                try append(value, to: message)
            }
            try close(message)
        case let .dictionary(key, valueSignature, entries):
            try open("a", "{" + key + valueSignature + "}", message)
            for entry in entries {
                guard entry.key.signature == key, entry.value.signature == valueSignature else {
                    throw .malformed("a dictionary of {\(key)\(valueSignature)} holding {\(entry.key.signature)\(entry.value.signature)}")
                }
                try open("e", key + valueSignature, message)
                try append(entry.key, to: message)
                try append(entry.value, to: message)
                try close(message)
            }
            try close(message)
        case let .variant(inner):
            try open("v", inner.signature, message)
            try append(inner, to: message)
            try close(message)
        case let .structure(fields):
            try open("r", fields.map(\.signature).joined(), message)
            try append(fields, to: message)
            try close(message)
        }
    }

    private static func basic<T>(_ type: Character, _ value: T, _ message: OpaquePointer) throws(DBusError) {
        var copy = value
        let status = withUnsafePointer(to: &copy) { sd_bus_message_append_basic(message, DBusType.code(type), $0) }
        try DBusError.check(status, "appending a D-Bus '\(type)'")
    }

    private static func string(_ type: Character, _ text: String, _ message: OpaquePointer) throws(DBusError) {
        let status = text.withCString { sd_bus_message_append_basic(message, DBusType.code(type), $0) }
        try DBusError.check(status, "appending the D-Bus '\(type)' \"\(text.prefix(64))\"")
    }

    private static func open(_ type: Character, _ contents: String, _ message: OpaquePointer) throws(DBusError) {
        try DBusError.check(sd_bus_message_open_container(message, DBusType.code(type), contents),
                            "opening a D-Bus container \(type)\(contents)")
    }

    private static func close(_ message: OpaquePointer) throws(DBusError) {
        try DBusError.check(sd_bus_message_close_container(message), "closing a D-Bus container")
    }
}
