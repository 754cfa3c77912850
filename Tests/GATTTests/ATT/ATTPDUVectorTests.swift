@testable import GATT
import Testing
import TestSupport

/// One PDU pinned to its bytes (Bluetooth Core Vol 3 Part F, 3.4). `validPrefixes` lists the shorter
/// lengths that are themselves well-formed (a value may be empty); every other truncation must be rejected.
struct PDUVector: Sendable, CustomTestStringConvertible {
    let name: String
    let hex: String
    let pdu: ATTPDU
    var validPrefixes: Set<Int> = []
    var testDescription: String { name }
}

let service128 = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!
let service128Bytes = "9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 01 00 40 6e"

let pduVectors: [PDUVector] = [
    PDUVector(name: "Error Response", hex: "01 0a 03 00 02",
              pdu: .errorResponse(.init(requestOpcode: 0x0A, handle: 3, error: .readNotPermitted))),
    PDUVector(name: "Exchange MTU Request", hex: "02 f7 00", pdu: .exchangeMTURequest(.init(clientMTU: 247))),
    PDUVector(name: "Exchange MTU Response", hex: "03 05 02", pdu: .exchangeMTUResponse(.init(serverMTU: 517))),
    PDUVector(name: "Find Information Request", hex: "04 01 00 ff ff",
              pdu: .findInformationRequest(.init(range: .all))),
    PDUVector(name: "Find Information Response 16-bit", hex: "05 01 04 00 02 29 05 00 01 29",
              pdu: .findInformationResponse(.init(entries: [
                  .init(handle: 4, type: .clientCharacteristicConfiguration),
                  .init(handle: 5, type: .characteristicUserDescription),
              ])), validPrefixes: [6]),
    PDUVector(name: "Find Information Response 128-bit", hex: "05 02 03 00 " + service128Bytes,
              pdu: .findInformationResponse(.init(entries: [.init(handle: 3, type: service128)]))),
    PDUVector(name: "Find By Type Value Request", hex: "06 01 00 ff ff 00 28 0f 18",
              pdu: .findByTypeValueRequest(.init(range: .all, type: 0x2800, value: [0x0F, 0x18])),
              validPrefixes: [7, 8]),
    PDUVector(name: "Find By Type Value Response", hex: "07 01 00 05 00 10 00 12 00",
              pdu: .findByTypeValueResponse(.init(handles: [
                  .init(start: 1, end: 5), .init(start: 0x10, end: 0x12),
              ])), validPrefixes: [5]),
    PDUVector(name: "Read By Type Request 16-bit", hex: "08 01 00 05 00 03 28",
              pdu: .readByTypeRequest(.init(range: .init(start: 1, end: 5), type: .characteristic))),
    PDUVector(name: "Read By Type Request 128-bit", hex: "08 01 00 05 00 " + service128Bytes,
              pdu: .readByTypeRequest(.init(range: .init(start: 1, end: 5), type: service128)),
              validPrefixes: [7]),
    PDUVector(name: "Read By Type Response", hex: "09 07 02 00 1a 03 00 19 2a 05 00 02 06 00 00 2a",
              pdu: .readByTypeResponse(.init(entries: [
                  .init(handle: 2, value: [0x1A, 0x03, 0x00, 0x19, 0x2A]),
                  .init(handle: 5, value: [0x02, 0x06, 0x00, 0x00, 0x2A]),
              ])), validPrefixes: [9]),
    PDUVector(name: "Read Request", hex: "0a 03 00", pdu: .readRequest(.init(handle: 3))),
    PDUVector(name: "Read Response", hex: "0b 68 69", pdu: .readResponse(.init(value: Array("hi".utf8))),
              validPrefixes: [1, 2]),
    PDUVector(name: "Read Blob Request", hex: "0c 03 00 16 00", pdu: .readBlobRequest(.init(handle: 3, offset: 22))),
    PDUVector(name: "Read Blob Response", hex: "0d 01 02", pdu: .readBlobResponse(.init(value: [1, 2])),
              validPrefixes: [1, 2]),
    PDUVector(name: "Read Multiple Request", hex: "0e 03 00 07 00 09 00",
              pdu: .readMultipleRequest(.init(handles: [3, 7, 9])), validPrefixes: [5]),
    PDUVector(name: "Read Multiple Response", hex: "0f 01 02 03", pdu: .readMultipleResponse(.init(value: [1, 2, 3])),
              validPrefixes: [1, 2, 3]),
    PDUVector(name: "Read By Group Type Request", hex: "10 01 00 ff ff 00 28",
              pdu: .readByGroupTypeRequest(.init(range: .all, type: .primaryService))),
    PDUVector(name: "Read By Group Type Response 16-bit", hex: "11 06 01 00 05 00 0f 18 06 00 09 00 0a 18",
              pdu: .readByGroupTypeResponse(.init(entries: [
                  .init(handles: .init(start: 1, end: 5), value: [0x0F, 0x18]),
                  .init(handles: .init(start: 6, end: 9), value: [0x0A, 0x18]),
              ])), validPrefixes: [8]),
    PDUVector(name: "Read By Group Type Response 128-bit", hex: "11 14 01 00 08 00 " + service128Bytes,
              pdu: .readByGroupTypeResponse(.init(entries: [
                  .init(handles: .init(start: 1, end: 8), value: bytes(service128Bytes)),
              ]))),
    PDUVector(name: "Write Request", hex: "12 04 00 01 00",
              pdu: .writeRequest(.init(handle: 4, value: [1, 0])), validPrefixes: [3, 4]),
    PDUVector(name: "Write Response", hex: "13", pdu: .writeResponse(.init())),
    PDUVector(name: "Write Command", hex: "52 06 00 aa bb",
              pdu: .writeCommand(.init(handle: 6, value: [0xAA, 0xBB])), validPrefixes: [3, 4]),
    PDUVector(name: "Prepare Write Request", hex: "16 06 00 12 00 aa",
              pdu: .prepareWriteRequest(.init(handle: 6, offset: 18, value: [0xAA])), validPrefixes: [5]),
    PDUVector(name: "Prepare Write Response", hex: "17 06 00 12 00 aa",
              pdu: .prepareWriteResponse(.init(handle: 6, offset: 18, value: [0xAA])), validPrefixes: [5]),
    PDUVector(name: "Execute Write Request", hex: "18 01", pdu: .executeWriteRequest(.init(flags: 1))),
    PDUVector(name: "Execute Write Response", hex: "19", pdu: .executeWriteResponse(.init())),
    PDUVector(name: "Handle Value Notification", hex: "1b 03 00 68 69",
              pdu: .handleValueNotification(.init(handle: 3, value: Array("hi".utf8))), validPrefixes: [3, 4]),
    PDUVector(name: "Handle Value Indication", hex: "1d 03 00 01",
              pdu: .handleValueIndication(.init(handle: 3, value: [1])), validPrefixes: [3]),
    PDUVector(name: "Handle Value Confirmation", hex: "1e", pdu: .handleValueConfirmation(.init())),
]

