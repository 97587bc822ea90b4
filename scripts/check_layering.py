#!/usr/bin/env python3
"""Checks that src/ modules include only the modules below them (docs/architecture.md, "Floors").

Each module is a folder of src/ and one CMake library. A `#include "other/..."` line in a module's
file is a dependency on `other`; it must be listed in ALLOWED for that module. Exits 1 naming
every file:line that breaks the rule, so a new include across floors fails `make test`.
"""
import pathlib
import re
import sys

# module -> the modules it may include (besides itself). Keep in step with docs/architecture.md.
ALLOWED = {
    "util": set(),
    "lazy": set(),  # stand-ins that open libcurl, libpq and libcrypto at first use (src/lazy/)
    "tok": {"util"},
    "chat": {"util"},
    "binding": {"tok", "chat", "util"},
    "capi": {"binding", "tok", "chat", "util"},  # the C API (include/overhead/overhead.h) over the library faces
    "ports": {"util"},
    "stats": set(),
    "aws": {"util"},
    "cost": {"stats", "util"},
    "reply": {"ports", "util"},
    "backends": {"ports", "reply", "aws", "util"},
    "pipe": {"ports", "reply", "binding", "tok", "chat", "util"},
    "report": {"ports", "cost", "stats", "util"},
    "run": {"pipe", "ports", "report", "backends", "binding", "tok", "chat", "util", "stats", "cost"},
    "serve": {"pipe", "ports", "reply", "binding", "tok", "chat", "util"},
    "cli": None,  # the command wires everything together
}

# Known breaks of the rule still being moved away, as (module, included module). Empty when the
# layering is true; an entry that no longer occurs is itself an error, so the list only shrinks.
PENDING: set[tuple[str, str]] = set()

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve() / "src"
    errors, seen_pending = [], set()
    for path in sorted(root.rglob("*")):
        if path.suffix not in {".cpp", ".hpp", ".inc", ".h"}:
            continue
        module = path.relative_to(root).parts[0]
        if module not in ALLOWED:
            errors.append(f"{path.relative_to(root.parent)}: module '{module}' is not in scripts/check_layering.py's table")
            continue
        allowed = ALLOWED[module]
        if allowed is None:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) == module or m.group(1) not in ALLOWED:
                continue
            dep = m.group(1)
            if dep in allowed:
                continue
            if (module, dep) in PENDING:
                seen_pending.add((module, dep))
                continue
            errors.append(f"{path.relative_to(root.parent)}:{number}: {module} may not include {dep} ({line.strip()})")
    for module, dep in sorted(PENDING - seen_pending):
        errors.append(f"scripts/check_layering.py: PENDING lists {module} -> {dep}, which no longer occurs: remove it")
    for e in errors:
        print(e)
    if errors:
        print(f"check_layering: {len(errors)} include(s) break the floors; see docs/architecture.md")
        return 1
    print("check_layering: every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
