// SDBus: D-Bus over sd-bus (libsystemd): a connection with its own thread, method calls, signals and match
// rules, exported objects, and message coding bounded by `DBusLimits`. It knows no bus API: bluetoothd's lives in
// BlueZLink. The only module that links libsystemd.
