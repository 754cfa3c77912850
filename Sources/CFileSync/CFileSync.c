#define _GNU_SOURCE
#include <unistd.h>
#include "CFileSync.h"

int msgpipe_syncfs(int descriptor) { return syncfs(descriptor); }
