/// What a peripheral advertises: its local name (scan response) and one service UUID (advertising data).
public struct Advertisement: Sendable, Equatable {
    public var localName: String
    public var service: AdvertisedServiceUUID?
    /// The Add Advertising instance msgpipe uses (1-254).
    public var instance: UInt8

    public init(localName: String, service: AdvertisedServiceUUID?, instance: UInt8 = 1) {
        self.localName = localName
        self.service = service
        self.instance = instance
    }

    /// The Add Advertising command for `adapterIndex`: connectable + discoverable (the kernel adds the Flags
    /// AD, so advertising data may use 28 of the 31 bytes), the service list, the name in the scan response.
    public func command(adapterIndex: UInt16) throws(BluetoothError) -> ManagementCommand {
        let advertisingData = try service.map { uuid throws(BluetoothError) in
            try AdvertisingData.serviceList(uuid).encoded(limit: 28)
        } ?? []
        let scanResponse = try AdvertisingData.localName(localName).encoded(limit: 31)
        return .addAdvertising(
            adapterIndex, instance: instance, flags: [.connectable, .discoverable],
            advertisingData: advertisingData, scanResponse: scanResponse)
    }
}

/// Starts and stops connectable LE advertising through the management interface.
public enum Advertiser {
    /// How many times a failed start is retried (the seeds' peripheral: ADVERTISING_RETRY = 3).
    public static let retries = 3

    /// Switches off global advertising (it would take precedence), then adds the advertising instance.
    /// A failed start is retried ``retries`` times, each after removing the instance (reset, then start).
    public static func start(
        _ advertisement: Advertisement, on adapter: BluetoothAdapter, using management: ManagementSocket
    ) throws(BluetoothError) {
        try adapter.requireReadyForLowEnergy()
        let command = try advertisement.command(adapterIndex: adapter.index)
        var lastError = BluetoothError.advertisingFailed(attempts: 0, lastError: "not attempted")
        for attempt in 0...retries {
            do throws(BluetoothError) {
                if attempt > 0 {
                    _ = try? management.execute(.removeAdvertising(adapter.index, instance: advertisement.instance))
                }
                if attempt > 0 || adapter.info.currentSettings.contains(.advertising) {
                    try management.execute(.setAdvertising(adapter.index, 0))
                }
                try management.execute(command)
                return
            } catch {
                switch error {
                case .permissionDenied, .noAdapter, .adapterDown, .kernelWithoutBluetooth: throw error
                default: lastError = error
                }
            }
        }
        throw .advertisingFailed(attempts: retries + 1, lastError: lastError.description)
    }

    /// Removes the advertising instance (advertising stops when it was the only one).
    public static func stop(
        _ advertisement: Advertisement, on adapter: BluetoothAdapter, using management: ManagementSocket
    ) throws(BluetoothError) {
        try management.execute(.removeAdvertising(adapter.index, instance: advertisement.instance))
    }
}
