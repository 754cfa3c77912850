/// The server's attribute table: services laid out in handle order from 0x0001 (Bluetooth Core Vol 3 Part G, 3).
public struct GATTDatabase: Sendable {
    /// The attributes; the attribute with handle `h` is at index `h - 1`.
    public private(set) var attributes: [GATTAttribute] = []

    /// Lays out `services`: per service its declaration, then per characteristic its declaration, value,
    /// CCCD (for notify/indicate), User Description and further descriptors.
    public init(services: [GATTService]) {
        for service in services {
            let serviceIndex = attributes.count
            var uuidBytes: [UInt8] = []
            service.uuid.encode(into: &uuidBytes)
            add(service.isPrimary ? .primaryService : .secondaryService, uuidBytes, [.read], .service(end: 0))
            for characteristic in service.characteristics { add(characteristic) }
            let end = UInt16(attributes.count)
            attributes[serviceIndex] = GATTAttribute(
                handle: UInt16(serviceIndex + 1), type: attributes[serviceIndex].type,
                value: uuidBytes, permissions: [.read], role: .service(end: end), maximumLength: 0)
        }
    }

    private mutating func add(_ characteristic: GATTCharacteristic) {
        let valueHandle = UInt16(attributes.count + 2)
        let subscribable = !characteristic.properties.isDisjoint(with: [.notify, .indicate])
        let cccd = subscribable ? valueHandle + 1 : nil
        var declaration = [characteristic.properties.rawValue]
        declaration.appendLittleEndian(valueHandle)
        characteristic.uuid.encode(into: &declaration)
        add(.characteristic, declaration, [.read], .characteristicDeclaration)
        add(characteristic.uuid, characteristic.value, characteristic.permissions,
            .characteristicValue(properties: characteristic.properties, cccd: cccd),
            maximumLength: characteristic.maximumLength)
        if subscribable {
            add(.clientCharacteristicConfiguration, [0, 0], [.read, .write], .clientConfiguration(valueHandle: valueHandle),
                maximumLength: 2)
        }
        if let text = characteristic.userDescription {
            add(.characteristicUserDescription, Array(text.utf8.prefix(ATTOpcode.maximumAttributeLength)), [.read], .descriptor)
        }
        for descriptor in characteristic.descriptors {
            add(descriptor.uuid, descriptor.value, descriptor.permissions, .descriptor)
        }
    }

    private mutating func add(
        _ type: BluetoothUUID, _ value: [UInt8], _ permissions: GATTPermissions, _ role: GATTAttribute.Role,
        maximumLength: Int = ATTOpcode.maximumAttributeLength
    ) {
        attributes.append(GATTAttribute(
            handle: UInt16(attributes.count + 1), type: type, value: value, permissions: permissions, role: role,
            maximumLength: maximumLength))
    }

    /// The attribute at `handle`, or nil for 0 and handles past the end.
    public subscript(handle: UInt16) -> GATTAttribute? {
        handle >= 1 && Int(handle) <= attributes.count ? attributes[Int(handle) - 1] : nil
    }

    /// Replaces the stored value at `handle` (the application updating a readable characteristic).
    public mutating func setValue(_ value: [UInt8], at handle: UInt16) throws(ATTError) {
        guard handle >= 1, Int(handle) <= attributes.count else { throw .invalidHandle(handle) }
        guard value.count <= ATTOpcode.maximumAttributeLength else {
            throw .valueTooLong(length: value.count, limit: ATTOpcode.maximumAttributeLength)
        }
        attributes[Int(handle) - 1].value = value
    }

    /// The value handle of the first characteristic with `uuid`.
    public func valueHandle(of uuid: BluetoothUUID) -> UInt16? {
        attributes.first { attribute in
            if case .characteristicValue = attribute.role { attribute.type == uuid } else { false }
        }?.handle
    }

    /// The attributes with handles in `range` (clamped to the table).
    func attributes(in range: ATTHandleRange) -> ArraySlice<GATTAttribute> {
        let lower = Int(range.start) - 1
        let upper = min(Int(range.end), attributes.count)
        return lower < upper ? attributes[lower..<upper] : []
    }
}
