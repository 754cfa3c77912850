/// Any ATT PDU this implementation speaks, decoded by its opcode.
public enum ATTPDU: Sendable, Equatable {
    case errorResponse(ATTErrorResponse)
    case exchangeMTURequest(ATTExchangeMTURequest)
    case exchangeMTUResponse(ATTExchangeMTUResponse)
    case findInformationRequest(ATTFindInformationRequest)
    case findInformationResponse(ATTFindInformationResponse)
    case findByTypeValueRequest(ATTFindByTypeValueRequest)
    case findByTypeValueResponse(ATTFindByTypeValueResponse)
    case readByTypeRequest(ATTReadByTypeRequest)
    case readByTypeResponse(ATTReadByTypeResponse)
    case readRequest(ATTReadRequest)
    case readResponse(ATTReadResponse)
    case readBlobRequest(ATTReadBlobRequest)
    case readBlobResponse(ATTReadBlobResponse)
    case readMultipleRequest(ATTReadMultipleRequest)
    case readMultipleResponse(ATTReadMultipleResponse)
    case readByGroupTypeRequest(ATTReadByGroupTypeRequest)
    case readByGroupTypeResponse(ATTReadByGroupTypeResponse)
    case writeRequest(ATTWriteRequest)
    case writeResponse(ATTWriteResponse)
    case writeCommand(ATTWriteCommand)
    case prepareWriteRequest(ATTPrepareWriteRequest)
    case prepareWriteResponse(ATTPrepareWriteResponse)
    case executeWriteRequest(ATTExecuteWriteRequest)
    case executeWriteResponse(ATTExecuteWriteResponse)
    case handleValueNotification(ATTHandleValueNotification)
    case handleValueIndication(ATTHandleValueIndication)
    case handleValueConfirmation(ATTHandleValueConfirmation)

    /// Decodes `pdu` by its first byte; throws ``ATTDecodeError/unknownOpcode(_:)`` for any other opcode.
    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        guard let opcode = pdu.first else { throw .empty }
        switch opcode {
        case ATTOpcode.errorResponse: self = .errorResponse(try .init(decoding: pdu))
        case ATTOpcode.exchangeMTURequest: self = .exchangeMTURequest(try .init(decoding: pdu))
        case ATTOpcode.exchangeMTUResponse: self = .exchangeMTUResponse(try .init(decoding: pdu))
        case ATTOpcode.findInformationRequest: self = .findInformationRequest(try .init(decoding: pdu))
        case ATTOpcode.findInformationResponse: self = .findInformationResponse(try .init(decoding: pdu))
        case ATTOpcode.findByTypeValueRequest: self = .findByTypeValueRequest(try .init(decoding: pdu))
        case ATTOpcode.findByTypeValueResponse: self = .findByTypeValueResponse(try .init(decoding: pdu))
        case ATTOpcode.readByTypeRequest: self = .readByTypeRequest(try .init(decoding: pdu))
        case ATTOpcode.readByTypeResponse: self = .readByTypeResponse(try .init(decoding: pdu))
        case ATTOpcode.readRequest: self = .readRequest(try .init(decoding: pdu))
        case ATTOpcode.readResponse: self = .readResponse(try .init(decoding: pdu))
        case ATTOpcode.readBlobRequest: self = .readBlobRequest(try .init(decoding: pdu))
        case ATTOpcode.readBlobResponse: self = .readBlobResponse(try .init(decoding: pdu))
        case ATTOpcode.readMultipleRequest: self = .readMultipleRequest(try .init(decoding: pdu))
        case ATTOpcode.readMultipleResponse: self = .readMultipleResponse(try .init(decoding: pdu))
        case ATTOpcode.readByGroupTypeRequest: self = .readByGroupTypeRequest(try .init(decoding: pdu))
        case ATTOpcode.readByGroupTypeResponse: self = .readByGroupTypeResponse(try .init(decoding: pdu))
        case ATTOpcode.writeRequest: self = .writeRequest(try .init(decoding: pdu))
        case ATTOpcode.writeResponse: self = .writeResponse(try .init(decoding: pdu))
        case ATTOpcode.writeCommand: self = .writeCommand(try .init(decoding: pdu))
        case ATTOpcode.prepareWriteRequest: self = .prepareWriteRequest(try .init(decoding: pdu))
        case ATTOpcode.prepareWriteResponse: self = .prepareWriteResponse(try .init(decoding: pdu))
        case ATTOpcode.executeWriteRequest: self = .executeWriteRequest(try .init(decoding: pdu))
        case ATTOpcode.executeWriteResponse: self = .executeWriteResponse(try .init(decoding: pdu))
        case ATTOpcode.handleValueNotification: self = .handleValueNotification(try .init(decoding: pdu))
        case ATTOpcode.handleValueIndication: self = .handleValueIndication(try .init(decoding: pdu))
        case ATTOpcode.handleValueConfirmation: self = .handleValueConfirmation(try .init(decoding: pdu))
        default: throw .unknownOpcode(opcode)
        }
    }

    /// The PDU inside, as its own type.
    public var payload: any ATTPDUCoding {
        switch self {
        case let .errorResponse(pdu): pdu
        case let .exchangeMTURequest(pdu): pdu
        case let .exchangeMTUResponse(pdu): pdu
        case let .findInformationRequest(pdu): pdu
        case let .findInformationResponse(pdu): pdu
        case let .findByTypeValueRequest(pdu): pdu
        case let .findByTypeValueResponse(pdu): pdu
        case let .readByTypeRequest(pdu): pdu
        case let .readByTypeResponse(pdu): pdu
        case let .readRequest(pdu): pdu
        case let .readResponse(pdu): pdu
        case let .readBlobRequest(pdu): pdu
        case let .readBlobResponse(pdu): pdu
        case let .readMultipleRequest(pdu): pdu
        case let .readMultipleResponse(pdu): pdu
        case let .readByGroupTypeRequest(pdu): pdu
        case let .readByGroupTypeResponse(pdu): pdu
        case let .writeRequest(pdu): pdu
        case let .writeResponse(pdu): pdu
        case let .writeCommand(pdu): pdu
        case let .prepareWriteRequest(pdu): pdu
        case let .prepareWriteResponse(pdu): pdu
        case let .executeWriteRequest(pdu): pdu
        case let .executeWriteResponse(pdu): pdu
        case let .handleValueNotification(pdu): pdu
        case let .handleValueIndication(pdu): pdu
        case let .handleValueConfirmation(pdu): pdu
        }
    }

    /// The PDU's opcode.
    public var opcode: UInt8 { type(of: payload).opcode }

    /// Appends the PDU's bytes, opcode first.
    public func encode(into out: inout [UInt8]) { payload.encode(into: &out) }
}
