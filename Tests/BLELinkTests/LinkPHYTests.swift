import BLELink
import Glibc
import Testing

/// ``LinkPHY``: the kernel's BT_PHY bit mask (include/net/bluetooth/bluetooth.h) as the PHY each way.
@Suite struct LinkPHYTests {
    @Test func theBitsOfEachDirectionNameItsFastestPHY() {
        #expect(LinkPHY(bits: 0x0200 | 0x0400) == LinkPHY(transmit: .le1M, receive: .le1M))
        #expect(LinkPHY(bits: 0x0800 | 0x1000)?.description == "2m")
        #expect(LinkPHY(bits: 0x0800 | 0x0400)?.description == "tx 2m / rx 1m")
        #expect(LinkPHY(bits: 0x2000 | 0x4000) == LinkPHY(transmit: .coded, receive: .coded))
        #expect(LinkPHY(bits: 0x0200 | 0x0800 | 0x0400) == LinkPHY(transmit: .le2M, receive: .le1M))
    }

    @Test func noLEPHYForADirectionIsNoAnswer() {
        #expect(LinkPHY(bits: 0) == nil)
        #expect(LinkPHY(bits: 0x0001 | 0x0008) == nil, "BR/EDR only")
        #expect(LinkPHY(bits: 0x0200) == nil, "transmit only")
    }

    @Test func aSocketThatIsNotBluetoothHasNoPHY() {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        defer { for fd in fds { close(fd) } }
        #expect(LinkPHY(socket: fds[0]) == nil)
        #expect(LinkPHY(socket: -1) == nil)
    }
}
