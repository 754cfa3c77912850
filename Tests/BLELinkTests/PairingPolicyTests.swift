import Testing
@testable import BLELink

/// The pairing agent's decisions against recorded management event bytes: Just Works only, the served
/// adapter only, keys kept when the kernel hints so, a clear warning for a failed authentication.
struct PairingPolicyTests {
    static let peerBytes: [UInt8] = [0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x02]
    static let peer = BluetoothPeer(address: BluetoothAddress("C0:11:22:33:44:55")!, type: .leRandom)

    /// hci0's User Confirmation Request for Just Works (confirm hint 1, value 0), as the kernel sends it.
    static let justWorks: [UInt8] = [0x0F, 0x00, 0x00, 0x00, 0x0C, 0x00] + peerBytes + [0x01, 0x00, 0x00, 0x00, 0x00]
    /// The same request on hci1.
    static let justWorksOnHci1: [UInt8] = [0x0F, 0x00, 0x01, 0x00, 0x0C, 0x00] + peerBytes + [0x01, 0x00, 0x00, 0x00, 0x00]
    /// Numeric comparison: confirm hint 0, value 123456 (0x0001E240).
    static let numericComparison: [UInt8] = [0x0F, 0x00, 0x00, 0x00, 0x0C, 0x00] + peerBytes + [0x00, 0x40, 0xE2, 0x01, 0x00]
    /// New Long Term Key with store hint 1 (bonding) on hci0.
    static let newLTK: [UInt8] = [0x0A, 0x00, 0x00, 0x00, 0x25, 0x00, 0x01] + peerBytes
        + [0x02, 0x00, 0x10, 0x00, 0x00] + [UInt8](repeating: 0, count: 8) + Array(0x00...0x0F)
    /// The same key without bonding (store hint 0).
    static let newLTKNoBonding: [UInt8] = [0x0A, 0x00, 0x00, 0x00, 0x25, 0x00, 0x00] + Array(newLTK[7...])
    /// New Identity Resolving Key (store hint 1), resolved from 5A:0B:1C:2D:3E:4F.
    static let newIRK: [UInt8] = [0x18, 0x00, 0x00, 0x00, 0x1E, 0x00, 0x01, 0x4F, 0x3E, 0x2D, 0x1C, 0x0B, 0x5A]
        + peerBytes + Array(0x20...0x2F)
    /// Authentication Failed, PIN or Key Missing.
    static let authFailed: [UInt8] = [0x11, 0x00, 0x00, 0x00, 0x08, 0x00] + peerBytes + [0x06]
    /// Device Disconnected, reason 4 (authentication failure).
    static let disconnectedForAuthFailure: [UInt8] = [0x0C, 0x00, 0x00, 0x00, 0x08, 0x00] + peerBytes + [0x04]

    static func event(_ bytes: [UInt8]) throws -> ManagementEvent { try ManagementEvent(decoding: bytes[...]) }

    @Test func justWorksOnTheServedAdapterIsAccepted() throws {
        var policy = PairingPolicy(adapterIndex: 0, bonds: BondFile())
        let actions = policy.handle(try Self.event(Self.justWorks))
        #expect(actions.first == .reply(UserConfirmationReply(peer: Self.peer, accept: true)))
    }

    @Test func requestsOfAnotherAdapterAreLeftAlone() throws {
        var policy = PairingPolicy(adapterIndex: 0, bonds: BondFile())
        let other = policy.handle(try Self.event(Self.justWorksOnHci1))
        #expect(other.isEmpty)
        var onHci1 = PairingPolicy(adapterIndex: 1, bonds: nil)
        let request = onHci1.handle(try Self.event(Self.justWorks))
        let key = onHci1.handle(try Self.event(Self.newLTK))
        #expect(request.isEmpty && key.isEmpty)
    }

    @Test func numericComparisonIsRefusedWithAWarning() throws {
        var policy = PairingPolicy(adapterIndex: 0, bonds: nil)
        let actions = policy.handle(try Self.event(Self.numericComparison))
        #expect(actions.first == .reply(UserConfirmationReply(peer: Self.peer, accept: false)))
        guard case let .note(note) = actions.last else { Issue.record("no note"); return }
        #expect(note.kind == .warning)
        #expect(note.description.contains("123456") && note.description.contains("Just Works"))
    }

