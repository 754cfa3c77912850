public import GATT
import Transport
/// How application packets ride the L2CAP layer in the model.
public enum SimulatedBearer: Sendable, Equatable {
    /// GATT: each packet an ATT notification / Write Command value (3-byte ATT header) in one L2CAP frame
    /// (4-byte header).
    case gatt
    /// An LE credit-based channel: each packet one frame of PROTOCOL.md 7.1 (2-byte length) as one SDU of at
    /// most `mtu` bytes; the SDU (with its 2-byte SDU length) cut into K-frames of at most `mps` bytes, each
    /// with a 4-byte L2CAP header. Credits come back in PDUs the receiver sends anyway (the model's empty
    /// ones), so a sender with the kernel's initial credits never waits for them.
    case channel(mtu: Int, mps: Int)
}

/// The connection a ``BLESimulator`` models: PHY, Data Length Extension, ATT MTU, connection interval, the
/// per-event packet cap some stacks impose, LE encryption, and GATT or an L2CAP channel.
public struct BLELinkConfiguration: Sendable, Equatable {
    /// The physical layer; Coded is modelled at S=8 (125 kbit/s), the coding every Coded controller supports.
    public var phy: LEPHY
    /// Link-layer data PDU payload limit (27 without Data Length Extension, up to 251 with it).
    public var linkLayerPayload: Int
    /// The ATT MTU (23 to 517); a msgpipe packet carries at most min(`attMTU` - 3, 512) bytes.
    public var attMTU: Int
    /// Time between connection event anchors (7.5 ms to 4 s).
    public var connectionInterval: Duration
    /// At most this many PDU exchanges (central and peripheral PDU) per connection event; nil: no cap.
    public var packetsPerEvent: Int?
    /// LE encryption: a 4-byte MIC on every non-empty data PDU.
    public var encrypted: Bool
    /// Application packets each side's controller buffers (taken from the endpoint ahead of transmission).
    public var controllerBufferPackets: Int
    /// Time kept free before the next anchor: the event ends when the next PDU pair would not fit before it.
    public var eventEndMargin: Duration
    /// When set, each connection starts at this ATT MTU and switches to `attMTU` after its first event, as an
    /// ATT MTU exchange does (endpoints see `maximumPacketSizeChanged`).
    public var initialATTMTU: Int?
    /// GATT (default) or an LE credit-based channel.
    public var bearer: SimulatedBearer = .gatt

    /// A configuration; the defaults are the BLE 4.0 baseline (1M, LL 27, MTU 23), 30 ms interval.
    public init(
        phy: LEPHY = .le1M, linkLayerPayload: Int = 27, attMTU: Int = 23,
        connectionInterval: Duration = .milliseconds(30), packetsPerEvent: Int? = nil, encrypted: Bool = false,
        controllerBufferPackets: Int = 4, eventEndMargin: Duration = .microseconds(150), initialATTMTU: Int? = nil
    ) {
        self.phy = phy
        self.linkLayerPayload = linkLayerPayload
        self.attMTU = attMTU
        self.connectionInterval = connectionInterval
        self.packetsPerEvent = packetsPerEvent
        self.encrypted = encrypted
        self.controllerBufferPackets = controllerBufferPackets
        self.eventEndMargin = eventEndMargin
        self.initialATTMTU = initialATTMTU
    }

    /// Largest msgpipe packet: on GATT the ATT value of a notification or write command, min(`attMTU` - 3,
    /// 512); on a channel its SDU less the frame's 2-byte length.
    public var maximumPacketSize: Int {
        switch bearer {
        case .gatt: ATTOpcode.maximumValueLength(mtu: attMTU)
        case let .channel(mtu, _): mtu - 2
        }
    }

    /// Checks every value against what BLE allows and the simulator needs.
    public func validate() throws(SimulationError) {
        guard (27...251).contains(linkLayerPayload) else {
            throw .invalidConfiguration("LL payload \(linkLayerPayload) is outside 27...251")
        }
        guard (23...517).contains(attMTU) else { throw .invalidConfiguration("ATT MTU \(attMTU) is outside 23...517") }
        if case let .channel(mtu, mps) = bearer {
            guard (23...65535).contains(mtu), (23...65533).contains(mps) else {
                throw .invalidConfiguration("channel MTU \(mtu) / MPS \(mps) outside 23...65535 / 23...65533")
            }
        }
        if let initialATTMTU, !(23...attMTU).contains(initialATTMTU) {
            throw .invalidConfiguration("initial ATT MTU \(initialATTMTU) is outside 23...\(attMTU)")
        }
        guard ConnectionParameters.intervalLimits.contains(connectionInterval) else {
            throw .invalidConfiguration("connection interval \(connectionInterval) is outside 7.5 ms...4 s")
        }
        if let packetsPerEvent, packetsPerEvent < 1 {
            throw .invalidConfiguration("packets per event must be at least 1, got \(packetsPerEvent)")
        }
        guard controllerBufferPackets >= 1 else {
            throw .invalidConfiguration("controller buffer must hold at least 1 packet")
        }
        guard eventEndMargin >= .zero, eventEndMargin < connectionInterval else {
            throw .invalidConfiguration("event end margin \(eventEndMargin) must be within the interval")
        }
        let airTime = AirTimeModel(configuration: self)
        let longestPair = airTime.pairNanoseconds(centralPayload: linkLayerPayload, peripheralPayload: linkLayerPayload)
        guard longestPair <= airTime.usableEventNanoseconds else {
            throw .invalidConfiguration("a PDU exchange does not fit into a \(connectionInterval) interval")
        }
    }
}
