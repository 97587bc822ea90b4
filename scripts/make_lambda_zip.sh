#!/usr/bin/env bash
# Builds the deployable AWS Lambda zip of `overhead lambda` (a custom runtime, provided.al2023 or
# provided.al2, x86_64) from a built binary:
#   scripts/make_lambda_zip.sh BUILD_DIR OUT.zip
# The zip holds
#   bootstrap   a shell script, the entry Lambda runs: it starts the binary through the bundled
#               dynamic loader, so the Debian-built binary runs whatever glibc the image has, and
#               points AWS_CA_BUNDLE at the image's CA file for TLS;
#   overhead    the binary (release build);
#   lib/        every shared library the binary loads (ldd) or opens at first use (libcurl, libcrypto,
#               libpq and theirs), the loader and glibc included.
# No tokenizer files: the consumer stores records and never tokenizes. The store comes from the
# function's environment (OVERHEAD_STORE=dynamodb://TABLE?region=R) or the handler setting.
set -euo pipefail
build=${1:?usage: make_lambda_zip.sh BUILD_DIR OUT.zip}
out=${2:?usage: make_lambda_zip.sh BUILD_DIR OUT.zip}
bin="$build/overhead"
[ -x "$bin" ] || { echo "make_lambda_zip: $bin is not built" >&2; exit 1; }
command -v zip >/dev/null || { echo "make_lambda_zip: zip is not installed (run scripts/setup.sh)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
cp "$bin" "$stage/overhead"
strip --strip-unneeded "$stage/overhead" 2>/dev/null || true
# "libx.so.1 => /lib/.../libx.so.1 (0x...)" and the loader's own "/lib64/ld-linux-x86-64.so.2 (0x...)".
needed() { ldd "$1" | awk '/=>/ { if ($3 ~ /^\//) print $3; next } $1 ~ /^\// { print $1 }'; }
# The libraries the binary opens at their first use (src/lazy: libcurl for the Runtime API, SQS and
# DynamoDB, libcrypto for signing, libpq for a postgres:// store) are not in its ldd list: bundled
# by name, with what they load.
# ldconfig lives in /sbin, which a non-login shell's PATH may not hold.
ldconfig=$(command -v ldconfig || ls /usr/sbin/ldconfig /sbin/ldconfig 2>/dev/null | head -n 1 || true)
[ -n "$ldconfig" ] || { echo "make_lambda_zip: ldconfig not found (package libc-bin)" >&2; exit 1; }
lazy=()
for so in libcurl.so.4 libcrypto.so.3 libpq.so.5; do
  # awk reads to the end: leaving at the first match could end ldconfig by SIGPIPE mid-list, which
  # pipefail makes this script's silent exit.
  path=$("$ldconfig" -p | awk -v so="$so" '$1 == so && /x86-64/ && !found { print $NF; found = 1 }')
  [ -n "$path" ] || { echo "make_lambda_zip: $so is not installed (run scripts/setup.sh)" >&2; exit 1; }
  lazy+=("$path")
done
{ needed "$bin"; for path in "${lazy[@]}"; do echo "$path"; needed "$path"; done; } | sort -u | while read -r lib; do
  cp -L "$lib" "$stage/lib/$(basename "$lib")"
done
loaders=("$stage"/lib/ld-linux-*.so.*)
[ -e "${loaders[0]}" ] || { echo "make_lambda_zip: no dynamic loader among the libraries" >&2; exit 1; }
loader=$(basename "${loaders[0]}")
cat > "$stage/bootstrap" <<BOOT
#!/bin/sh
# The Lambda custom runtime entry: overhead lambda through the bundled loader and libraries.
root=\${LAMBDA_TASK_ROOT:-\$(cd "\$(dirname "\$0")" && pwd)}
if [ -z "\${AWS_CA_BUNDLE:-}" ]; then
  for f in /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/certs/ca-certificates.crt /etc/ssl/cert.pem; do
    if [ -f "\$f" ]; then AWS_CA_BUNDLE=\$f; export AWS_CA_BUNDLE; break; fi
  done
fi
exec "\$root/lib/$loader" --library-path "\$root/lib" "\$root/overhead" lambda "\$@"
BOOT
chmod 755 "$stage/bootstrap" "$stage/overhead" "$stage/lib/$loader"
mkdir -p "$(dirname "$out")"
rm -f "$out"
out_abs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
(cd "$stage" && zip -q -r -X "$out_abs" bootstrap overhead lib)
echo "make_lambda_zip: $out_abs ($(du -k "$out_abs" | cut -f1) KiB; bootstrap, overhead, lib/ with $(ls "$stage/lib" | wc -l) libraries)"
