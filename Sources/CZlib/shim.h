#ifndef MSGPIPE_CZLIB_SHIM_H
#define MSGPIPE_CZLIB_SHIM_H
#include <zlib.h>
#endif
