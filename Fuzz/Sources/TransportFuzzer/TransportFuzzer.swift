import Framing
import FuzzSupport
@_spi(Fuzzing) import Transport

/// Transport's receive path, through its public API only (so it keeps compiling as Sender and Receiver change):
///
/// 1. The control-packet codec (PROTOCOL.md 3.4): the whole input is decoded; what decodes must encode to
///    exactly the same bytes.
/// 2. A ``TransportEndpoint`` (small limits) and an honest peer endpoint, driven by a script of one-byte
///    operations: a raw packet from the input to the endpoint, the peer's next packet delivered (as it is,
///    dropped, duplicated, held back for reordering, or with a byte flipped), the endpoint's next packet to the
///    peer, time passing, the peer submitting a message or request, the endpoint taking its messages, and a
///    reconnect at another packet size (or an MTU exchange raising it on the live connection). After every step the endpoint holds no more than its limits allow,
///    writes packets within the packet size, and every control packet it writes decodes and re-encodes to
///    itself; while no forged or corrupted packet was delivered, every message it delivers is one the peer
///    sent, byte for byte.
///
/// Every step does bounded work (one packet each way at most), so an input's work is bounded by its length.
enum TransportFuzzTarget {
    static let configuration: EndpointConfiguration = {
        var configuration = EndpointConfiguration()
        configuration.maximumMessageSize = 3000
        configuration.maximumBufferedBytes = 6000
        configuration.maximumMessagesInProgress = 4
        configuration.maximumQueuedMessages = 8
        configuration.sendWindow = 24
        configuration.maximumRetries = 4
        configuration.initialRetransmissionTimeout = .milliseconds(50)
        return configuration
    }()

    static func run(_ input: [UInt8]) {
        checkControl(input[...])
        runEndpoint(input)
    }

    /// What decodes as a control packet encodes to the same bytes.
    static func checkControl(_ packet: ArraySlice<UInt8>) {
        guard let encoded = TransportControlCodec.reencode(packet) else { return }
        require(encoded.elementsEqual(packet), "control packet \(Array(packet)) re-encodes to \(encoded)")
    }

    static func runEndpoint(_ input: [UInt8]) {
        var script = FuzzScript(input)
        var endpoint = TransportEndpoint(configuration: configuration, session: 0x2222)
        var peer = TransportEndpoint(configuration: configuration, session: 0x1111)
        var now = Duration.zero
        var packetSize = 64
        endpoint.linkConnected(maximumPacketSize: packetSize, now: now)
        peer.linkConnected(maximumPacketSize: packetSize, now: now)
        var packet: [UInt8] = []
        var held: [[UInt8]] = []
        var sent: Set<[UInt8]> = []
        var forged = false
        var submitted = 0

        func deliver(_ packet: [UInt8]) {
            endpoint.receive(packet[...], now: now)
        }

        while !script.isAtEnd {
            let operation = script.byte()
            switch operation & 0x07 {
            case 0:
                let raw = script.chunk()
                checkControl(raw)
                forged = true
                endpoint.receive(raw, now: now)
            case 1:
                guard peer.writeNextPacket(into: &packet, now: now) else { break }
                switch operation >> 3 {
                case 0: deliver(packet)
                case 1: break  // lost
                case 2:
                    deliver(packet)
                    deliver(packet)
                case 3 where held.count < 8: held.append(packet)
                default:
                    let position = Int(script.byte()) % packet.count
                    packet[position] ^= max(1, script.byte())
                    forged = true
                    deliver(packet)
                }
            case 2:
                if !held.isEmpty { deliver(held.removeFirst()) }
            case 3:
                guard endpoint.writeNextPacket(into: &packet, now: now) else { break }
                require(packet.count <= packetSize, "a packet of \(packet.count) bytes at packet size \(packetSize): \(packet)")
                if packet.starts(with: ControlPacket.prefix) {
                    guard let encoded = TransportControlCodec.reencode(packet[...]) else {
                        fatalError("the endpoint wrote a control packet that does not decode: \(packet)")
                    }
                    require(encoded == packet, "the endpoint's control packet \(packet) re-encodes to \(encoded)")
                }
                if operation >> 3 != 1 { peer.receive(packet[...], now: now) }
            case 4:
                now += .milliseconds(5 * (Int(script.byte()) + 1))
                if let deadline = endpoint.nextTimeout, deadline <= now { endpoint.handleTimeout(now: now) }
                if let deadline = peer.nextTimeout, deadline <= now { peer.handleTimeout(now: now) }
            case 5:
                guard peer.canSubmit, submitted < 32 else { break }
                let count = Int(script.byte()) * 13
                let seed = UInt8(truncatingIfNeeded: submitted)
                let body = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed }
                let kind: MessageKind = operation & 0x08 != 0 ? .request : .message
                if (try? peer.submit(body, options: SendOptions(kind: kind, compress: operation & 0x10 != 0), now: now)) != nil {
                    sent.insert(body)
                    submitted += 1
                }
            case 6:
                while let message = endpoint.takeMessage() {
                    require(message.body.count <= configuration.maximumMessageSize, "a message of \(message.body.count) bytes")
                    require(forged || sent.contains(message.body), "delivered a message the peer never sent: \(message.body.count) bytes")
                    if message.isRequest, endpoint.canSubmit {
                        _ = try? endpoint.submit(Array(message.body.prefix(40)), options: SendOptions(kind: .response(to: message.messageID)), now: now)
                    }
                }
                while endpoint.pollEvent() != nil {}
                while peer.pollEvent() != nil {}
                while peer.takeMessage() != nil {}
            default:
                let argument = Int(script.byte())
                if operation & 0x08 != 0 {
                    // An ATT MTU exchange on a live connection only ever raises the MTU.
                    packetSize = max(packetSize, 23 + 2 * argument)
                    endpoint.maximumPacketSizeChanged(packetSize, now: now)
                    peer.maximumPacketSizeChanged(packetSize, now: now)
                } else {
                    packetSize = 23 + 2 * argument
                    endpoint.linkDisconnected(now: now)
                    peer.linkDisconnected(now: now)
                    held.removeAll()
                    endpoint.linkConnected(maximumPacketSize: packetSize, now: now)
                    peer.linkConnected(maximumPacketSize: packetSize, now: now)
                }
            }
            checkBounds(endpoint)
        }
    }

    /// The receiver may admit one message beyond its limits: the next in order when the application has taken
    /// everything (PROTOCOL.md 3.6), so out-of-order completions and a message larger than the free room cannot
    /// deadlock it. So it holds at most one message and its stream beyond the configured limits.
    static func checkBounds(_ endpoint: TransportEndpoint) {
        let limit = configuration.maximumBufferedBytes + configuration.maximumMessageSize + 4
        require(endpoint.receiverBufferedBytes >= 0 && endpoint.receiverBufferedBytes <= limit,
                "the receiver holds \(endpoint.receiverBufferedBytes) bytes, limit \(limit): \(endpoint.debugSummary)")
        require(endpoint.availableMessages <= configuration.maximumMessagesInProgress + 1,
                "\(endpoint.availableMessages) messages waiting")
        require(endpoint.senderBufferedBytes <= configuration.maximumQueuedMessages * configuration.maximumMessageSize,
                "the sender holds \(endpoint.senderBufferedBytes) bytes")
    }
}

