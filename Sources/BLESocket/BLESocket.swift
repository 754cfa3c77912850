// BLESocket: the socket base both Linux backends run on, with no Bluetooth stack of its own: the SOCK_SEQPACKET
// ATT bearer and its poll thread (`BearerCore`), the stream link over one such socket, UNIX SEQPACKET sockets,
// a link's PHY read from `BT_PHY`, and `BlockingCall` (a blocking call on a thread of its own). Glibc only: no
// libbluetooth (BLELink's) and no D-Bus (SDBus's). BLELink re-exports it.
