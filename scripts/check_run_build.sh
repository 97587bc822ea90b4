#!/usr/bin/env bash
# Proves that `make run` needs no Debian package beyond what `scripts/setup.sh build` installs,
# whatever else the machine has. CI's machine has every package installed, so a run-only build
# that silently picks up a test package (GoogleTest shipped by the image turning the tests'
# configure on, a header from a test library) works there and fails on a newcomer's machine.
#
#   scripts/check_run_build.sh BUILD    BUILD: a folder configured by `make configure-run` in
#                                       which the `overhead` target is built (`make build-overhead`)
#
# It collects every file the run-only build used from the system: the paths CMake's configure
# found (CMakeCache.txt), every header each object of `overhead` was compiled against (Ninja's
# deps log), every library and object the final link opened (the link re-run with --trace into a
# scratch file), and the programs `make run` starts (rsvg-convert for the report's PNG figures).
# Each is mapped to the package that owns it (dpkg -S) and checked against the packages setup
# installs plus everything they depend on and Debian's required base. Exits 1 listing each file
# from another package, with the package to add to BUILD_PACKAGES or the dependency to drop.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: scripts/check_run_build.sh BUILD}
BUILD=$(cd "$BUILD" && pwd)
[ -f "$BUILD/CMakeCache.txt" ] || { echo "check_run_build: $BUILD is not configured (make configure-run)" >&2; exit 2; }
[ -x "$BUILD/overhead" ] || { echo "check_run_build: $BUILD/overhead is not built (make build-overhead)" >&2; exit 2; }
for setting in OVERHEAD_TESTS OVERHEAD_BENCH OVERHEAD_PYTHON; do
  grep -q "^$setting:BOOL=OFF$" "$BUILD/CMakeCache.txt" ||
    { echo "check_run_build: $BUILD is not a run-only build ($setting is not OFF): configure it with make configure-run" >&2; exit 1; }
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The packages a fresh machine has after `setup.sh build`: BUILD_PACKAGES, what they depend on
# (recursively, without recommends: setup installs with --no-install-recommends), and the base
# every Debian system has (Essential or Priority required). Node.js and npm fetch the tokenizers.
mapfile -t build_packages < <(bash "$ROOT/scripts/setup.sh" list-build)
build_packages+=(nodejs npm)
{
  apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "${build_packages[@]}" 2>/dev/null |
    sed -E -n 's/^  *(Pre)?Depends: <?([^ >]+)>?$/\2/p; s/^([^ <].*)$/\1/p'
  dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' | awk '$2 == "yes" || $3 == "required" { print $1 }'
  printf '%s\n' "${build_packages[@]}"
} | sed 's/:.*//' | sort -u >"$TMP/allowed"

# 1. What the configure found: absolute paths in the cache, outside this checkout and the build.
sed -n 's/^[A-Za-z0-9_.+-]*:\(FILEPATH\|PATH\|STRING\|INTERNAL\)=//p' "$BUILD/CMakeCache.txt" | tr ';' '\n' |
  grep -E '^/(usr|lib|etc|opt)/' | grep -v -e "^$ROOT" -e "^$BUILD" >"$TMP/paths" || true

# 2. What `overhead`'s objects were compiled against.
ninja -C "$BUILD" -t inputs overhead | grep -E '\.o$' | sed "s|^|$BUILD/|" >"$TMP/objects"
[ -s "$TMP/objects" ] || { echo "check_run_build: no objects found for overhead in $BUILD" >&2; exit 2; }
(cd "$BUILD" && ninja -t deps $(sed "s|^$BUILD/||" "$TMP/objects")) | grep -E '^ +/' | sed 's/^ *//' >>"$TMP/paths"

# 3. What the final link opened: the link command again, writing a scratch binary, with --trace.
link=$(ninja -C "$BUILD" -t commands overhead | tail -1)
case "$link" in *" -o overhead "*) ;; *) echo "check_run_build: unexpected link command: ${link:0:200}" >&2; exit 2 ;; esac
(cd "$BUILD" && eval "${link/ -o overhead / -o $TMP/overhead.scratch } -Wl,--trace") 2>&1 |
  grep -E '^/' | sed 's/^\(.*\)(.*)$/\1/' >>"$TMP/paths" || true

# 4. The programs `make run` starts.
for program in rsvg-convert; do
  path=$(command -v "$program") || { echo "check_run_build: $program is not installed: scripts/setup.sh build must install it" >&2; exit 1; }
  echo "$path" >>"$TMP/paths"
done

# Map each file (and, for a symbolic link, what it points to) to its package and check it. A merged
# /usr system lists a file under /lib or /usr/lib depending on the package, so both spellings are
# asked; one `dpkg -S` run (split by xargs) answers them all.
python3 - "$TMP/paths" "$TMP/allowed" <<'PY'
import os, subprocess, sys
paths = sorted({p.strip() for p in open(sys.argv[1]) if p.strip().startswith("/")})
allowed = {p.strip() for p in open(sys.argv[2]) if p.strip()}
def spellings(path):
    real = os.path.realpath(path)
    out = {path, real}
    for p in (path, real):
        out.add(p[4:] if p.startswith("/usr/") else "/usr" + p)
    return out
wanted = {p: spellings(p) for p in paths}
everything = sorted(set().union(*wanted.values())) if wanted else []
answer = subprocess.run(["xargs", "-d", "\n", "dpkg", "-S"], input="\n".join(everything), text=True,
                        capture_output=True).stdout
owners_of = {}
for line in answer.splitlines():
    if line.startswith("diversion by") or ": " not in line:
        continue
    packages, _, path = line.partition(": ")
    owners_of.setdefault(path, set()).update(p.strip().split(":")[0] for p in packages.split(","))
checked, bad = 0, []
for path, names in wanted.items():
    owners = set().union(*(owners_of.get(n, set()) for n in names))
    if not owners:
        continue  # no package owns it (generated, or made at install time): nothing to install
    checked += 1
    if not owners & allowed:
        bad.append((path, ",".join(sorted(owners))))
for path, owners in bad:
    print(f"check_run_build: {path} comes from {owners}, which scripts/setup.sh build does not install: "
          "add it to BUILD_PACKAGES, or keep the run-only build from needing it", file=sys.stderr)
if checked == 0:
    print("check_run_build: no system file was checked: the check itself is broken", file=sys.stderr)
    sys.exit(2)
if bad:
    sys.exit(1)
print(f"check_run_build: the run-only build uses {checked} system files, all from the {len(allowed)} "
      "packages setup.sh build brings (and what they depend on)")
PY
