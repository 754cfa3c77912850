import Glibc

extension MQTTGateway {
    /// The gateway id a gateway takes when none is given: this machine's host name (gethostname(2)), or
    /// "msgpipe" when it cannot be read or is empty. A host name never holds `/`, `+` or `#`, so
    /// ``connect(to:gatewayID:options:)`` accepts it.
    ///
    /// ```swift
    /// let gateway = try await MQTTGateway.connect(to: MQTTBrokerURL("mqtt://broker/fleet"), gatewayID: MQTTGateway.defaultGatewayID)
    /// ```
    public static var defaultGatewayID: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "msgpipe" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "msgpipe" : name
    }
}
