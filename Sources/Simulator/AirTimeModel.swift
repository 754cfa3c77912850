public import GATT
import Transport
/// Air time of LL data PDUs and the theoretical application throughput of a ``BLELinkConfiguration``.
///
/// A data PDU is header 2 + payload + MIC 4 (encrypted, payload not empty) + CRC 3 bytes. On 1M and 2M it
/// takes (preamble 1 or 2 + access address 4 + those bytes) × 8 bits at 1 or 2 Mbit/s; on Coded (S=8, Core
/// Vol 6 Part B 2.2) 376 µs (preamble 80, access address 256, CI 16, TERM1 24) + 64 µs per byte + TERM2 24 µs.
/// PDUs alternate central → peripheral → central with T_IFS (150 µs) between them. On GATT an application
/// packet of `n` bytes is an ATT notification/write command (3-byte ATT header) in an L2CAP frame (4-byte
/// header), `n + 7` bytes cut into LL PDUs of at most the LL payload; on an LE credit-based channel it is an
/// SDU of `n + 2` bytes (PROTOCOL.md 7.1), with its 2-byte SDU length cut into K-frames of at most MPS bytes,
/// each with a 4-byte L2CAP header and cut into LL PDUs.
public struct AirTimeModel: Sendable {
    /// The inter-frame space between two PDUs, 150 µs.
    public static let interFrameSpaceNanoseconds: Int64 = 150_000
    /// ATT notification/write command header plus L2CAP basic header.
    public static let attAndL2CAPHeaderBytes = 7

    /// The modelled connection.
    public let configuration: BLELinkConfiguration

    /// The model of `configuration`.
    public init(configuration: BLELinkConfiguration) { self.configuration = configuration }

    /// Air time of one data PDU carrying `payload` bytes (0: an empty PDU, never encrypted).
    public func pduNanoseconds(payload: Int) -> Int64 {
        let mic = configuration.encrypted && payload > 0 ? 4 : 0
        let pdu = Int64(2 + payload + mic + 3)
        switch configuration.phy {
        case .le1M: return (1 + 4 + pdu) * 8 * 1_000
        case .le2M: return (2 + 4 + pdu) * 8 * 500
        case .coded: return Self.codedFrameNanoseconds + pdu * Self.codedNanosecondsPerByte
        }
    }

    /// LE Coded at S=8: what precedes and follows the PDU (preamble 80, access address 256, CI 16, TERM1 24,
    /// TERM2 24 µs), and one PDU or CRC byte (8 bits of 8 symbols at 1 Msym/s).
    public static let codedFrameNanoseconds: Int64 = 400_000
    public static let codedNanosecondsPerByte: Int64 = 64_000

    /// One exchange: the central's PDU, T_IFS, the peripheral's PDU (without the T_IFS that follows).
    public func pairNanoseconds(centralPayload: Int, peripheralPayload: Int) -> Int64 {
        pduNanoseconds(payload: centralPayload) + Self.interFrameSpaceNanoseconds
            + pduNanoseconds(payload: peripheralPayload)
    }

    /// The part of a connection interval PDU exchanges may use.
    public var usableEventNanoseconds: Int64 {
        nanoseconds(configuration.connectionInterval) - nanoseconds(configuration.eventEndMargin)
    }

    /// L2CAP header of a K-frame, and the SDU length the first K-frame of an SDU carries.
    public static let kFrameHeaderBytes = 4
    public static let sduLengthBytes = 2

    /// LL PDU payload sizes that carry one application packet of `packetSize` bytes.
    public func fragments(ofPacketSize packetSize: Int) -> [Int] {
        switch configuration.bearer {
        case .gatt:
            return linkLayerFragments(of: packetSize + Self.attAndL2CAPHeaderBytes)
        case let .channel(_, mps):
            var remaining = packetSize + 2 + Self.sduLengthBytes
            var sizes: [Int] = []
            while remaining > 0 {
                let kFrame = min(remaining, mps)
                sizes += linkLayerFragments(of: kFrame + Self.kFrameHeaderBytes)
                remaining -= kFrame
            }
            return sizes
        }
    }

    /// One L2CAP PDU of `bytes` cut into LL PDUs of at most the LL payload.
    private func linkLayerFragments(of bytes: Int) -> [Int] {
        var remaining = bytes
        var sizes: [Int] = []
        while remaining > 0 {
            let size = min(remaining, configuration.linkLayerPayload)
            sizes.append(size)
            remaining -= size
        }
        return sizes
    }