@main
enum TransportFuzzerMain {
    static func main() {
        FuzzDriver.run(name: "TransportFuzzer", seeds: seeds, target: TransportFuzzTarget.run)
    }

    /// PROTOCOL.md 3.4 control vectors and 3.3 data vectors, then scripts of a whole exchange.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let controls = [
            "c0 11 01 07 05 01 05 e7 87", "c0 11 0c 07 ac 02 64 ff 01 9b 68", "c0 11 02 01 49 aa", "c0 11 03 02 b2 ca",
            "c0 11 04 03 e3 6c", "c0 11 05 c8 01 07 80", "c0 11 06 09 7f e7", "c0 11 07 04 83 aa", "c0 11 08 70 e4",
            "c0 11 09 05 9b b7", "c0 11 0a 05 58 e4", "c0 11 0b 06 02 77 06",
            "c0 11 0d ef cd ab 89 67 45 23 01 01 a0 aa", "c0 11 0e ef cd ab 89 67 45 23 01 f6 91",
        ].map(hex)
        let data = [
            "c0 10 04 01 02 68 69 ac 2a 93 d8 ab da",
            "80 10 04 01 14 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 61 6b", "41 6e 6f 70 71 72 73 74 e5 6a 59 1a",
            "80 10 24 01 14 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 1c 10", "41 6e 6f 70 71 72 73 74 e5 6a 59 1a ec b1",
        ].map(hex)
        var seeds: [(name: String, bytes: [UInt8])] = controls.enumerated().map { ("control-\($0.offset)", $0.element) }
        // Raw: the vectors as packets from the peer, after a hello.
        seeds.append(("raw", (controls[12...] + data).flatMap { [0, UInt8($0.count)] + $0 } + [3, 3, 6]))
        // An honest exchange: hello/welcome, a message, a request, acknowledgements, timeouts.
        let exchange: [UInt8] = [1, 3, 5, 4, 13, 20, 1, 1, 1, 1, 3, 4, 3, 1, 1, 3, 6, 1, 3, 4, 9, 3, 6, 3, 1, 3, 6]
        seeds.append(("exchange", exchange + exchange))
        // Loss, duplicates, reordering, a flipped byte and a reconnect at a smaller packet size.
        seeds.append(("faults", [1, 3, 5, 40, 1, 9, 1, 17, 1, 25, 1, 2, 33, 4, 3, 4, 200, 3, 1, 2, 7, 0, 1, 3, 1, 3,
                                 4, 100, 3, 1, 1, 1, 15, 60, 1, 1, 3, 6, 4, 250, 3, 1, 3, 6]))
        return seeds
    }
}
