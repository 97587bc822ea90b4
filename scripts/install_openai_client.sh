#!/usr/bin/env bash
# Installs the official `openai` npm client (pinned in scripts/openai/package-lock.json) into
# .cache/openai/ of this clone (or $OPENAI_CLIENT_PREFIX); tests/serve drives `overhead serve`
# with it. Idempotent. Prints the node_modules path last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/install_npm_set.sh" openai openai/package.json "${OPENAI_CLIENT_PREFIX:-}"
