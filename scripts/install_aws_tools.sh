#!/usr/bin/env bash
# Installs the AWS test-time tools (local-aws-sqs, dynalite, s3rver emulators; @smithy/signature-v4,
# the official signer; @aws-sdk/client-* as an independent client) into .cache/aws/ of this clone
# (or $AWS_TOOLS_PREFIX) from the pinned package-lock.json. Idempotent. Prints the node_modules
# path last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/install_npm_set.sh" aws @smithy/signature-v4 "${AWS_TOOLS_PREFIX:-}"
