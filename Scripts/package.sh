#!/usr/bin/env bash
# Builds msgpipe's Debian package from this checkout: Scripts/package.sh [OUTDIR] (default .package/);
# Scripts/package.sh --build-only stops after the release build (in .build-release/) and prints the binary's path.
#   1. a release build of msgpipe with the Swift runtime linked statically, stamped with `git describe`
#      (MSGPIPE_COMMIT),
#   2. refuses a binary that still loads anything from the Swift toolchain (ldd),
#   3. man pages for msgpipe and every subcommand (swift-argument-parser's generate-manual plugin; it builds the
#      package's products in debug, which Scripts/test.sh has already built), shell completions for bash, zsh and
#      fish, the systemd units with their /etc/default files,
#   4. `Depends:` from dpkg-shlibdeps, then dpkg-deb. Prints the .deb's path.
# Needs dpkg-dev (dpkg-shlibdeps) and binutils (strip). docs/PACKAGING.md describes the package.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
out=${1:-.package}
mkdir -p "$out"; out=$(cd "$out" && pwd)

version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/MsgPipe/MsgPipeBuild.swift)
[ -n "$version" ] || { echo "package.sh: no version in Sources/MsgPipe/MsgPipeBuild.swift" >&2; exit 1; }
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)
# Man pages and the changelog carry the commit's date, not today's, so two builds of a commit agree.
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
arch=$(dpkg --print-architecture)
maintainer=${MSGPIPE_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || echo "msgpipe maintainers <msgpipe@example.org>")}

# 1. The binary. --static-swift-stdlib links the Swift runtime, Foundation and Dispatch into it.
# MSGPIPE_COMMIT reaches only CBuildInfo (Package.swift): a new commit recompiles one C file.
# Its own build folder, so it can run beside the builds and tests that use .build (Scripts/test.sh runs it
# beside the lab).
release=(-c release --static-swift-stdlib --product msgpipe --scratch-path .build-release)
MSGPIPE_COMMIT=$commit swift build "${release[@]}" >&2
binary="$(MSGPIPE_COMMIT=$commit swift build "${release[@]}" --show-bin-path)/msgpipe"
if [ "$build_only" = 1 ]; then echo "$binary"; exit 0; fi

# 2. Only Debian's libraries: nothing from the toolchain (/opt/swift or wherever swift lives), nothing missing.
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
libs=$(ldd "$binary")
if grep -E "not found|$toolchain|libswift|libFoundation|libdispatch|libBlocksRuntime" <<<"$libs"; then
  echo "package.sh: $binary still needs the Swift toolchain's runtime (above); refusing to package it" >&2; exit 1
fi

stage="$out/stage"
rm -rf "$stage"; mkdir -p "$stage/DEBIAN"
install -D -m 0755 "$binary" "$stage/usr/bin/msgpipe"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/msgpipe"

# 3. Man pages: one per command, msgpipe-send(1) and so on, as git's and systemd's tools name theirs.
swift package plugin generate-manual --configuration debug --multi-page --date "$date" --authors "msgpipe's authors" >&2
manuals=.build/plugins/GenerateManual/outputs/msgpipe
mkdir -p "$stage/usr/share/man/man1"
for page in "$manuals"/*.1; do
  name=$(basename "$page" .1); dashed=${name//./-}
  # The title and NAME name the page as man and whatis look it up (MSGPIPE-SEND, msgpipe-send); the synopsis
  # keeps the command as typed (msgpipe send). An empty line, which groff warns about, becomes a paragraph.
  awk -v dashed="$dashed" '
    /^\.Dt / { $2 = toupper(dashed) }
    /^\.Nm "/ && !named { command = substr($0, 5); $0 = ".Nm " dashed; named = 1 }
    /^\.Nm$/ && command != "" { $0 = ".Nm " command }
    /^$/ { $0 = ".Pp" }
    { print }' "$page" | gzip -9n >"$stage/usr/share/man/man1/$dashed.1.gz"
done
[ -f "$stage/usr/share/man/man1/msgpipe-send.1.gz" ] || { echo "package.sh: no man page for msgpipe send" >&2; exit 1; }

install -d "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" \
  "$stage/usr/share/fish/vendor_completions.d"
# bash-completion sources its files: no #! line.
"$binary" --generate-completion-script bash | sed '1{/^#!/d}' >"$stage/usr/share/bash-completion/completions/msgpipe"
"$binary" --generate-completion-script zsh >"$stage/usr/share/zsh/vendor-completions/_msgpipe"
"$binary" --generate-completion-script fish >"$stage/usr/share/fish/vendor_completions.d/msgpipe.fish"

install -D -m 0644 -t "$stage/lib/systemd/system" Scripts/systemd/msgpipe-gateway.service \
  Scripts/systemd/msgpipe-serve.service
install -D -m 0644 Scripts/systemd/msgpipe-gateway.default "$stage/etc/default/msgpipe-gateway"
install -D -m 0644 Scripts/systemd/msgpipe-serve.default "$stage/etc/default/msgpipe-serve"
printf '/etc/default/msgpipe-gateway\n/etc/default/msgpipe-serve\n' >"$stage/DEBIAN/conffiles"

doc="$stage/usr/share/doc/msgpipe"
install -D -m 0644 Scripts/debian/copyright "$doc/copyright"
install -D -m 0644 docs/PACKAGING.md "$doc/PACKAGING.md"
install -D -m 0644 Scripts/systemd/kernel-backend.conf "$doc/examples/kernel-backend.conf"
sed "s/@VERSION@/$version/; s/@COMMIT@/$commit/; s/@DATE@/$(date -u -R -d "@$SOURCE_DATE_EPOCH")/; s|@MAINTAINER@|$maintainer|" \
  Scripts/debian/changelog | gzip -9n >"$doc/changelog.gz"
install -m 0755 Scripts/debian/postrm "$stage/DEBIAN/postrm"

# 4. Depends: what the binary links, as Debian's shlibs files name it.
shlibs=$(mktemp -d); mkdir "$shlibs/debian"
printf 'Source: msgpipe\n\nPackage: msgpipe\nArchitecture: any\n' >"$shlibs/debian/control"
depends=$(cd "$shlibs" && dpkg-shlibdeps -O "$stage/usr/bin/msgpipe" | sed -n 's/^shlibs:Depends=//p')
rm -rf "$shlibs"
size=$(du -k -s --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: msgpipe
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Suggests: bluez, mosquitto
Section: net
Priority: optional
Description: whole messages of any size over Bluetooth LE GATT
 msgpipe cuts each message into packets, checks it with a CRC and puts it back
 together. It paces the sender by the link's backpressure, acknowledges and
 retransmits what was lost, and resumes after a reconnect, over the kernel's
 Bluetooth sockets or bluetoothd's D-Bus API.
 .
 This package holds the msgpipe command, its man pages and shell completions,
 and systemd units for an MQTT gateway and an encrypted request server.
EOF
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
  >"$stage/DEBIAN/md5sums"
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
deb="$out/msgpipe_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2
echo "$deb"
