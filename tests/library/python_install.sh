#!/usr/bin/env bash
# The Python install of docs/library.md, into VENV: a venv of PYTHON that sees Debian's packages
# (pybind11, setuptools, pytest, Jinja2), then `pip install --no-build-isolation ./python`
# (no network: nothing is downloaded). The venv is kept between runs; the install is redone.
#   python_install.sh PYTHON VENV       (run from the clone's root; env OVERHEAD_BUILD_DIR)
set -euo pipefail
PYTHON=$1 VENV=$2
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv --system-site-packages "$VENV"
"$VENV/bin/python" -m pip install --quiet --no-build-isolation --no-index --no-deps --disable-pip-version-check ./python
cd "$VENV" && "$VENV/bin/python" -c 'import overhead, sys; print("installed", overhead.__file__)'
