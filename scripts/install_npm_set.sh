#!/usr/bin/env bash
# install_npm_set.sh SET MARKER [PREFIX]: installs the npm packages pinned in
# scripts/SET/package-lock.json into PREFIX (default .cache/SET/ of this clone) with `npm ci`. Idempotent: does nothing when the
# installed lock matches and node_modules/MARKER exists. Safe to start twice at once (one installs,
# the other waits). Prints the node_modules path last. NPM_CI_FLAGS adds flags to `npm ci` (e.g.
# --omit=optional: a set that pins the one optional package this machine needs).
set -euo pipefail
set_name=$1 marker=$2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${3:-$ROOT/.cache/$set_name}
mkdir -p "$PREFIX"
exec 9>"$PREFIX/.install.lock"
flock 9
if ! { [ -e "$PREFIX/node_modules/$marker" ] && cmp -s "$ROOT/scripts/$set_name/package-lock.json" "$PREFIX/package-lock.json"; }; then
  cp "$ROOT/scripts/$set_name/package.json" "$ROOT/scripts/$set_name/package-lock.json" "$PREFIX/"
  (cd "$PREFIX" && npm ci --no-audit --no-fund --loglevel=error ${NPM_CI_FLAGS:-} >&2)
  echo "install_npm_set: $set_name in $PREFIX/node_modules" >&2
fi
echo "$PREFIX/node_modules"
