import BLELink
import BlueZLink
import SDBus
import Foundation
import Glibc
import Synchronization
import Testing
import Transport

/// BlueZ issue #1452 (bluetoothd 5.78 and later, unfixed in 5.87): when an unbonded central that had subscribed
/// disconnects, bluetoothd clears its subscription with a NULL ATT (clear_ccc_state -> ccc_write_cb), which
/// matches the FIRST client in the characteristic's notify list and closes that one's descriptor: another
/// central's. Played against the fake bluetoothd: the peripheral's link lives on, the central's Transport
/// finds the peer silent and its link subscribes again, and the transfer finishes on the same link.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BlueZSubscriptionLossTests {
    /// The air and the central's bluetoothd between the peripheral's notify sockets (the "bluetoothd ends" the
    /// fake's acquires return) and the central's notify descriptors: one thread per subscription copies each
    /// datagram until its source ends, and closes both of its descriptors once the central closed its end
    /// (its bluetoothd keeps the central's descriptor when the peer merely stops notifying).
    final class Relays: Sendable {
        /// The sources of the threads still running, in the order the subscriptions came.
        private let sources = Mutex<[Int32]>([])

        /// Relays from `source` to `destination` on a thread of its own, which owns both.
        func start(from source: Int32, to destination: Int32) {
            sources.withLock { $0.append(source) }
            Thread.detachNewThread { [self] in
                var buffer = [UInt8](repeating: 0, count: 600)
                while true {
                    var ready = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
                    guard poll(&ready, 1, 10_000) == 1 else { break }
                    let count = recv(source, &buffer, buffer.count, 0)
                    guard count > 0 else { break }
                    _ = send(destination, buffer, count, 0)
                }
                // The central's descriptor stays open until the central closes its end (a renewal, or the end).
                var hangUp = pollfd(fd: destination, events: 0, revents: 0)
                _ = poll(&hangUp, 1, 30_000)
                // Unregistered before it is closed, so no shutdown can hit a reused descriptor number.
                sources.withLock { $0.removeAll { $0 == source } }
                close(source)
                close(destination)
            }
        }

        /// How many subscriptions were relayed so far (running or not).
        let count = Mutex(0)

        /// Plays bluetoothd closing the peripheral's notify socket of the first subscription still relayed.
        func dropFirst() {
            sources.withLock { sources in if let first = sources.first { _ = shutdown(first, Int32(SHUT_RDWR)) } }
        }

        /// Ends every relay still running.
        func stop() {
            sources.withLock { sources in for source in sources { _ = shutdown(source, Int32(SHUT_RDWR)) } }
        }
    }

    /// The central's side of a fresh subscription: bluetoothd acquires the peripheral's notify descriptor for
    /// `device`, and the central gets its own descriptor fed from it.
    static func subscribe(_ fake: FakeBlueZ, device: String, relays: Relays) async throws -> Int32 {
        let bluetoothdEnd = try await BlueZPeripheralTests.acquireHalf(fake, "AcquireNotify", device: device, mtu: 185)
        let (central, relay) = try AcquiredLinkTests.socketPair()
        relays.count.withLock { $0 += 1 }
        relays.start(from: bluetoothdEnd, to: relay)
        return central
    }

    @Test func bluetoothdLosingTheSubscriptionMidTransferCostsARenewalNotTheMessage() async throws {
        let events = Mutex<[BlueZPeripheral.Event]>([])
        try await BlueZPeripheralTests.withPeripheral(onEvent: { event in events.withLock { $0.append(event) } }) { fake, peripheral, _ in
            let device = BlueZPeripheralTests.device
            let relays = Relays()
            defer { relays.stop() }
            let write = try await BlueZPeripheralTests.acquireHalf(fake, "AcquireWrite", device: device, mtu: 185)
            let notify = try await Self.subscribe(fake, device: device, relays: relays)
            let central = try AcquiredLink(
                sending: write, receiving: notify, maximumPacketSize: BlueZCentral.maximumWriteSize(mtu: 185),
                resubscribe: { try await Self.subscribe(fake, device: device, relays: relays) })
            var accepted = peripheral.connections.makeAsyncIterator()
            let connection = try #require(await accepted.next())
            let centralTransport = Transport(link: central)
            let peripheralTransport = Transport(link: connection.link)
            var received = peripheralTransport.messages.makeAsyncIterator()

            let first = Array("before".utf8)
            try await centralTransport.send(first, timeout: .seconds(10))
            #expect(await received.next()?.body == first)

            // bluetoothd closes the peripheral's notify socket for the device, which stays connected.
            relays.dropFirst()
            let big = (0..<(100 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            try await centralTransport.send(big, timeout: .seconds(30))
            #expect(await received.next()?.body == big)
            #expect(events.withLock { $0 } == [.subscriptionLost(peer: "11:22:33:44:55:66")])
            #expect(relays.count.withLock { $0 } == 2, "one renewal: a second subscription")
            // The same link carries the way back too.
            async let back = centralTransport.messages.first { _ in true }
            try await peripheralTransport.send(Array("after".utf8), timeout: .seconds(10))
            #expect(await back?.body == Array("after".utf8))
            #expect(peripheral.connections.count == 0, "no second connection for the device")
            await centralTransport.close()
            await peripheralTransport.close()
        }
    }
}
