// BlueZLink: the bluetoothd backend over SDBus: the peripheral (exported GATT application and advertisement),
// the central, discovery, and the links over the descriptors bluetoothd hands out (`AcquiredLink`). It uses
// BLELink only for the socket base (`BearerCore`) and the scan and adapter values both backends share.
