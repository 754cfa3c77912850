import Testing
@testable import BLELink

/// The peripheral's bookkeeping of linked centrals: room below the maximum, freed by the kernel's
/// Device Disconnected or by Get Connections, per address (one LE link per central).
struct KernelConnectionSlotsTests {
    static let b = BluetoothPeer(address: BluetoothAddress("00:AA:01:01:00:01")!)
    static let c = BluetoothPeer(address: BluetoothAddress("00:AA:01:02:00:02")!)
    static let cRandom = BluetoothPeer(address: BluetoothAddress("00:AA:01:02:00:02")!, type: .leRandom)

    @Test func roomUntilTheMaximumIsLinked() {
        var slots = ConnectionSlots()
        #expect(slots.hasRoom(maximum: 1))
        slots.taken(by: Self.b)
        #expect(!slots.hasRoom(maximum: 1))
        #expect(slots.hasRoom(maximum: 2))
        slots.taken(by: Self.c)
        #expect(!slots.hasRoom(maximum: 2))
        #expect(slots.count == 2)
    }

    @Test func aDisconnectFreesOnlyThatCentral() {
        var slots = ConnectionSlots()
        slots.taken(by: Self.b)
        slots.taken(by: Self.c)
        slots.linkDown(Self.b)
        #expect(slots.peers == [Self.c])
        #expect(slots.hasRoom(maximum: 2))
        slots.linkDown(Self.b)  // a second event for a link already gone changes nothing
        #expect(slots.peers == [Self.c])
    }

    @Test func aLinkCarriesEveryATTConnectionOfItsCentral() {
        var slots = ConnectionSlots()
        slots.taken(by: Self.c)
        slots.taken(by: Self.c)  // back-to-back clients over one lingering link: one link, one slot
        #expect(slots.count == 1)
        #expect(slots.hasRoom(maximum: 2))
        #expect(!slots.hasRoom(maximum: 1))
        #expect(slots.isLinked(Self.cRandom))
        #expect(!slots.isLinked(Self.b))
        slots.linkDown(Self.cRandom)  // matched by address: the event may name the type differently
        #expect(slots.count == 0)
        #expect(slots.peers.isEmpty)
    }

    @Test func getConnectionsFreesTheSlotsOfLinksNotListed() {
        var slots = ConnectionSlots()
        slots.taken(by: Self.b)
        slots.taken(by: Self.c)
        slots.keepOnly(linksUp: [Self.c])
        #expect(slots.peers == [Self.c])
        slots.keepOnly(linksUp: [])
        #expect(slots.count == 0)
    }
}
