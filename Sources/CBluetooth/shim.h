#ifndef MSGPIPE_CBLUETOOTH_SHIM_H
#define MSGPIPE_CBLUETOOTH_SHIM_H
/* BlueZ's libbluetooth (GPL-2.0-or-later): only BLELink and the CLI link this. */
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/l2cap.h>
#endif
