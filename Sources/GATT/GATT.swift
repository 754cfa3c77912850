// GATT: ATT PDUs, the GATT database, the server and client state machines, the msgpipe and NUS service
// profiles, and `GATTLink` (Transport's `Link` over GATT). Pure Swift over any ``ATTConnection``.
