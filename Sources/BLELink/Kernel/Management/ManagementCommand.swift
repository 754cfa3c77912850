import GATT
/// One command to the kernel's Bluetooth management interface: `opcode | controller index | length | params`,
/// all little-endian (BlueZ doc/mgmt-api.txt).
public struct ManagementCommand: Equatable, Sendable, CustomStringConvertible {
    public var opcode: UInt16
    /// The controller (hciN's N), or ``ManagementCommand/noController`` for global commands.
    public var controllerIndex: UInt16
    public var parameters: [UInt8]
    /// A readable name for errors and logs.
    public var name: String

    /// The index value of commands that concern no controller.
    public static let noController: UInt16 = 0xFFFF

    public init(opcode: UInt16, controllerIndex: UInt16, parameters: [UInt8] = [], name: String) {
        self.opcode = opcode
        self.controllerIndex = controllerIndex
        self.parameters = parameters
        self.name = name
    }

    /// The packet bytes.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(6 + parameters.count)
        out.appendManagementField(opcode)
        out.appendManagementField(controllerIndex)
        out.appendManagementField(UInt16(truncatingIfNeeded: parameters.count))
        out.append(contentsOf: parameters)
        return out
    }

    public var description: String {
        controllerIndex == Self.noController ? name : "\(name) on hci\(controllerIndex)"
    }

    // MARK: Commands msgpipe uses

    /// Read Controller Index List (0x0003).
    public static let readControllerIndexList = ManagementCommand(
        opcode: 0x0003, controllerIndex: noController, name: "Read Controller Index List")

    /// Read Controller Information (0x0004).
    public static func readControllerInfo(_ index: UInt16) -> ManagementCommand {
        ManagementCommand(opcode: 0x0004, controllerIndex: index, name: "Read Controller Information")
    }

    /// Set Powered (0x0005).
    public static func setPowered(_ index: UInt16, _ on: Bool) -> ManagementCommand {
        ManagementCommand(opcode: 0x0005, controllerIndex: index, parameters: [on ? 1 : 0], name: "Set Powered")
    }

    /// Set Connectable (0x0007).
    public static func setConnectable(_ index: UInt16, _ on: Bool) -> ManagementCommand {
        ManagementCommand(opcode: 0x0007, controllerIndex: index, parameters: [on ? 1 : 0], name: "Set Connectable")
    }

    /// Set Low Energy (0x000D).
    public static func setLowEnergy(_ index: UInt16, _ on: Bool) -> ManagementCommand {
        ManagementCommand(opcode: 0x000D, controllerIndex: index, parameters: [on ? 1 : 0], name: "Set Low Energy")
    }

    /// Set Local Name (0x000F): name padded to 249 bytes, short name to 11 (both NUL-terminated, truncated).
    public static func setLocalName(_ index: UInt16, name: String, shortName: String = "") -> ManagementCommand {
        func padded(_ text: String, _ size: Int) -> [UInt8] {
            let bytes = Array(text.utf8.prefix(size - 1))
            return bytes + [UInt8](repeating: 0, count: size - bytes.count)
        }
        return ManagementCommand(
            opcode: 0x000F, controllerIndex: index, parameters: padded(name, 249) + padded(shortName, 11),
            name: "Set Local Name")
    }

    /// Get Connections (0x0015): the controller's current connections.
    public static func getConnections(_ index: UInt16) -> ManagementCommand {
        ManagementCommand(opcode: 0x0015, controllerIndex: index, name: "Get Connections")
    }

    /// Start Discovery (0x0023) for the given address types (bit 0 BR/EDR, 1 LE public, 2 LE random).
    public static func startDiscovery(_ index: UInt16, addressTypes: UInt8 = leAddressTypes) -> ManagementCommand {
        ManagementCommand(opcode: 0x0023, controllerIndex: index, parameters: [addressTypes], name: "Start Discovery")
    }

    /// Stop Discovery (0x0024).
    public static func stopDiscovery(_ index: UInt16, addressTypes: UInt8 = leAddressTypes) -> ManagementCommand {
        ManagementCommand(opcode: 0x0024, controllerIndex: index, parameters: [addressTypes], name: "Stop Discovery")
    }

    /// LE public and LE random: the discovery address-type mask for an LE-only scan.
    public static let leAddressTypes: UInt8 = 0x06

    /// Set Advertising (0x0029): 0 off, 1 on, 2 connectable.
    public static func setAdvertising(_ index: UInt16, _ mode: UInt8) -> ManagementCommand {
        ManagementCommand(opcode: 0x0029, controllerIndex: index, parameters: [mode], name: "Set Advertising")
    }

    /// Add Advertising (0x003E): an instance with flags, advertising data and scan response.
    public static func addAdvertising(
        _ index: UInt16, instance: UInt8, flags: AdvertisingInstanceFlags, duration: UInt16 = 0,
        timeout: UInt16 = 0, advertisingData: [UInt8], scanResponse: [UInt8]
    ) -> ManagementCommand {
        var parameters: [UInt8] = [instance]
        parameters.appendManagementField(flags.rawValue)
        parameters.appendManagementField(duration)
        parameters.appendManagementField(timeout)
        parameters.append(UInt8(truncatingIfNeeded: advertisingData.count))
        parameters.append(UInt8(truncatingIfNeeded: scanResponse.count))
        parameters += advertisingData + scanResponse
        return ManagementCommand(opcode: 0x003E, controllerIndex: index, parameters: parameters, name: "Add Advertising")
    }

    /// Remove Advertising (0x003F); instance 0 removes all.
    public static func removeAdvertising(_ index: UInt16, instance: UInt8) -> ManagementCommand {
        ManagementCommand(opcode: 0x003F, controllerIndex: index, parameters: [instance], name: "Remove Advertising")
    }
}

/// Add Advertising's Flags parameter.
public struct AdvertisingInstanceFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Undirected connectable advertising, whatever the global connectable setting.
    public static let connectable = AdvertisingInstanceFlags(rawValue: 1 << 0)
    /// The kernel adds a Flags AD with LE General Discoverable.
    public static let discoverable = AdvertisingInstanceFlags(rawValue: 1 << 1)
    /// The kernel adds a Flags AD (implied by `discoverable`).
    public static let managedFlags = AdvertisingInstanceFlags(rawValue: 1 << 3)
    /// The kernel adds the TX power level.
    public static let txPower = AdvertisingInstanceFlags(rawValue: 1 << 4)
    /// The kernel appends the controller's local name to the scan response if it fits.
    public static let localName = AdvertisingInstanceFlags(rawValue: 1 << 6)
}
