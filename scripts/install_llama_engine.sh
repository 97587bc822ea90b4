#!/usr/bin/env bash
# Installs llama.cpp as the npm package node-llama-cpp (pinned in scripts/llama_engine/package-lock.json)
# with only its prebuilt linux-x64 CPU binary (@node-llama-cpp/linux-x64, pinned as a direct
# dependency; every other optional platform/GPU package is left out: the full set is ~730 MB) into
# .cache/llama_engine/ of this clone (or $LLAMA_ENGINE_PREFIX). Nothing is downloaded or built
# besides the npm packages. tests/engine serves it. Idempotent. Prints the node_modules path last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export NPM_CI_FLAGS="--omit=optional"
export NODE_LLAMA_CPP_SKIP_DOWNLOAD=true  # its postinstall would otherwise fetch llama.cpp's sources
exec "$here/install_npm_set.sh" llama_engine node-llama-cpp/package.json "${LLAMA_ENGINE_PREFIX:-}"