    /// The most application (packet) bits per second one direction can carry when it always has full
    /// packets and the other direction answers each PDU with an empty one, honouring the interval, the
    /// per-event cap and the event end rule.
    public var applicationThroughputLimit: Double {
        let packetSize = configuration.maximumPacketSize
        let sizes = fragments(ofPacketSize: packetSize)
        let interval = nanoseconds(configuration.connectionInterval)
        // The state at an event's start is the fragment index, so the schedule repeats within sizes.count events.
        var firstSeen: [Int: (event: Int, packets: Int)] = [:]
        var fragment = 0
        var packets = 0
        var event = 0
        while firstSeen[fragment] == nil {
            firstSeen[fragment] = (event, packets)
            var elapsed: Int64 = 0
            var pairs = 0
            while true {
                if let cap = configuration.packetsPerEvent, pairs >= cap { break }
                let pair = pairNanoseconds(centralPayload: sizes[fragment], peripheralPayload: 0)
                if pairs > 0 && elapsed + pair > usableEventNanoseconds { break }
                elapsed += pair + Self.interFrameSpaceNanoseconds
                pairs += 1
                fragment = (fragment + 1) % sizes.count
                if fragment == 0 { packets += 1 }
            }
            event += 1
        }
        guard let start = firstSeen[fragment] else { return 0 }
        let cyclePackets = packets - start.packets
        let cycleNanoseconds = Int64(event - start.event) * interval
        return Double(cyclePackets * packetSize * 8) / (Double(cycleNanoseconds) / 1e9)
    }
}

extension AirTimeModel {
    /// ``applicationThroughputLimit`` in kilobits per second, as reports give it.
    public var limitKbps: Double { applicationThroughputLimit / 1000 }

    /// The limit GATT has on the same air (PHY, data length, interval, cap): what a channel's limit is set
    /// beside. The same as ``limitKbps`` on GATT.
    public var gattLimitKbps: Double {
        var gatt = configuration
        gatt.bearer = .gatt
        return AirTimeModel(configuration: gatt).limitKbps
    }

    /// The best case a real link is measured against when the system tells only its ATT MTU and PHY (Linux
    /// gives a process neither the connection interval nor the LL data length): LL payload 251, the shortest
    /// interval 7.5 ms (or `interval`, the slowest one asked for), no per-event cap, on GATT. `attMTU` is
    /// clamped to 23...517.
    ///
    /// ```swift
    /// let limit = AirTimeModel.bestCase(attMTU: 247, phy: .le2M).limitKbps
    /// ```
    public static func bestCase(attMTU: Int, phy: LEPHY = bestCasePHY, interval: Duration? = nil) -> AirTimeModel {
        AirTimeModel(configuration: BLELinkConfiguration(
            phy: phy, linkLayerPayload: bestCaseLinkLayerPayload, attMTU: min(max(attMTU, 23), 517),
            connectionInterval: interval ?? bestCaseInterval))
    }

    /// The best-case limit, in kbit/s, of a real link whose system told its ATT MTU (nil: unknown) and its
    /// central's transmit PHY (nil: unknown, ``bestCasePHY`` assumed), at `interval`, the slowest connection
    /// interval asked for (nil: ``bestCaseInterval``). Nil where the MTU is unknown or the PHY is Coded: Linux
    /// does not tell a Coded link's coding (S=2 or S=8), so there is no one limit to measure against.
    ///
    /// ```swift
    /// let limit = AirTimeModel.bestCaseLimitKbps(attMTU: 247, phy: .le1M, interval: nil)
    /// ```
    public static func bestCaseLimitKbps(attMTU: Int?, phy: LEPHY?, interval: Duration?) -> Double? {
        let modelled = phy ?? bestCasePHY
        guard let attMTU, modelled != .coded else { return nil }
        return bestCase(attMTU: attMTU, phy: modelled, interval: interval).limitKbps
    }

    /// What ``bestCase(attMTU:phy:interval:)`` assumes where nothing is known.
    public static let bestCasePHY = LEPHY.le2M
    public static let bestCaseLinkLayerPayload = 251
    public static let bestCaseInterval = Duration.microseconds(7_500)
}

/// Whole nanoseconds of `duration`, rounded up.
package func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    let whole = attoseconds / 1_000_000_000
    let roundUp: Int64 = attoseconds % 1_000_000_000 > 0 ? 1 : 0
    return seconds * 1_000_000_000 + whole + roundUp
}
