import Backpressure
public import BLELink
public import GATT
import Synchronization
public import Transport

/// The central's link on the kernel backend when a channel may carry the data: a `RelayLink` that carries,
/// connection after connection, the LE credit-based channel the peripheral's service publishes, or GATT where
/// there is none (`LinkMode`). Each connection starts on GATT (discovery, the PSM), so a reconnect may land on
/// either and Transport resumes over the relay all the same.
public final class ChannelCentralLink: RelayCentralLink {
    private let carriage = RelayCarriage()
    public let profile: GATTServiceProfile
    public let mode: LinkMode
    /// False for a plain format: the channel carries its bytes as they are (PROTOCOL.md 7.2).
    public let framed: Bool
    private struct State {
        var carrier = Carrier.gatt
        var peerInfo: MsgPipeServiceInfo?
        /// Sends a packet confirmed on the connection carried now (nil where it cannot confirm).
        var confirm: (@Sendable ([UInt8]) async throws -> Void)?
        /// The ATT bearer of the connection carried now (or the last one), which tells its PHY.
        var bearer: ATTBearer?
    }

    private let state = Mutex(State())

    public init(profile: GATTServiceProfile, mode: LinkMode, framed: Bool) {
        self.profile = profile
        self.mode = mode
        self.framed = framed
    }

    public var relay: RelayLink { carriage.relay }

    /// `.l2cap` while the connection carried now (or the last one) is the channel, `.gatt` otherwise.
    public var carrier: Carrier { state.withLock { $0.carrier } }
    /// True when ``sendConfirmed(_:)`` confirms on the connection carried now: the channel's drain, or a
    /// GATT Write Request where the peer's RX takes one.
    public var canConfirm: Bool { state.withLock { $0.confirm != nil } }

    /// Sends `packet` on the connection carried now and waits until it was confirmed
    /// (`StreamLink.sendConfirmed(_:stall:)`, `GATTLink.sendConfirmed(_:)`); call it after the packets
    /// before it were sent. Where nothing can confirm (``canConfirm``) it is ``send(_:)``.
    public func sendConfirmed(_ packet: [UInt8]) async throws {
        guard let confirm = state.withLock({ $0.confirm }) else { return try await send(packet) }
        try await confirm(packet)
    }

    /// The PHYs of the connection carried now, read from its ATT socket (`BT_PHY`).
    public var phy: LinkPHY? { state.withLock { $0.bearer }?.phy }

    /// The peripheral's info characteristic as read at the last connect.
    public var peerInfo: MsgPipeServiceInfo? { state.withLock { $0.peerInfo } }

    /// Sets up GATT on `bearer` (connected to `peer` from `local`), opens the published channel at `security`
    /// within `timeout` unless the mode is `LinkMode.gatt`, and carries the channel, or GATT, until it drops.
    /// Returns "channel" or "GATT" and why. Throws what GATT throws, and in `LinkMode.l2cap`
    /// `MessagePipeError.channelUnavailable(_:)`.
    public func connect(
        _ bearer: ATTBearer, peer: BluetoothPeer, local: BluetoothAdapter, security: L2CAPSecurityLevel,
        timeout: Duration
    ) async throws -> String {
        let gatt = GATTLink(profile: profile)
        let mode = mode
        var channel: ConnectedATTSocket?
        var refusal: String?
        do {
            try await gatt.connect(bearer) { psm in
                guard mode != .gatt else { return false }
                do {
                    channel = try await BlockingCall.run { () throws(BluetoothError) in
                        try L2CAPChannel.connect(
                            from: local.address, adapterName: local.name, to: peer, psm: psm, timeout: timeout,
                            security: security
                        ).handOver()
                    }
                    return true
                } catch {
                    refusal = "PSM 0x\(String(psm, radix: 16)): \(error)"
                    return false
                }
            }
        } catch {
            await gatt.close()
            throw error
        }
        let info = gatt.peerInfo
        let carried: any Link
        let summary: String
        let confirm: (@Sendable ([UInt8]) async throws -> Void)?
        if let channel {
            let unit = L2CAPChannel.sendUnit(channel.fileDescriptor) ?? ATTOpcode.defaultMTU
            do {
                let stream = try StreamLink(adopting: channel.fileDescriptor, sendUnit: unit, framed: framed)
                carried = stream
                confirm = { try await stream.sendConfirmed($0) }
            } catch {
                await gatt.close()
                throw error
            }
            summary = "l2cap channel PSM 0x\(String(gatt.peerPSM ?? 0, radix: 16)), SDU \(unit)"
        } else {
            if mode == .l2cap {
                await gatt.close()
                throw MessagePipeError.channelUnavailable(refusal ?? "the peripheral publishes no channel PSM")
            }
            carried = gatt
            if gatt.canConfirm {
                confirm = { try await gatt.sendConfirmed($0) }
            } else {
                confirm = nil
            }
            if let refusal {
                summary = "gatt (the channel failed: \(refusal))"
            } else {
                summary = mode == .gatt ? "gatt" : "gatt (no channel published)"
            }
        }
        let carrier: Carrier = channel != nil ? .l2cap : .gatt
        state.withLock { state in
            state.carrier = carrier
            state.peerInfo = info
            state.confirm = confirm
            state.bearer = bearer
        }
        carriage.carry(carried) {
            if carrier == .l2cap {
                await gatt.disconnect()
                await gatt.close()
            }
        }
        return summary
    }

    /// Closes the relay and the connection carried now.
    public func close() async {
        await carriage.close()
    }
}
