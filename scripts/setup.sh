#!/usr/bin/env bash
# Create .venv with Python 3.11, install the pinned dependencies (real Blender 5.0 as the bpy module)
# and the library itself.
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
# The library (lib/) under its package name, blender_navmesh, as the add-on, tests and benchmark
# import it: an editable install of this checkout, so edits in lib/ take effect without reinstalling.
installed_from='import blender_navmesh, pathlib; print(pathlib.Path(blender_navmesh.__file__).parent)'
if [ "$(.venv/bin/python -c "$installed_from" 2>/dev/null)" != "$(pwd -P)/lib" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
fi
# Engines the export tests run when present (skipped otherwise): Godot 3 headless and assimp. Installed
# only as root where apt-get exists; a failure here never fails the setup.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  missing=""
  command -v godot3-server >/dev/null 2>&1 || missing="$missing godot3-server"
  command -v assimp >/dev/null 2>&1 || missing="$missing assimp-utils"
  if [ -n "$missing" ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing; } >/dev/null 2>&1 || true
  fi
fi
