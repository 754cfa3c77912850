/// Where a gateway's broker is and the topic prefix it uses: `mqtt://[USER[:PASS]@]HOST[:PORT]/PREFIX`
/// (port 1883) or `mqtts://...` (port 8883, TLS verified against the system's CAs in /etc/ssl/certs, or
/// ``MQTTGateway/Options/trustedCAFile``).
///
/// ```swift
/// let url = try MQTTBrokerURL("mqtt://gw:secret@broker.local/fleet")   // topics fleet/<gateway>/...
/// ```
public struct MQTTBrokerURL: Sendable, Equatable, CustomStringConvertible {
    public var usesTLS: Bool
    public var user: String?
    public var password: String?
    public var host: String
    public var port: Int
    /// The topic prefix: one or more levels, no wildcards, no leading or trailing `/`.
    public var prefix: String

    /// Parses `text`; throws ``MQTTGatewayError/badURL(_:reason:)`` naming what is wrong.
    public init(_ text: String) throws(MQTTGatewayError) {
        func bad(_ reason: String) -> MQTTGatewayError { .badURL(text, reason: reason) }
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            usesTLS = false
            rest = text.dropFirst(7)
        } else if text.hasPrefix("mqtts://") {
            usesTLS = true
            rest = text.dropFirst(8)
        } else {
            throw bad("it must start with mqtt:// or mqtts://")
        }
        guard let slash = rest.firstIndex(of: "/") else { throw bad("a topic prefix is missing (mqtt://HOST/PREFIX)") }
        var authority = rest[..<slash]
        let path = rest[rest.index(after: slash)...]
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                user = Self.percentDecoded(credentials[..<colon])
                password = Self.percentDecoded(credentials[credentials.index(after: colon)...])
            } else {
                user = Self.percentDecoded(credentials)
                password = nil
            }
            if user?.isEmpty ?? true { throw bad("the user name is empty") }
        } else {
            user = nil
            password = nil
        }
        var hostPart = authority
        var portValue = usesTLS ? 8883 : 1883
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            hostPart = authority[..<colon]
            guard let number = Int(authority[authority.index(after: colon)...]), (1...65535).contains(number) else {
                throw bad("the port must be a number from 1 to 65535")
            }
            portValue = number
        }
        guard !hostPart.isEmpty else { throw bad("the host is missing") }
        host = String(hostPart)
        port = portValue
        guard !path.isEmpty, !path.hasSuffix("/"), !path.contains("//") else {
            throw bad("the topic prefix must be one or more topic levels, e.g. /fleet")
        }
        guard !path.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" }) else {
            throw bad("the topic prefix must not contain + or #")
        }
        prefix = String(path)
    }

    /// paho's server URI: `tcp://HOST:PORT` or `ssl://HOST:PORT`.
    var serverURI: String { "\(usesTLS ? "ssl" : "tcp")://\(host):\(port)" }

    /// The URL without the password.
    public var description: String {
        let credentials = user.map { "\($0)\(password == nil ? "" : ":***")@" } ?? ""
        return "\(usesTLS ? "mqtts" : "mqtt")://\(credentials)\(host):\(port)/\(prefix)"
    }

    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let value = UInt8(String(decoding: iterator.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                iterator = iterator.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
