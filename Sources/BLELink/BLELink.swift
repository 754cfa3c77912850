// BLELink: the kernel backend: kernel L2CAP sockets and the mgmt interface (advertising, scanning, adapters,
// bonds, connection parameters), on BLESocket's bearer and stream link. The only module that links
// libbluetooth; no D-Bus here (SDBus), and nothing bluetoothd's backend needs (BLESocket, BluetoothCore).

// The Bluetooth values BLELink's API speaks in (addresses, peers, PHYs, security levels, the reconnect
// policy, scan results and filters, adapter selectors) live in the pure BluetoothCore, the socket base in
// BLESocket; `import BLELink` brings both as before.
@_exported public import BLESocket
@_exported public import BluetoothCore
