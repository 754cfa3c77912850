/// BLELink: ATT and GATT over a SEQPACKET bearer, and the Linux kernel binding (libbluetooth).
public enum BLELink {}
