// BLELink: the Linux binding of msgpipe's GATT layer: the SEQPACKET ATT bearer, kernel L2CAP sockets and the
// mgmt interface (advertising, scanning, adapters). The only module that calls the OS or links libbluetooth.

// The Bluetooth values BLELink's API speaks in (addresses, peers, PHYs, security levels, the reconnect
// policy) live in the pure BluetoothCore; `import BLELink` brings them as before.
@_exported public import BluetoothCore
