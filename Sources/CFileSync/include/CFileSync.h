#ifndef CFILESYNC_H
#define CFILESYNC_H

/// syncfs(2) on the file system holding `descriptor`: Glibc declares it only under _GNU_SOURCE, which Swift's
/// Glibc module does not define. Returns 0, or -1 with errno set.
int msgpipe_syncfs(int descriptor);

#endif
