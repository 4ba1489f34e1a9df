"""lib/ must run in plain Python with numpy only: no Blender modules, no test-only packages."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

LIB = pathlib.Path(__file__).resolve().parents[1] / "lib"
FORBIDDEN = {"bpy", "mathutils", "bmesh", "gpu", "bpy_extras", "scipy", "shapely"}


def test_no_module_under_lib_imports_blender_or_test_only_packages():
    offenders = []
    for path in sorted(LIB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(LIB.parent)}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert not offenders, f"lib/ imports forbidden modules: {offenders}"


def test_lib_imports_and_bakes_with_blender_modules_blocked():
    """Run in a fresh interpreter where importing any Blender module fails."""
    script = (
        "import sys\n"
        f"for name in {sorted(FORBIDDEN)!r}: sys.modules[name] = None\n"
        "import blender_navmesh as lib, blender_navmesh.query\n"
        "mesh = lib.generate([[0,0,0],[4,0,0],[4,4,0],[0,4,0]], [[0,1,2],[0,2,3]], lib.BakeParams(agent_radius=0.3))\n"
        "assert mesh.polygon_count >= 1, mesh.empty_reason\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=LIB.parent, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
