#!/usr/bin/env bash
# Create .venv with Python 3.11 and install the pinned dependencies (real Blender 5.0 as the bpy module).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import sys; sys.exit(0 if open('.venv/.installed').read() == open('requirements-test.txt').read() else 1)" 2>/dev/null; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r requirements-test.txt
  cp requirements-test.txt .venv/.installed
fi
