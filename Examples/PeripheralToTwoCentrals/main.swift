// A peripheral pushes one message to two subscribed centrals, the seeds' `updateValue(_:for:onSubscribedCentrals:)`
// done with msgpipe's API: every central has its own Transport session (acknowledged, resumed after a
// reconnect), and each send is paced by that central's own link.
//
// Runs over a UNIX SEQPACKET socket, the same ATT/GATT code as over Bluetooth, without a radio:
//     swift run PeripheralToTwoCentrals
// Over Bluetooth the accepted bearers come from BLELink's `BLEPeripheral` instead of `SeqPacketSocket`.
import BLELink
import GATT
import Glibc
import Transport

let path = "/tmp/msgpipe-example-\(getpid()).sock"
let listener = try SeqPacketSocket.listen(path: path)
defer {
    close(listener)
    unlink(path)
}

// The peripheral: each central's connection is served on a GATTLink of its own and handed to the
// TransportListener, which finds (or makes) the central's session from its hello.
let peripheral = TransportListener()
let accepting = Task {
    await withTaskGroup(of: Void.self) { group in
        for index in 1 ... 2 {
            guard let fd = try? await SeqPacketSocket.accept(listener), let bearer = try? ATTBearer(adopting: fd) else { break }
            group.addTask {
                let link = GATTLink(profile: .msgpipe)
                async let served: Void = link.serve(bearer, info: MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 517))
                await peripheral.accept(link, peer: "connection \(index)")
                await link.close()
                await served
            }
        }
    }
}

// Two centrals: connect, subscribe (GATTLink.connect), and read messages as an AsyncSequence.
let centrals = try await (1 ... 2).asyncMap { number in
    let link = GATTLink(profile: .msgpipe)
    try await link.connect(try ATTBearer(adopting: try SeqPacketSocket.connect(path: path)))
    return (number, Transport(link: link))
}

// Wait until both are subscribed (their sessions arrived), then push to all of them.
for await session in peripheral.sessions {
    print("subscribed: \(session.peer)")
    if peripheral.sessionCount == 2 { break }
}
let ticket = Array("{\"ticket\":42,\"amount\":\"12.50\"}".utf8)
for (session, result) in await peripheral.send(toAll: ticket) {
    print("\(session.peer): \(result)")  // success once that central acknowledged the whole message
}
for (number, transport) in centrals {
    var messages = transport.messages.makeAsyncIterator()
    if let message = await messages.next() {
        print("central \(number) received \(String(decoding: message.body, as: UTF8.self))")
    }
    await transport.close()
}
await peripheral.close()
accepting.cancel()

extension ClosedRange<Int> {
    func asyncMap<T>(_ transform: (Int) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