    @Test func keysWithAStoreHintAreKeptOnce() throws {
        var policy = PairingPolicy(adapterIndex: 0, bonds: BondFile())
        let first = policy.handle(try Self.event(Self.newLTK))
        guard case let .newLongTermKey(ltk) = try Self.event(Self.newLTK).kind else { return }
        #expect(first.first == .store(.longTerm(ltk.key)))
        let again = policy.handle(try Self.event(Self.newLTK))
        #expect(again.isEmpty)  // the same key again: nothing to write
        let irk = policy.handle(try Self.event(Self.newIRK))
        #expect(irk.contains { if case .store(.identityResolving) = $0 { true } else { false } })
        #expect(policy.bonds?.peers == [Self.peer])
        #expect(policy.bonds?.identityResolvingKeys.first?.value == Array(0x20...0x2F))
    }

    @Test func keysWithoutAStoreHintOrWithoutAStoreAreNotWritten() throws {
        var policy = PairingPolicy(adapterIndex: 0, bonds: BondFile())
        let noHint = policy.handle(try Self.event(Self.newLTKNoBonding))
        #expect(!noHint.contains { if case .store = $0 { true } else { false } })
        #expect(policy.bonds == BondFile())
        var withoutStore = PairingPolicy(adapterIndex: 0, bonds: nil)
        let noStore = withoutStore.handle(try Self.event(Self.newLTK))
        #expect(!noStore.contains { if case .store = $0 { true } else { false } })
    }

    @Test func aFailedAuthenticationWarnsAboutALostBond() throws {
        var policy = PairingPolicy(adapterIndex: 0, adapterName: "hci0", bonds: BondFile())
        for bytes in [Self.authFailed, Self.disconnectedForAuthFailure] {
            let actions = policy.handle(try Self.event(bytes))
            guard case let .note(note) = actions.first else { Issue.record("no note for \(bytes)"); continue }
            #expect(note.kind == .warning)
            #expect(note.description.contains("C0:11:22:33:44:55") && note.description.contains("lost its keys"))
        }
        // An ordinary disconnect says nothing.
        var ordinary = Self.disconnectedForAuthFailure
        ordinary[ordinary.count - 1] = 0x03
        let quiet = policy.handle(try Self.event(ordinary))
        #expect(quiet.isEmpty)
    }

    /// Device Connected of the peer on hci0 (flags 0, no EIR).
    static let connected: [UInt8] = [0x0B, 0x00, 0x00, 0x00, 0x0D, 0x00] + peerBytes + [0, 0, 0, 0, 0, 0]
    static let disconnected: [UInt8] = [0x0C, 0x00, 0x00, 0x00, 0x08, 0x00] + peerBytes + [0x03]

    @Test func aCentralWithoutABondHereThatLeavesWithoutPairingGetsAWarning() throws {
        var policy = PairingPolicy(adapterIndex: 0, bonds: BondFile())
        _ = policy.handle(try Self.event(Self.connected))
        let left = policy.handle(try Self.event(Self.disconnected))
        guard case let .note(note) = left.first else { Issue.record("no warning"); return }
        #expect(note.kind == .warning && note.description.contains("without pairing"))
        // One that paired on its link leaves quietly.
        _ = policy.handle(try Self.event(Self.connected))
        _ = policy.handle(try Self.event(Self.justWorks))
        _ = policy.handle(try Self.event(Self.newLTK))
        let quiet = policy.handle(try Self.event(Self.disconnected))
        #expect(quiet.isEmpty)
        // A bonded one that comes back (encrypting with its key, no event) leaves quietly too.
        let back = policy.handle(try Self.event(Self.connected))
        let gone = policy.handle(try Self.event(Self.disconnected))
        #expect(gone.isEmpty)
        guard case let .note(detail) = back.first else { Issue.record("no detail"); return }
        #expect(detail.description.contains("bonded"))
    }
}
