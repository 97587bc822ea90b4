#!/usr/bin/env python3
"""Checks that src/ modules include only the modules below them (docs/architecture.md, "Floors"),
and that the map in docs/architecture.md is true of the code.

Each module is a folder of src/ and one CMake library. A `#include "other/..."` line in a module's
file is a dependency on `other`; it must be listed in ALLOWED for that module. Also checked:
- namespaces follow folders: what a file of src/M defines is in `overhead::M` (or below it); another
  module's namespace may be opened only to declare a class ahead (`class Tokenizer;`);
- docs/architecture.md's module table says of every module exactly what ALLOWED says it may
  include, and every repository path the page names in backquotes exists.
Exits 1 naming every file:line that breaks a rule, so a break fails `make test`.
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
    "agent": {"util"},  # what a model's answer holds: tool calls and reasoning, parsed per template family
    "schema": {"util"},  # JSON Schema: validation and the constraints sent to an engine
    "backends": {"ports", "reply", "aws", "util"},
    "pipe": {"ports", "cost", "reply", "agent", "binding", "tok", "chat", "util"},  # cost: each record priced
    "report": {"ports", "cost", "stats", "util"},
    "run": {"pipe", "ports", "report", "backends", "binding", "tok", "chat", "util", "stats", "cost"},
    "serve": {"pipe", "ports", "reply", "agent", "schema", "binding", "tok", "chat", "util"},
    "cli": None,  # the command wires everything together
}

# Known breaks of the rule still being moved away, as (module, included module). Empty when the
# layering is true; an entry that no longer occurs is itself an error, so the list only shrinks.
PENDING: set[tuple[str, str]] = set()

# Modules whose files still declare their names in another module's namespace, as (module,
# namespace). Like PENDING: an entry that no longer occurs is an error, so the list only shrinks.
NAMESPACE_PENDING: set[tuple[str, str]] = set()

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
NAMESPACE = re.compile(r'^namespace overhead::([a-z_]+)(?:::[a-z_:]+)? \{')
AHEAD = re.compile(r'^\s*(class|struct) [A-Za-z_][A-Za-z_0-9]*;\s*$')
# A table row of docs/architecture.md's module table: | `module` ... | what it owns | may include |
TABLE_ROW = re.compile(r'^\| `([a-z_]+)`[^|]*\|.*\| ([^|]+) \|$')
PATH = re.compile(r'`((?:src|tests|scripts|docs|include|cmake|bench|python|fuzz)/[A-Za-z0-9_./-]+)`')


def namespace_errors(path, module, rel, seen_pending):
    """Blocks of another module's namespace that define something (not only declare ahead)."""
    errors = []
    lines = path.read_text(errors="replace").splitlines()
    for number, line in enumerate(lines, 1):
        m = NAMESPACE.match(line)
        if not m or m.group(1) == module:
            continue
        body = []
        for inner in lines[number:]:
            if inner.startswith("}"):
                break
            if inner.strip() and not inner.strip().startswith("//"):
                body.append(inner)
        if all(AHEAD.match(b) for b in body):
            continue
        if (module, m.group(1)) in NAMESPACE_PENDING:
            seen_pending.add((module, m.group(1)))
            continue
        errors.append(f"{rel}:{number}: a file of src/{module} defines names in overhead::{m.group(1)}; use overhead::{module}")
    return errors


def map_errors(repo):
    """docs/architecture.md against ALLOWED and the tree."""
    doc = repo / "docs" / "architecture.md"
    text = doc.read_text()
    errors, rows = [], {}
    for number, line in enumerate(text.splitlines(), 1):
        m = TABLE_ROW.match(line)
        if m and m.group(1) in ALLOWED:
            rows[m.group(1)] = (number, m.group(2).strip())
        for path in PATH.findall(line):
            if not (repo / path.rstrip(".")).exists():
                errors.append(f"docs/architecture.md:{number}: names {path}, which does not exist")
    for module, allowed in ALLOWED.items():
        if module not in rows:
            errors.append(f"docs/architecture.md: the module table has no row for `{module}`")
            continue
        number, cell = rows[module]
        said = set(re.findall(r'`([a-z_]+)`', cell))
        if allowed is None:
            ok = cell == "anything"
        elif not allowed:
            ok = cell == "nothing"
        else:
            ok = said == allowed
        if not ok:
            want = "anything" if allowed is None else ", ".join(f"`{d}`" for d in sorted(allowed)) or "nothing"
            errors.append(f"docs/architecture.md:{number}: `{module}` may include {want} (scripts/check_layering.py), the page says {cell}")
    return errors


def main() -> int:
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    root = repo / "src"
    errors, seen_pending, seen_namespaces = [], set(), set()
    for path in sorted(root.rglob("*")):
        if path.suffix not in {".cpp", ".hpp", ".inc", ".h"}:
            continue
        module = path.relative_to(root).parts[0]
        if module not in ALLOWED:
            errors.append(f"{path.relative_to(root.parent)}: module '{module}' is not in scripts/check_layering.py's table")
            continue
        errors += namespace_errors(path, module, path.relative_to(root.parent), seen_namespaces)
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
    for module, namespace in sorted(NAMESPACE_PENDING - seen_namespaces):
        errors.append(f"scripts/check_layering.py: NAMESPACE_PENDING lists {module} in overhead::{namespace}, which no longer occurs: remove it")
    errors += map_errors(repo)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layering: {len(errors)} break(s) of the floors, the namespaces or the map; see docs/architecture.md")
        return 1
    print("check_layering: every include points down, namespaces follow folders, docs/architecture.md matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
