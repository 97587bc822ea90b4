#!/usr/bin/env bash
# Installs the AWS test-time tools (local-aws-sqs, dynalite, s3rver emulators; @smithy/signature-v4,
# the official signer; @aws-sdk/client-* as an independent client) into .cache/aws/ of this clone
# from the pinned package-lock.json. Idempotent: does nothing when the installed lock matches.
# Prints the node_modules path last.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${AWS_TOOLS_PREFIX:-$ROOT/.cache/aws}
mkdir -p "$PREFIX"
# Two test fixtures may run this at once: one installs, the other waits for it.
exec 9>"$PREFIX/.install.lock"
flock 9
if ! { [ -d "$PREFIX/node_modules/@smithy/signature-v4" ] && cmp -s "$ROOT/scripts/aws/package-lock.json" "$PREFIX/package-lock.json"; }; then
  cp "$ROOT/scripts/aws/package.json" "$ROOT/scripts/aws/package-lock.json" "$PREFIX/"
  (cd "$PREFIX" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "install_aws_tools: modules in $PREFIX/node_modules" >&2
fi
echo "$PREFIX/node_modules"
