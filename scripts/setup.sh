#!/usr/bin/env bash
# One-time, idempotent set-up for a fresh Debian 12 machine: installs the Debian packages the
# build, tests and benchmarks need, then fetches and builds the tokenizer files (pinned, sha256-checked).
# Safe to run again: every step checks first and does nothing when already done.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates ccache
  clang libclang-rt-14-dev                                  # fuzzers (libFuzzer) and sanitizer runtimes
  libsimdjson-dev libpcre2-dev libutf8proc-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-jinja2                                     # golden regeneration (Jinja2 reference)
  jq                                                         # scripts/make_cost_fixtures.sh reads summary.json
  libeigen3-dev libgsl-dev                                   # statistics: small solves, t/normal distributions
  librsvg2-bin fonts-dejavu-core                             # report: SVG -> PNG (rsvg-convert) with a known font
  python3-numpy python3-scipy python3-statsmodels            # statistics goldens (numpy quantiles, statsmodels fits)
  redis-server libhiredis-dev                                # Redis Streams queue (hiredis) and its test server
  postgresql-15 libpq-dev                                    # PostgreSQL store (libpq) and its test server
  chromium                                                   # report and serve dashboard tests: pages in headless Chromium
  libcurl4-openssl-dev libssl-dev libcpp-httplib-dev         # AWS clients (HTTP, SigV4); loopback test servers and clients
  sqlite3                                                    # serve test: reads the gateway's store from node
  curl                                                       # aws_emulators.sh: waits until the emulator answers an SQS call
  zip binutils                                               # make lambda-zip: the zip, and strip
  libboost-dev                                               # the gateway's HTTP server: Boost.Beast/Asio (headers only)
  wrk                                                        # benchmark only: the HTTP load generator (bench/serve)
)

# Node.js with npm fetches the tokenizer files and runs the references. A machine may already have
# it from another source (NodeSource's nodejs bundles npm and conflicts with Debian's npm package),
# so Debian's packages are added only when there is no npm at all.
command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; }
fi

bash "$ROOT/scripts/fetch_tokenizers.sh"
