#ifndef CBUILDINFO_H
#define CBUILDINFO_H

/// The commit msgpipe was built from: MSGPIPE_COMMIT in the build's environment (Scripts/package.sh sets it
/// from `git describe`); "unknown" for a plain `swift build`, which never runs git.
const char *mp_build_commit(void);

#endif
