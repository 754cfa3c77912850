// BluetoothCore: the Bluetooth values every backend and the connection library speak in (addresses and
// peers, the LE PHYs of a link, the link security asked for, the one reconnect policy, transient errors).
// Pure Swift: no Glibc, no Foundation, no libbluetooth; the OS code that reads or applies them is BLELink's.
