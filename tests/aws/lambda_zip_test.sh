#!/usr/bin/env bash
# The Lambda zip works as deployed: builds it (scripts/make_lambda_zip.sh), unpacks it into an
# empty task root, and runs the Runtime API test through its `bootstrap` (bundled loader and
# libraries) instead of the build's binary. Usage: lambda_zip_test.sh SOURCE_DIR BUILD_DIR TEST_BINARY
set -euo pipefail
src=$1 build=$2 tests=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash "$src/scripts/make_lambda_zip.sh" "$build" "$work/overhead-lambda.zip"
mkdir "$work/task"
(cd "$work/task" && unzip -q ../overhead-lambda.zip)
for f in bootstrap overhead; do [ -x "$work/task/$f" ] || { echo "lambda_zip_test: $f is missing or not executable" >&2; exit 1; }; done
ls "$work/task/lib" | grep -q '^ld-linux' || { echo "lambda_zip_test: no loader in lib/" >&2; exit 1; }
# Opened at first use, so not in the binary's ldd list: the Runtime API client needs libcurl.
for so in libcurl.so.4 libcrypto.so.3 libpq.so.5; do
  [ -f "$work/task/lib/$so" ] || { echo "lambda_zip_test: $so is missing from lib/" >&2; exit 1; }
done
OVERHEAD_LAMBDA_BOOTSTRAP="$work/task/bootstrap" "$tests" --gtest_filter='LambdaRuntimeTest.StoresABatch*:LambdaRuntimeTest.AStoreThatCannot*'
