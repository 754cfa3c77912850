/// Something the pairing agent tells the person running the box.
public struct PairingNote: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Pairing failed or was refused, or a key could not be kept: the user should hear it.
        case warning
        /// Pairing accepted, a bond kept: for a verbose log.
        case detail
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// One key the kernel handed over for a bond.
public enum BondKey: Sendable, Equatable {
    case longTerm(LongTermKey)
    case identityResolving(IdentityResolvingKey)
    case signatureResolving(SignatureResolvingKey)
}

extension BondFile {
    /// Keeps `key` (see the `insert` of its kind). False when it was kept already.
    @discardableResult
    public mutating func insert(_ key: BondKey) -> Bool {
        switch key {
        case let .longTerm(key): insert(key)
        case let .identityResolving(key): insert(key)
        case let .signatureResolving(key): insert(key)
        }
    }
}

/// What the pairing agent does about one management event.
public enum PairingAction: Sendable, Equatable {
    /// Answer a User Confirmation Request.
    case reply(UserConfirmationReply)
    /// A key to keep: the bond file is read again, the key put in, and the file written (so a bond removed
    /// by `msgpipe bonds remove` meanwhile stays removed).
    case store(BondKey)
    case note(PairingNote)
}

/// The pairing agent's decisions, without I/O: which confirmation requests it accepts (Just Works only, on
/// its adapter only), which keys it keeps (those the kernel hints to store, when there is a bond store), and
/// what it tells the user (a failed authentication, a link dropped for one). ``PairingAgent`` feeds it the
/// events of the management socket and carries out its actions.
public struct PairingPolicy: Sendable {
    /// The controller the agent serves (hciN's N); events of other controllers are ignored.
    public let adapterIndex: UInt16
    /// The adapter's name for notes (hciN).
    public let adapterName: String
    /// The bonds kept, or nil when no bond store is used (keys then live in the kernel only, until it restarts).
    public private(set) var bonds: BondFile?
    /// Peers linked now that have no bond here and have not paired on this link yet (tracked with a store).
    private var unpairedLinks: Set<BluetoothPeer> = []
    /// The most links tracked (more are not warned about).
    static let trackedLinks = 64

    /// Device Disconnected's reason for a link ended by an authentication failure.
    static let disconnectedForAuthenticationFailure: UInt8 = 0x04

    /// Replaces the bonds the policy knows (after the file was read again).
    public mutating func reload(_ bonds: BondFile) {
        if self.bonds != nil { self.bonds = bonds }
    }

    public init(adapterIndex: UInt16, adapterName: String? = nil, bonds: BondFile?) {
        self.adapterIndex = adapterIndex
        self.adapterName = adapterName ?? "hci\(adapterIndex)"
        self.bonds = bonds
    }

    /// The actions for `event`, in order.
    public mutating func handle(_ event: ManagementEvent) -> [PairingAction] {
        guard event.controllerIndex == adapterIndex else { return [] }
        switch event.kind {
        case let .userConfirmationRequest(request):
            unpairedLinks.remove(request.peer)
            guard request.confirmHint else {
                return [
                    .reply(UserConfirmationReply(peer: request.peer, accept: false)),
                    .note(PairingNote(.warning, """
                        \(request.peer) asked \(adapterName) to compare the number \(Self.sixDigits(request.value)); \
                        msgpipe accepts only Just Works pairing (no display, no keyboard): refused
                        """)),
                ]
            }
            return [
                .reply(UserConfirmationReply(peer: request.peer, accept: true)),
                .note(PairingNote(.detail, "\(request.peer) pairs with \(adapterName) (Just Works): accepted")),
            ]
        case let .newLongTermKey(event):
            unpairedLinks.remove(event.key.peer)
            return keep(event.storeHint, "LTK (\(event.key.keyType))", event.key.peer, .longTerm(event.key))
        case let .newIdentityResolvingKey(event):
            return keep(event.storeHint, "IRK", event.key.peer, .identityResolving(event.key))
        case let .newSignatureResolvingKey(event):
            return keep(event.storeHint, "CSRK", event.key.peer, .signatureResolving(event.key))
        case let .authenticationFailed(failure):
            unpairedLinks.remove(failure.peer)
            return [.note(PairingNote(.warning, """
                pairing or encryption with \(failure.peer) on \(adapterName) failed: \(failure.statusDescription). \
                \(lostBondAdvice(failure.peer))
                """))]
        case let .deviceDisconnected(peer, reason) where reason == Self.disconnectedForAuthenticationFailure:
            unpairedLinks.remove(peer)
            return [.note(PairingNote(.warning, """
                \(peer) was disconnected from \(adapterName) for an authentication failure. \(lostBondAdvice(peer))
                """))]
        case let .deviceDisconnected(peer, _):
            // A central that neither paired nor had a bond here: it encrypted with a key this box does not
            // have (the kernel refuses that silently), or gave up. Either way no message could arrive.
            guard unpairedLinks.remove(peer) != nil else { return [] }
            return [.note(PairingNote(.warning, """
                \(peer) left \(adapterName) without pairing, and this box holds no bond for it, so its link was \
                never encrypted. \(lostBondAdvice(peer))
                """))]
        case let .deviceConnected(peer):
            guard let bonds else { return [] }
            let bonded = bonds.longTermKeys.contains { $0.peer == peer }
            if !bonded, unpairedLinks.count < Self.trackedLinks { unpairedLinks.insert(peer) }
            return [.note(PairingNote(.detail, bonded
                ? "\(peer) connected to \(adapterName): bonded, it encrypts with the stored key"
                : "\(peer) connected to \(adapterName): not bonded here, it has to pair"))]
        default:
            return []
        }
    }

    private mutating func keep(_ storeHint: Bool, _ what: String, _ peer: BluetoothPeer, _ key: BondKey) -> [PairingAction] {
        guard storeHint else {
            return [.note(PairingNote(.detail, "\(peer) paired with \(adapterName) without bonding: its \(what) is not kept"))]
        }
        guard var bonds else {
            return [.note(PairingNote(.detail, """
                \(peer) bonded with \(adapterName): its \(what) stays in the kernel until it restarts (no bond directory)
                """))]
        }
        let changed = bonds.insert(key)
        self.bonds = bonds
        guard changed else { return [] }
        return [.store(key), .note(PairingNote(.detail, "\(peer) bonded with \(adapterName): its \(what) is kept"))]
    }

    private func lostBondAdvice(_ peer: BluetoothPeer) -> String {
        guard let bonds else {
            return "If the phone was bonded before, remove the bond on the phone and pair again "
                + "(a bond directory keeps bonds across restarts)."
        }
        let known = bonds.peers.contains { $0.address == peer.address }
        return known
            ? "This box holds a bond for it: the phone may have forgotten it; remove the bond on both sides and pair again."
            : "This box holds no bond for it: if the phone was bonded before, the box lost its keys; "
                + "remove the bond on the phone (Bluetooth settings, forget this device) and pair again."
    }

    private static func sixDigits(_ value: UInt32) -> String {
        let text = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - text.count) + text
    }
}
