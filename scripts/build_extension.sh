#!/usr/bin/env bash
# Build the extension zip into dist/ with Blender's own extension tool, then validate the zip.
# Uses the blender_ext.py tool shipped with the bpy module in .venv (or $PYTHON); with $BLENDER set
# to a Blender 4.2+ binary it uses `blender --command extension` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p dist
if [[ -n "${BLENDER:-}" ]]; then
    "$BLENDER" --factory-startup --command extension build --source-dir . --output-dir dist
    zip_path="$(ls -t dist/*.zip | head -n 1)"
    "$BLENDER" --factory-startup --command extension validate "$zip_path"
else
    python="${PYTHON:-.venv/bin/python}"
    tool="$("$python" -c 'import bpy, os; print(os.path.join(bpy.utils.system_resource("SCRIPTS"), "addons_core", "bl_pkg", "cli", "blender_ext.py"))' 2>/dev/null | tail -n 1)"
    "$python" "$tool" build --source-dir . --output-dir dist
    zip_path="$(ls -t dist/*.zip | head -n 1)"
    "$python" "$tool" validate "$zip_path"
fi
echo "extension: $zip_path (install with Edit > Preferences > Get Extensions > Install from Disk)"
