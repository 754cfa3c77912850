import Testing
@testable import BLELink

/// Byte vectors for the pairing and bonding commands and events (BlueZ doc/mgmt-api.txt): encode and decode,
/// and every truncation (and a trailing byte) rejected with a typed error.
struct KernelBondingCodecTests {
    /// C0:11:22:33:44:55, LE random (static): least significant byte first, then the type.
    static let peer = BluetoothPeer(address: BluetoothAddress("C0:11:22:33:44:55")!, type: .leRandom)
    static let peerBytes: [UInt8] = [0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x02]
    static let keyValue: [UInt8] = Array(0x00...0x0F)
    static let ltk = LongTermKey(
        peer: peer, keyType: .unauthenticatedP256, central: false, encryptionSize: 16, diversifier: 0x1234,
        randomNumber: 0x0102_0304_0506_0708, value: keyValue)
    static let ltkBytes: [UInt8] = peerBytes + [0x02, 0x00, 0x10, 0x34, 0x12,
                                                0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01] + keyValue
    static let irk = IdentityResolvingKey(peer: peer, value: keyValue)

    /// Every prefix of `bytes` and `bytes` plus one byte must throw a BluetoothError.
    func expectTruncationsAndTrailingBytesThrow(
        _ bytes: [UInt8], _ decode: (ArraySlice<UInt8>) throws(BluetoothError) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for end in 0..<bytes.count {
            #expect(throws: BluetoothError.self, "prefix of \(end) bytes", sourceLocation: sourceLocation) {
                try decode(bytes[..<end])
            }
        }
        #expect(throws: BluetoothError.self, "one trailing byte", sourceLocation: sourceLocation) {
            try decode((bytes + [0])[...])
        }
    }

    // MARK: Commands

    @Test func setBondableAndIOCapabilityEncodeToSpecBytes() throws {
        #expect(SetBondable(true).command(0).encoded() == [0x09, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01])
        #expect(SetBondable(false).command(2).encoded() == [0x09, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00])
        #expect(SetIOCapability(.noInputNoOutput).command(1).encoded() == [0x18, 0x00, 0x01, 0x00, 0x01, 0x00, 0x03])
        #expect(try SetBondable(decoding: [0x01][...]) == SetBondable(true))
        #expect(try SetIOCapability(decoding: [0x04][...]) == SetIOCapability(.keyboardDisplay))
        #expect(throws: BluetoothError.self) { try SetBondable(decoding: [0x02][...]) }
        #expect(throws: BluetoothError.self) { try SetIOCapability(decoding: [0x05][...]) }
        expectTruncationsAndTrailingBytesThrow([0x01]) { (bytes) throws(BluetoothError) in _ = try SetBondable(decoding: bytes) }
        expectTruncationsAndTrailingBytesThrow([0x03]) { (bytes) throws(BluetoothError) in _ = try SetIOCapability(decoding: bytes) }
        #expect(SetSecureConnections(mode: 1).command(0).encoded() == [0x2D, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01])
        #expect(try SetSecureConnections(decoding: [0x02][...]) == SetSecureConnections(mode: 2))
        #expect(throws: BluetoothError.self) { try SetSecureConnections(decoding: [0x03][...]) }
        expectTruncationsAndTrailingBytesThrow([0x01]) { (bytes) throws(BluetoothError) in
            _ = try SetSecureConnections(decoding: bytes)
        }
    }

    @Test func loadLongTermKeysCarriesCountAndKeys() throws {
        let command = LoadLongTermKeys(keys: [Self.ltk]).command(0)
        let packet: [UInt8] = [0x13, 0x00, 0x00, 0x00, 0x26, 0x00, 0x01, 0x00] + Self.ltkBytes
        #expect(command.encoded() == packet)
        #expect(try LoadLongTermKeys(decoding: command.parameters[...]) == LoadLongTermKeys(keys: [Self.ltk]))
        #expect(LoadLongTermKeys(keys: []).command(0).encoded() == [0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00])
        expectTruncationsAndTrailingBytesThrow(command.parameters) { (bytes) throws(BluetoothError) in
            _ = try LoadLongTermKeys(decoding: bytes)
        }
    }

    @Test func loadIdentityResolvingKeysCarriesCountAndKeys() throws {
        let command = LoadIdentityResolvingKeys(keys: [Self.irk]).command(1)
        #expect(command.encoded() == [0x30, 0x00, 0x01, 0x00, 0x19, 0x00, 0x01, 0x00] + Self.peerBytes + Self.keyValue)
        #expect(try LoadIdentityResolvingKeys(decoding: command.parameters[...]).keys == [Self.irk])
        expectTruncationsAndTrailingBytesThrow(command.parameters) { (bytes) throws(BluetoothError) in
            _ = try LoadIdentityResolvingKeys(decoding: bytes)
        }
    }

    @Test func unpairDeviceCarriesPeerAndDisconnect() throws {
        let command = UnpairDevice(peer: Self.peer).command(0)
        #expect(command.encoded() == [0x1B, 0x00, 0x00, 0x00, 0x08, 0x00] + Self.peerBytes + [0x01])
        #expect(try UnpairDevice(decoding: command.parameters[...]) == UnpairDevice(peer: Self.peer, disconnect: true))
        expectTruncationsAndTrailingBytesThrow(command.parameters) { (bytes) throws(BluetoothError) in
            _ = try UnpairDevice(decoding: bytes)
        }
    }

    @Test func userConfirmationReplyAndNegativeReplyEncodeToSpecBytes() throws {
        let accept = UserConfirmationReply(peer: Self.peer, accept: true).command(0)
        let reject = UserConfirmationReply(peer: Self.peer, accept: false).command(0)
        #expect(accept.encoded() == [0x1C, 0x00, 0x00, 0x00, 0x07, 0x00] + Self.peerBytes)
        #expect(reject.encoded() == [0x1D, 0x00, 0x00, 0x00, 0x07, 0x00] + Self.peerBytes)
        #expect(try UserConfirmationReply(opcode: 0x1D, decoding: reject.parameters[...]).accept == false)
        #expect(throws: BluetoothError.self) { try UserConfirmationReply(opcode: 0x1E, decoding: reject.parameters[...]) }
        expectTruncationsAndTrailingBytesThrow(accept.parameters) { (bytes) throws(BluetoothError) in
            _ = try UserConfirmationReply(opcode: 0x1C, decoding: bytes)
        }
    }

    @Test func keysWithoutAnIdentityAddressAreNotLoadable() {
        var key = Self.ltk
        #expect(key.isLoadable)
        key.peer = BluetoothPeer(address: BluetoothAddress("5A:0B:1C:2D:3E:4F")!, type: .leRandom)  // resolvable
        #expect(!key.isLoadable)
        key.peer = BluetoothPeer(address: BluetoothAddress("5A:0B:1C:2D:3E:4F")!, type: .lePublic)
        #expect(key.isLoadable)
    }

    // MARK: Events

    @Test func newLongTermKeyDecodesStoreHintAndKey() throws {
        let packet: [UInt8] = [0x0A, 0x00, 0x00, 0x00, 0x25, 0x00, 0x01] + Self.ltkBytes
        let event = try ManagementEvent(decoding: packet[...])
        #expect(event.kind == .newLongTermKey(NewLongTermKey(storeHint: true, key: Self.ltk)))
        #expect(NewLongTermKey(storeHint: true, key: Self.ltk).encodedEvent(controllerIndex: 0) == packet)
        expectTruncationsAndTrailingBytesThrow(Array(packet[6...])) { (bytes) throws(BluetoothError) in
            _ = try NewLongTermKey(decoding: bytes)
        }
    }

    @Test func newIdentityResolvingKeyDecodesTheResolvedAddressAndIdentity() throws {
        let rpa: [UInt8] = [0x4F, 0x3E, 0x2D, 0x1C, 0x0B, 0x5A]
        let packet: [UInt8] = [0x18, 0x00, 0x00, 0x00, 0x1E, 0x00, 0x01] + rpa + Self.peerBytes + Self.keyValue
        let expected = NewIdentityResolvingKey(
            storeHint: true, randomAddress: BluetoothAddress("5A:0B:1C:2D:3E:4F")!, key: Self.irk)
        #expect(try ManagementEvent(decoding: packet[...]).kind == .newIdentityResolvingKey(expected))
        #expect(expected.encodedEvent(controllerIndex: 0) == packet)
        expectTruncationsAndTrailingBytesThrow(Array(packet[6...])) { (bytes) throws(BluetoothError) in
            _ = try NewIdentityResolvingKey(decoding: bytes)
        }
    }

    @Test func newSignatureResolvingKeyDecodesTypeAndValue() throws {
        let packet: [UInt8] = [0x19, 0x00, 0x00, 0x00, 0x19, 0x00, 0x00] + Self.peerBytes + [0x01] + Self.keyValue
        let expected = NewSignatureResolvingKey(
            storeHint: false, key: SignatureResolvingKey(peer: Self.peer, keyType: 1, value: Self.keyValue))
        #expect(try ManagementEvent(decoding: packet[...]).kind == .newSignatureResolvingKey(expected))
        #expect(expected.encodedEvent(controllerIndex: 0) == packet)
        #expect(!expected.key.isLocal)
        expectTruncationsAndTrailingBytesThrow(Array(packet[6...])) { (bytes) throws(BluetoothError) in
            _ = try NewSignatureResolvingKey(decoding: bytes)
        }
    }

    @Test func userConfirmationRequestDecodesHintAndValue() throws {
        let packet: [UInt8] = [0x0F, 0x00, 0x01, 0x00, 0x0C, 0x00] + Self.peerBytes + [0x00, 0x3F, 0x42, 0x0F, 0x00]
        let expected = UserConfirmationRequest(peer: Self.peer, confirmHint: false, value: 999_999)
        let event = try ManagementEvent(decoding: packet[...])
        #expect(event.controllerIndex == 1)
        #expect(event.kind == .userConfirmationRequest(expected))
        #expect(expected.encodedEvent(controllerIndex: 1) == packet)
        expectTruncationsAndTrailingBytesThrow(Array(packet[6...])) { (bytes) throws(BluetoothError) in
            _ = try UserConfirmationRequest(decoding: bytes)
        }
    }

    @Test func authenticationFailedDecodesPeerAndStatus() throws {
        let packet: [UInt8] = [0x11, 0x00, 0x00, 0x00, 0x08, 0x00] + Self.peerBytes + [0x06]
        let expected = AuthenticationFailed(peer: Self.peer, status: 0x06)
        #expect(try ManagementEvent(decoding: packet[...]).kind == .authenticationFailed(expected))
        #expect(expected.encodedEvent(controllerIndex: 0) == packet)
        #expect(expected.statusDescription.contains("key missing"))
        expectTruncationsAndTrailingBytesThrow(Array(packet[6...])) { (bytes) throws(BluetoothError) in
            _ = try AuthenticationFailed(decoding: bytes)
        }
    }

    @Test func keysWithABREDRAddressTypeAreRejected() {
        var bytes = [0x01] + Self.ltkBytes
        bytes[7] = 0x00
        #expect(throws: BluetoothError.self) { try NewLongTermKey(decoding: bytes[...]) }
    }
}
