#!/usr/bin/env bash
# Set up .venv (first run only) and run the whole test suite against real Blender 5.0 (the bpy module).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
