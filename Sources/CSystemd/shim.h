#ifndef MSGPIPE_CSYSTEMD_SHIM_H
#define MSGPIPE_CSYSTEMD_SHIM_H
/* libsystemd (LGPL-2.1-or-later, Debian's libsystemd-dev): sd-bus for BLELink, sd_notify for the CLI. */
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#endif
