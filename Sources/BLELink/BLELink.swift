// BLELink: the Linux binding of msgpipe's GATT layer: the SEQPACKET ATT bearer, kernel L2CAP sockets and the
// mgmt interface (advertising, scanning, adapters). The only module that calls the OS or links libbluetooth.
