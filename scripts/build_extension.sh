#!/usr/bin/env bash
# Build the extension zip with Blender's own extension tool, then validate the zip. The library
# (lib/) goes in as the wheel blender_navmesh, built first into wheels/ (the manifest lists it);
# Blender installs it with the extension and the add-on imports it by that name.
# Usage: bash scripts/build_extension.sh [OUTPUT_DIR]   (default dist/)
# The wheel is built with .venv's Python (or $PYTHON; it needs pip and setuptools); without $PYTHON
# and without .venv (a fresh clone), scripts/setup.sh makes .venv first. The zip is built with the
# blender_ext.py tool shipped with the bpy module there; with $BLENDER set to a Blender 4.2+ binary,
# with `blender --command extension` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
if [[ -z "${PYTHON:-}" && ! -x .venv/bin/python ]]; then
    bash scripts/setup.sh
fi
python="${PYTHON:-.venv/bin/python}"
mkdir -p "$out"

# The wheel is built from a copy: setuptools leaves build/ and *.egg-info beside the sources.
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
cp -r lib pyproject.toml "$staging"
rm -rf wheels
"$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation -w wheels "$staging"

if [[ -n "${BLENDER:-}" ]]; then
    ext=("$BLENDER" --factory-startup --command extension)
else
    tool="$("$python" -c 'import bpy, os; print(os.path.join(bpy.utils.system_resource("SCRIPTS"), "addons_core", "bl_pkg", "cli", "blender_ext.py"))' 2>/dev/null | tail -n 1)"
    ext=("$python" "$tool")
fi
"${ext[@]}" build --source-dir . --output-dir "$out"
zip_path="$(ls -t "$out"/*.zip | head -n 1)"
"${ext[@]}" validate "$zip_path"
echo "extension: $zip_path (install with Edit > Preferences > Get Extensions > Install from Disk)"
