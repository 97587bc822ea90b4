"""The README's Python example ("Use it as a library") runs as written."""
import re

import pytest

from conftest import ROOT, require_set


def test_readme_python_example_runs(capsys):
    require_set("phi-4")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Use it as a library"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code, "no Python example in the README's library section"
    exec(compile(code.group(1), "README.md", "exec"), {})
    printed = capsys.readouterr().out.split()
    assert len(printed) == 4 and printed[0] == printed[1]  # len(ids) == count(text)
