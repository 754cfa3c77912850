// BLELink: the socket base and the kernel backend: the SEQPACKET ATT bearer and stream link (`BearerCore`, which
// BlueZLink's acquired links run on too), kernel L2CAP sockets and the mgmt interface (advertising, scanning,
// adapters, bonds, connection parameters). The only module that links libbluetooth; no D-Bus here (SDBus).

// The Bluetooth values BLELink's API speaks in (addresses, peers, PHYs, security levels, the reconnect
// policy) live in the pure BluetoothCore; `import BLELink` brings them as before.
@_exported public import BluetoothCore
