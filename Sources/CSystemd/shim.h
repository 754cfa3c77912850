#ifndef MSGPIPE_CSYSTEMD_SHIM_H
#define MSGPIPE_CSYSTEMD_SHIM_H
/* libsystemd's sd-bus (LGPL-2.1-or-later, Debian's libsystemd-dev): only BLELink links this. */
#include <systemd/sd-bus.h>
#endif
