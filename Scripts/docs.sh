#!/usr/bin/env bash
# Builds the DocC documentation of the library modules (swift-docc-plugin) in one invocation and fails on any
# warning: a broken symbol link, an undocumented parameter named in a doc comment, a missing article.
# The archives land in .build/plugins/Swift-DocC/outputs/<Module>.doccarchive.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
# docc run by a user who does not own the toolchain's HTML template skips the template's index.html and then
# fails on every page ("The file doesn't exist", Swift 6.3.1); a copy of the template owned by this user works.
render=$(dirname "$(readlink -f "$(command -v swift)")")/../share/docc/render
if [ -z "${DOCC_HTML_DIR:-}" ] && [ -d "$render" ] && [ "$(stat -c %u "$render")" != "$(id -u)" ]; then
  DOCC_HTML_DIR=$(mktemp -d); export DOCC_HTML_DIR
  cp -r "$render/." "$DOCC_HTML_DIR"
  trap 'rm -rf "$DOCC_HTML_DIR"' EXIT
fi
if ! swift package generate-documentation --target MsgPipeCore --target MsgPipe --target MsgPipeMQTT --target Transport --target Framing \
  >"$log" 2>&1; then cat "$log"; exit 1; fi
if grep -E "(warning|error):" "$log"; then
  echo "DocC reported the warnings above: the documentation builds without warnings" >&2; exit 1
fi
grep -A4 "^Generated" "$log" || true
rm -f "$log"
