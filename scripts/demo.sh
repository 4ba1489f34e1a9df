#!/usr/bin/env bash
# Set up .venv (first run only) and bake the bundled demo level headless through real Blender (bpy).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
.venv/bin/python -m navmesh_addon bake tests/fixtures/levels/demo_level.obj --output out/demo_level.json --format json,dae,glb,bin,tres
echo "navmesh written to out/demo_level.json, .dae, .glb, .bin (Detour) and .tres (Godot)"
