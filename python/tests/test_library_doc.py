"""The Python example of docs/library.md ("Use it as a library") runs as written."""
import re

import pytest

from conftest import ROOT, require_set


def test_library_doc_python_example_runs(capsys):
    require_set("phi-4")
    doc = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", doc, re.S)
    assert code, "no Python example in docs/library.md"
    exec(compile(code.group(1), "docs/library.md", "exec"), {})
    printed = capsys.readouterr().out.split()
    assert len(printed) == 4 and printed[0] == printed[1]  # len(ids) == count(text)
