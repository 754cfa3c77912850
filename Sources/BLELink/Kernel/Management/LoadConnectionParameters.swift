public import GATT

/// Load Connection Parameters (command 0x0035): the interval range, latency and supervision timeout the
/// kernel uses for its LE connections to each listed peer (`Param_Count (2) | { Address (6) | Address_Type (1)
/// | Min_Interval (2) | Max_Interval (2) | Latency (2) | Timeout (2) } x count`, 15 bytes per entry).
///
/// As central the kernel puts a peer's entry into its LE Create Connection (hci_conn_params_lookup in
/// hci_connect_le / hci_le_create_conn_sync); peers without one get the adapter's defaults
/// (``SetDefaultSystemConfiguration``). Loading first drops the kernel's entries of peers it does not
/// auto-connect (since management revision 23 only when more than one entry is loaded); since that revision
/// a single entry for a connected peer also starts an LE Connection Update on its link. The kernel skips (and logs) entries it
/// finds invalid rather than failing the command, so a caller validates first (``ConnectionParameters``
/// does). Needs CAP_NET_ADMIN.
public struct LoadConnectionParameters: Equatable, Sendable {
    public static let opcode: UInt16 = 0x0035

    /// One peer's parameters.
    public struct Entry: Equatable, Sendable {
        public var peer: BluetoothPeer
        public var parameters: ConnectionParameters

        public init(peer: BluetoothPeer, parameters: ConnectionParameters) {
            self.peer = peer
            self.parameters = parameters
        }
    }

    public var entries: [Entry]

    public init(_ entries: [Entry]) { self.entries = entries }

    /// Decodes the parameters; throws on a count that does not match the bytes, a BR/EDR address type or a
    /// value ``ConnectionParameters`` refuses.
    public init(decoding parameters: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(parameters, context: "Load Connection Parameters")
        entries = try reader.list(entrySize: 15) { (entry: inout ManagementReader) throws(BluetoothError) -> Entry in
            let peer = try entry.lePeer()
            let minimum = try entry.uint16(), maximum = try entry.uint16()
            let latency = try entry.uint16(), timeout = try entry.uint16()
            do {
                return Entry(peer: peer, parameters: try ConnectionParameters(
                    minimumInterval: minimum, maximumInterval: maximum, latency: latency, supervisionTimeout: timeout))
            } catch {
                throw .malformedManagementPacket("Load Connection Parameters: \(peer): \(error)")
            }
        }
    }

    public func encode(into out: inout [UInt8]) {
        out.appendManagementField(UInt16(truncatingIfNeeded: entries.count))
        for entry in entries {
            out.appendManagementPeer(entry.peer)
            out.appendManagementField(entry.parameters.minimumInterval)
            out.appendManagementField(entry.parameters.maximumInterval)
            out.appendManagementField(entry.parameters.latency)
            out.appendManagementField(entry.parameters.supervisionTimeout)
        }
    }

    public func command(_ controllerIndex: UInt16) -> ManagementCommand {
        var parameters: [UInt8] = []
        encode(into: &parameters)
        return ManagementCommand(
            opcode: Self.opcode, controllerIndex: controllerIndex, parameters: parameters, name: "Load Connection Parameters")
    }
}
