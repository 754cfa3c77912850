// BlueZLink: the bluetoothd backend over SDBus: the peripheral (exported GATT application and advertisement),
// the central, discovery, and the links over the descriptors bluetoothd hands out (`AcquiredLink`). It runs on
// BLESocket's socket base (`BearerCore`) and speaks BluetoothCore's values (scan results, adapters, the
// connect queue) as the kernel backend does; it imports nothing of the kernel backend (BLELink).
