#!/usr/bin/env bash
# `overhead calibrate --refit` on the committed validation profile gives back the profile's own fit:
# the stored measurements are read whole, and the fit the fixture's predictions were made from is
# today's (a change to the fit that moves it fails here; regenerate the fixture with
# scripts/calibrate_validation.mjs). A profile without measurements is a clear error.
set -euo pipefail
overhead=$1
fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$overhead" calibrate --refit "$fixtures/calibrate_validation_profile.json" --out "$tmp/refit.json" >"$tmp/summary.txt"
grep -q "a lone sequence's step" "$tmp/summary.txt"
python3 - "$fixtures/calibrate_validation_profile.json" "$tmp/refit.json" <<'PY'
import json, math, sys
committed, refit = (json.load(open(f))["fit"] for f in sys.argv[1:3])
def same(a, b, path):
    if isinstance(a, dict):
        assert set(a) == set(b), f"{path}: fields {sorted(set(a) ^ set(b))} differ"
        for k in a: same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: {len(a)} against {len(b)} entries"
        for i, (x, y) in enumerate(zip(a, b)): same(x, y, f"{path}[{i}]")
    elif isinstance(a, (int, float)):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15), f"{path}: committed {a}, refitted {b}"
    else:
        assert a == b, f"{path}: committed {a!r}, refitted {b!r}"
same(committed, refit, "fit")
print("refit: the committed fit, field for field")
PY
echo '{"fit": {}}' >"$tmp/no_measurements.json"
if "$overhead" calibrate --refit "$tmp/no_measurements.json" --out "$tmp/x.json" 2>"$tmp/err.txt"; then
  echo "a profile without measurements was refitted" >&2
  exit 1
fi
grep -q 'no "measurements"' "$tmp/err.txt"
