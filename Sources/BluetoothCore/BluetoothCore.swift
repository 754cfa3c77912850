// BluetoothCore: the Bluetooth values every backend and the connection library speak in (addresses and
// peers, the LE PHYs of a link, the link security asked for, the one reconnect policy, transient errors), and
// what both backends' scans and connects share (scan results and filters, adapter selectors, the connect queue).
// Pure Swift: no Glibc, no Foundation, no libbluetooth; the OS code that reads or applies them is BLESocket's
// and the backends'.
