@testable import MsgPipe
@testable import MsgPipeCore
import Testing

/// A central counts once in ``PipeServer/connectedCentrals`` whether its data rides GATT, an L2CAP channel, or
/// both connections at once: they share its Bluetooth address, however a backend describes the peer.
@Suite struct PipeServerCentralsTests {
    @Test func aCentralsGATTConnectionAndItsChannelAreOneCentral() {
        let kernel = PipeServer.centralAddress("C0:11:22:33:44:55 (random)")
        #expect(kernel == "C0:11:22:33:44:55")
        #expect(PipeServer.centralAddress("c0:11:22:33:44:55") == kernel, "bluetoothd's form, any case")
        #expect(PipeServer.centralAddress("C0:11:22:33:44:56 (random)") != kernel)
    }

    @Test func aPeerWithoutAnAddressIsACentralOfItsOwn() {
        #expect(PipeServer.centralAddress("unix:/tmp/msgpipe.sock") == nil)
        #expect(PipeServer.centralAddress("") == nil)
        #expect(PipeServer.centralAddress("C0:11:22:33:44") == nil)
    }
}
