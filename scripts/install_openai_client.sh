#!/usr/bin/env bash
# Installs the official `openai` npm client (pinned in scripts/openai/package-lock.json) into
# .cache/openai/ of this clone; tests/serve drives `overhead serve` with it. Idempotent: does
# nothing when the installed lock matches. Prints the node_modules path last.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${OPENAI_CLIENT_PREFIX:-$ROOT/.cache/openai}
mkdir -p "$PREFIX"
# Two test runs may start this at once: one installs, the other waits for it.
exec 9>"$PREFIX/.install.lock"
flock 9
if ! { [ -f "$PREFIX/node_modules/openai/package.json" ] && cmp -s "$ROOT/scripts/openai/package-lock.json" "$PREFIX/package-lock.json"; }; then
  cp "$ROOT/scripts/openai/package.json" "$ROOT/scripts/openai/package-lock.json" "$PREFIX/"
  (cd "$PREFIX" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "install_openai_client: openai in $PREFIX/node_modules" >&2
fi
echo "$PREFIX/node_modules"