@Suite struct ATTPDUVectorTests {
    @Test(arguments: pduVectors) func decodesFromSpecBytes(_ vector: PDUVector) throws {
        #expect(try ATTPDU(decoding: bytes(vector.hex)[...]) == vector.pdu)
    }

    @Test(arguments: pduVectors) func encodesToSpecBytes(_ vector: PDUVector) {
        var out: [UInt8] = []
        vector.pdu.encode(into: &out)
        #expect(out == bytes(vector.hex))
        #expect(vector.pdu.opcode == bytes(vector.hex)[0])
    }

    @Test(arguments: pduVectors) func rejectsEveryTruncation(_ vector: PDUVector) {
        let full = bytes(vector.hex)
        for length in 0..<full.count where !vector.validPrefixes.contains(length) {
            #expect(throws: ATTDecodeError.self, "prefix of \(length) bytes") {
                try ATTPDU(decoding: full[..<length])
            }
        }
    }

    @Test(arguments: pduVectors) func decodesFromAnUnalignedSlice(_ vector: PDUVector) throws {
        let padded = [0xEE, 0xEE] + bytes(vector.hex) + [0xEE]
        #expect(try ATTPDU(decoding: padded[2..<padded.count - 1]) == vector.pdu)
    }

    @Test func rejectsTrailingBytesOnFixedLayouts() {
        for hex in ["01 0a 03 00 02 00", "02 f7 00 00", "0a 03 00 00", "0c 03 00 16 00 00", "13 00", "18 01 00", "1e 00"] {
            #expect(throws: ATTDecodeError.self, "\(hex)") { try ATTPDU(decoding: bytes(hex)[...]) }
        }
    }

    @Test func rejectsListsThatDoNotAlign() {
        for hex in ["05 01 04 00 02 29 05", "05 03 04 00 02 29", "07 01 00 05 00 10", "09 07 02 00 1a 03 00 19 2a 05",
                    "09 01 02", "11 06 01 00 05 00 0f 18 06", "11 03 01 00 05", "0e 03 00 07", "08 01 00 05 00 03"] {
            #expect(throws: ATTDecodeError.self, "\(hex)") { try ATTPDU(decoding: bytes(hex)[...]) }
        }
    }

    @Test func rejectsUnknownOpcodesAndEmptyInput() {
        #expect(throws: ATTDecodeError.unknownOpcode(0x20)) { try ATTPDU(decoding: [0x20, 0x01][...]) }
        #expect(throws: ATTDecodeError.empty) { try ATTPDU(decoding: [][...]) }
        #expect(throws: ATTDecodeError.wrongOpcode(expected: 0x0A, found: 0x0C)) {
            try ATTReadRequest(decoding: [0x0C, 0x03, 0x00][...])
        }
    }
}
