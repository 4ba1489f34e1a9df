#!/usr/bin/env bash
# Create .venv with Python 3.11 and install the pinned dependencies (real Blender 5.0 as the bpy module).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
wanted=$(cat requirements-test.txt requirements-blender.txt)
if [ "$(cat .venv/.installed 2>/dev/null)" != "$wanted" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
  printf '%s' "$wanted" > .venv/.installed
fi
