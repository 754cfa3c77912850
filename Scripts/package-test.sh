#!/usr/bin/env bash
# The Debian package end to end, on this machine: builds it (Scripts/package.sh), runs lintian (fails on an
# error), installs it with apt, checks the installed command, man pages, completions, units and libraries, moves
# two messages over a UNIX socket with it, checks that a unit without its settings stops at once naming them,
# then purges it and checks that nothing is left behind. Needs root (or sudo); installs lintian, man-db and
# dpkg-dev when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
fail() { echo "package-test: $*" >&2; exit 1; }

# What the package's checks need, installed on first use (CI's .ci/run installs them up front).
missing=()
for tool in lintian:lintian man:man-db dpkg-shlibdeps:dpkg-dev systemd-analyze:systemd; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; fi

if dpkg -s msgpipe >/dev/null 2>&1; then $SUDO apt-get purge -y -q msgpipe >/dev/null; fi
deb=$(Scripts/package.sh .package)
echo "== $(basename "$deb"): $(du -k "$deb" | cut -f1) KiB"

lintian --fail-on error --tag-display-limit 0 "$deb" || fail "lintian reported errors (above)"

$SUDO apt-get install -y -q "$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")" >/dev/null
files=$(dpkg -L msgpipe)
trap '$SUDO apt-get purge -y -q msgpipe >/dev/null 2>&1 || true' EXIT

# The packaged binary by its path: a msgpipe built from source (Scripts/setup.sh) may come first on PATH.
msgpipe=/usr/bin/msgpipe
version=$("$msgpipe" --version)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+\ \(.+\)$ ]] || fail "msgpipe --version printed '$version'"
echo "== msgpipe --version: $version"
[[ $version != *"(unknown)" ]] || fail "the packaged binary does not know its commit"
man -w msgpipe-send >/dev/null || fail "no man page for msgpipe-send"
man -w msgpipe >/dev/null || fail "no man page for msgpipe"
for completion in /usr/share/bash-completion/completions/msgpipe /usr/share/zsh/vendor-completions/_msgpipe \
  /usr/share/fish/vendor_completions.d/msgpipe.fish; do
  [ -s "$completion" ] || fail "no completion file $completion"
done
units=(/lib/systemd/system/msgpipe-gateway.service /lib/systemd/system/msgpipe-serve.service)
systemd-analyze verify --man=no "${units[@]}" || fail "systemd-analyze verify failed on the installed units"
if ldd /usr/bin/msgpipe | grep -E "not found|/opt/swift|libswift|libFoundation|libdispatch"; then
  fail "the installed msgpipe loads the above from the Swift toolchain"
fi

# A unit without its settings: its ExecStart, as systemd runs it ($$ is $, %H the host name), with an empty
# environment, must exit 78 naming the setting.
for unit in "${units[@]}"; do
  command=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/^ExecStart=//; s/\\$//' | tr -d '\n' \
    | sed "s/\\\$\\\$/\$/g; s/%H/$(hostname)/g")
  set +e; message=$(env -i PATH=/usr/bin:/bin bash -c "$command" 2>&1 </dev/null); status=$?; set -e
  [ "$status" = 78 ] && grep -q "is not set\|no key" <<<"$message" \
    || fail "$(basename "$unit") without its settings: exit $status, '$message'"
  echo "== $(basename "$unit") without settings: $message"
done

# Two messages over a UNIX socket with the installed binary.
dir=$(mktemp -d); socket="$dir/mp.sock"
printf 'first' >"$dir/a"; head -c 100000 /dev/urandom >"$dir/b"
"$msgpipe" listen --link "unix:$socket" --out-dir "$dir/in" --count 2 2>"$dir/listen.err" &
listener=$!
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
"$msgpipe" send --link "unix:$socket" "$dir/a" "$dir/b" || fail "msgpipe send failed"
wait "$listener" || fail "msgpipe listen failed: $(cat "$dir/listen.err")"
cmp "$dir/a" "$dir/in/00000001.msg" && cmp "$dir/b" "$dir/in/00000002.msg" || fail "the messages arrived changed"
rm -rf "$dir"
echo "== send/listen over a UNIX socket with /usr/bin/msgpipe: 2 messages intact"

trap - EXIT
$SUDO apt-get purge -y -q msgpipe >/dev/null
# Every file the package installed, and every folder of its own (a shared folder such as /usr/bin stays).
left=""
while read -r path; do
  if [ -e "$path" ] && ! [ -d "$path" ]; then left+=" $path"; fi
  if [ -d "$path" ] && [[ $path == *msgpipe* ]]; then left+=" $path"; fi
done <<<"$files"
for path in /etc/default/msgpipe-gateway /etc/default/msgpipe-serve /var/lib/msgpipe-gateway /var/lib/msgpipe-serve \
  /var/lib/private/msgpipe-gateway /var/lib/private/msgpipe-serve /usr/share/doc/msgpipe; do
  [ -e "$path" ] && left+=" $path"
done
getent passwd msgpipe >/dev/null && left+=" (user msgpipe)"
[ -z "$left" ] || fail "left behind after purge:$left"
echo "== purged: nothing left behind"
