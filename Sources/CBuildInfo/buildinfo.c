#include "CBuildInfo.h"

#ifndef MSGPIPE_COMMIT
#define MSGPIPE_COMMIT "unknown"
#endif

const char *mp_build_commit(void) { return MSGPIPE_COMMIT; }
