#!/usr/bin/env bash
# Sets up a Debian box for msgpipe, as root or as a user with sudo.
#   Scripts/setup.sh          the build's Debian packages, then a release build of msgpipe installed as
#                             $PREFIX/bin/msgpipe (PREFIX: /usr/local), so `msgpipe` is on PATH
#   Scripts/setup.sh --test   the packages Scripts/test.sh needs as well; builds and installs nothing
# It needs Swift (`swift` on PATH) and exits non-zero naming what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

build_packages=(libbluetooth-dev zlib1g-dev libsystemd-dev dbus-daemon pkg-config libpaho-mqtt-dev mosquitto
  mosquitto-clients systemd)
test_packages=(openssl procps dpkg-dev lintian man-db)

# as_root CMD...: CMD as root, through sudo unless this is root already (a container or CI has no sudo).
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo > /dev/null; then sudo "$@"
  else echo "setup.sh: $1 needs root: run this as root, or install sudo" >&2; exit 1
  fi
}

command -v swift > /dev/null || { echo "setup.sh: swift is not on PATH: install Swift 6.3.1 from swift.org first" >&2; exit 1; }

packages=("${build_packages[@]}")
[ "${1:-}" = --test ] && packages+=("${test_packages[@]}")
export DEBIAN_FRONTEND=noninteractive
as_root apt-get update -q
as_root apt-get install -y -q --no-install-recommends "${packages[@]}"
[ "${1:-}" = --test ] && exit 0

# MSGPIPE_COMMIT: `msgpipe --version` names the commit it was built from (as the Debian package's does).
export MSGPIPE_COMMIT=${MSGPIPE_COMMIT:-$(git describe --always --dirty 2>/dev/null || echo unknown)}
swift build -c release --product msgpipe
prefix=${PREFIX:-/usr/local}
as_root install -D -m 755 "$(swift build -c release --show-bin-path)/msgpipe" "$prefix/bin/msgpipe"
echo "setup.sh: installed $prefix/bin/msgpipe" >&2
