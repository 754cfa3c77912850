import Glibc

extension MQTTGateway.Options {
    /// Checks ``trustedCAFile`` against `url` before anything connects: it goes with an `mqtts://` URL and must
    /// be readable. Throws ``MQTTGatewayError/badTrustedCAFile(_:reason:)``; no file: nothing to check.
    ///
    /// ```swift
    /// try MQTTGateway.Options(trustedCAFile: "ca.pem").checkTrustedCAFile(for: MQTTBrokerURL("mqtts://broker/fleet"))
    /// ```
    public func checkTrustedCAFile(for url: MQTTBrokerURL) throws(MQTTGatewayError) {
        guard let file = trustedCAFile else { return }
        guard url.usesTLS else { throw .badTrustedCAFile(file, reason: "it goes with an mqtts:// broker URL") }
        guard access(file, R_OK) == 0 else { throw .badTrustedCAFile(file, reason: "cannot be read") }
    }

    /// ``checkTrustedCAFile(for:)`` for a broker URL given as text, or none: a CA file without a broker fails as
    /// one with an `mqtt://` broker does; a URL that does not parse throws its ``MQTTGatewayError/badURL(_:reason:)``.
    /// No file: nothing to check, not even the URL.
    ///
    /// ```swift
    /// try MQTTGateway.Options(trustedCAFile: "ca.pem").checkTrustedCAFile(forBroker: settings.brokerURL)
    /// ```
    public func checkTrustedCAFile(forBroker text: String?) throws(MQTTGatewayError) {
        guard let file = trustedCAFile else { return }
        guard let text else { throw .badTrustedCAFile(file, reason: "it goes with an mqtts:// broker URL") }
        try checkTrustedCAFile(for: MQTTBrokerURL(text))
    }
}

extension MQTTGateway {
    /// Connects a gateway from its settings as text: parses `broker`, checks the CA file, takes
    /// ``defaultGatewayID`` when `gatewayID` is nil, then ``connect(to:gatewayID:options:)``. Every failure is an
    /// ``MQTTGatewayError`` (its ``MQTTGatewayError/category`` says what to fix).
    ///
    /// ```swift
    /// let gateway = try await MQTTGateway.connect(broker: "mqtts://broker/fleet", options: .init(trustedCAFile: "ca.pem"))
    /// ```
    public static func connect(
        broker: String, gatewayID: String? = nil, options: Options = Options()
    ) async throws(MQTTGatewayError) -> MQTTGateway {
        let url = try MQTTBrokerURL(broker)
        try options.checkTrustedCAFile(for: url)
        return try await connect(to: url, gatewayID: gatewayID ?? defaultGatewayID, options: options)
    }
}

extension MQTTDownlink {
    /// ``MQTTGateway/connect(broker:gatewayID:options:)`` for the downlink: parses `broker`, checks the CA file,
    /// takes the default gateway id when `gatewayID` is nil, then ``connect(to:gatewayID:journal:options:)``.
    ///
    /// ```swift
    /// let downlink = try await MQTTDownlink.connect(broker: "mqtt://broker/fleet", journal: "/var/lib/gw/down")
    /// ```
    public static func connect(
        broker: String, gatewayID: String? = nil, journal directory: String,
        options: MQTTGateway.Options = MQTTGateway.Options()
    ) async throws(MQTTGatewayError) -> MQTTDownlink {
        let url = try MQTTBrokerURL(broker)
        try options.checkTrustedCAFile(for: url)
        return try await connect(
            to: url, gatewayID: gatewayID ?? MQTTGateway.defaultGatewayID, journal: directory, options: options)
    }
}
