#!/usr/bin/env bash
# Set up .venv (first run only), lint and type-check (scripts/lint.sh), then run the whole test
# suite against real Blender 5.0 (the bpy module).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/lint.sh
exec .venv/bin/python -m pytest "$@"
