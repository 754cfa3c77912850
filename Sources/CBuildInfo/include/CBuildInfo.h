#ifndef CBUILDINFO_H
#define CBUILDINFO_H

/// The commit msgpipe was built from, as the build passed it (`-Xcc -DMSGPIPE_COMMIT='"abc1234"'`, which
/// Scripts/package.sh does); "unknown" for a plain `swift build`, which never runs git.
const char *mp_build_commit(void);

#endif
