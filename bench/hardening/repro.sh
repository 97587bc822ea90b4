#!/usr/bin/env bash
# Replays the reproductions of issue 21's 14 defects against a binary (default build/overhead) and
# prints one line per reproduction: what came back, wall time, peak RSS (/usr/bin/time -v). Run it
# on an older build to compare: OVERHEAD_BINARY=/path/to/old/overhead bash bench/hardening/repro.sh
#   bash bench/hardening/repro.sh [DEFECTS]      DEFECTS: e.g. 1,3,12 (default: all 14)
# Needs wrk (defect 14) and /usr/bin/time (Debian package time). About 2-3 minutes on an idle machine.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${OVERHEAD_BINARY:-$ROOT/build/overhead}
[ -x /usr/bin/time ] || { echo "/usr/bin/time is missing (Debian package time)" >&2; exit 1; }
ulimit -n "$(ulimit -Hn)"
exec python3 "$ROOT/bench/hardening/repro.py" "$BIN" --only "${1:-}"
