import FuzzSupport
import GATT

/// One fuzz input, three targets:
///
/// 1. The ATT decoder: the whole input and every chunk are decoded as a PDU; what decodes must encode to
///    bytes that decode to the same PDU.
/// 2. The GATT server: the input is a script of chunks, each `[length < 0xF0][length bytes]` (a PDU from the
///    client) or `[0xF0 | action][argument]` (the application notifies, indicates, or time passes). Every
///    answer must be a well-formed PDU of the right kind within the MTU; commands, pushes and responses get
///    none; pushes the server accepts must fit the MTU.
/// 3. The info characteristic's value (a peer's): what decodes, PSM included, must encode to a value that
///    decodes to the same info. The PSM characteristic's value likewise: a PSM read from it is an LE PSM and
///    encodes to a value that reads as the same PSM.
///
/// A broken invariant traps, which libFuzzer reports as a crash with the input saved.
enum ATTFuzzTarget {
    static let txUUID = BluetoothUUID("4D500003-8C5D-4E2B-9F1A-6D7367706970")!

    static let database = GATTDatabase(services: [
        GATTService(uuid: .bit16(0x180F), characteristics: [
            GATTCharacteristic(uuid: .bit16(0x2A19), properties: [.read, .notify], permissions: [.read], value: [100]),
        ]),
        GATTService(uuid: BluetoothUUID("4D500001-8C5D-4E2B-9F1A-6D7367706970")!, characteristics: [
            GATTCharacteristic(uuid: BluetoothUUID("4D500002-8C5D-4E2B-9F1A-6D7367706970")!,
                               properties: [.write, .writeWithoutResponse], permissions: [.write], maximumLength: 64,
                               userDescription: "RX"),
            GATTCharacteristic(uuid: txUUID, properties: [.notify, .indicate], permissions: [], userDescription: "TX"),
            GATTCharacteristic(uuid: .bit16(0x2A00), properties: [.read, .write], permissions: [.read, .write],
                               value: Array(repeating: 0x41, count: 300),
                               descriptors: [GATTDescriptor(uuid: .bit16(0x2904), permissions: [.read], value: [1, 2, 3])]),
        ]),
    ])

    static let pushesAndResponses: Set<UInt8> = [0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19,
                                                 0x1B, 0x1D, 0x1E]

    static func run(_ input: [UInt8]) {
        checkDecoder(input[...])
        runServer(input)
        checkInfo(input)
    }

    static func checkInfo(_ value: [UInt8]) {
        if let psm = GATTServiceProfile.channelPSM(fromValue: value) {
            precondition((1...0xFF).contains(psm), "\(value) reads as PSM \(psm), which no LE channel has")
            precondition(GATTServiceProfile.channelPSM(fromValue: GATTServiceProfile.channelPSMValue(psm)) == psm)
        }
        guard let info = try? MsgPipeServiceInfo(decoding: value) else { return }
        precondition(info.psm != 0, "a PSM of 0 decodes as none")
        guard let again = try? MsgPipeServiceInfo(decoding: info.bytes) else {
            fatalError("\(info) encodes to \(info.bytes), which does not decode")
        }
        precondition(again == info, "\(info) encodes to \(info.bytes), which decodes to \(again)")
    }

    static func checkDecoder(_ bytes: ArraySlice<UInt8>) {
        guard let pdu = try? ATTPDU(decoding: bytes) else { return }
        var encoded: [UInt8] = []
        pdu.encode(into: &encoded)
        guard let again = try? ATTPDU(decoding: encoded[...]) else {
            fatalError("\(pdu) encodes to \(encoded), which does not decode")
        }
        precondition(again == pdu, "\(pdu) encodes to \(encoded), which decodes to \(again)")
    }

    static func runServer(_ input: [UInt8]) {
        var server = GATTServer(database: database, configuration: .init(maximumMTU: 517, prepareQueueLimit: 8))
        guard let tx = server.database.valueHandle(of: txUUID) else { fatalError("the database has no TX") }
        var now = Duration.zero
        var index = input.startIndex
        var out: [UInt8] = []
        while index < input.endIndex {
            let head = input[index]
            index += 1
            if head >= 0xF0 {
                let argument = index < input.endIndex ? Int(input[index]) : 0
                index += 1
                switch head & 0x0F {
                case 0:
                    let value = [UInt8](repeating: 0xEE, count: argument * 3)
                    if (try? server.notification(valueHandle: tx, value: value[...], into: &out)) != nil {
                        precondition(out.count <= server.mtu && value.count <= 512, "notification of \(out.count) bytes")
                        checkDecoder(out[...])
                    }
                case 1:
                    let value = [UInt8](repeating: 0xDD, count: argument * 3)
                    if (try? server.indication(valueHandle: tx, value: value[...], now: now, into: &out)) != nil {
                        precondition(out.count <= server.mtu && server.isIndicationOutstanding, "indication")
                    }
                default:
                    now += .seconds(argument)
                    _ = server.handleTimeout(now: now)
                }
                continue
            }
            let end = min(input.endIndex, index + Int(head))
            let pdu = input[index..<end]
            index = end
            checkDecoder(pdu)
            let reaction = server.receive(pdu, now: now)
            guard let response = reaction.response else {
                if let opcode = pdu.first, !server.isFailed {
                    precondition(ATTOpcode.isCommand(opcode) || pushesAndResponses.contains(opcode),
                                 "request 0x\(opcode) got no answer")
                }
                continue
            }
            server.responseSent()
            guard let opcode = pdu.first else { fatalError("an empty PDU was answered") }
            precondition(response.count <= server.mtu, "answer of \(response.count) bytes at MTU \(server.mtu)")
            precondition(response[0] == opcode &+ 1
                         || (response[0] == ATTOpcode.errorResponse && response.count == 5 && response[1] == opcode),
                         "request \(Array(pdu)) answered with \(response)")
            guard (try? ATTPDU(decoding: response[...])) != nil else {
                fatalError("request \(Array(pdu)) answered with malformed \(response)")
            }
        }
    }
}

@main
enum ATTFuzzerMain {
    static func main() {
        FuzzDriver.run(name: "ATTFuzzer", seeds: seeds, target: ATTFuzzTarget.run)
    }

    /// An MTU exchange, discovery, a subscription, a long read, prepared writes, a notification, an indication;
    /// an info value with a channel's PSM.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        [
            ("session", hex("03 02 05 02 07 10 01 00 ff ff 00 28 05 12 0b 00 03 00 f0 20 f1 02 01 1e")),
            ("writes", hex("05 0c 0f 00 10 00 06 16 0f 00 00 00 61 02 18 01 05 04 01 00 ff ff")),
            ("info-psm", hex("02 01 09 00 00 00 10 00 f7 00 81 00")),
        ]
    }
}
