"""The extension as a user gets it: built and validated by Blender's extension tool, installed with
"Install from Disk" (extensions.package_install_files) into a fresh user folder, enabled, and baking."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import blender_navmesh as lib

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "tests" / "fixtures" / "levels" / "demo_level.obj"


def extension_tool() -> Path:
    """blender_ext.py shipped in the bpy wheel (runs with plain Python)."""
    bpy_dir = Path(importlib.util.find_spec("bpy").origin).parent
    found = sorted(bpy_dir.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    assert found, f"Blender's extension tool is missing under {bpy_dir}"
    return found[-1]


def tracked_files() -> list[str]:
    """Every file of the repository (git's list, as in the working tree), which the extension tool
    filters by the manifest's paths_exclude_pattern."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, text=True, check=True)
    return [name for name in listed.stdout.split("\0") if name and (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def extension_zip(tmp_path_factory) -> Path:
    """The zip scripts/build_extension.sh makes, run in a copy of the repository's files (it writes
    wheels/): every top-level folder a checkout has is offered to the manifest's exclude patterns."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for name in tracked_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    result = subprocess.run(
        ["bash", str(source / "scripts" / "build_extension.sh"), str(out)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    zips = list(out.glob("*.zip"))
    assert len(zips) == 1, zips
    return zips[0]


def test_manifest_validates():
    result = subprocess.run(
        [sys.executable, str(extension_tool()), "validate", str(ROOT)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_zip_validates_and_holds_only_the_extension(extension_zip):
    result = subprocess.run(
        [sys.executable, str(extension_tool()), "validate", str(extension_zip)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    names = zipfile.ZipFile(extension_zip).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"blender_manifest.toml", "__init__.py", "README.md", "wheels", "navmesh_addon"}
    # What ships of the add-on is exactly its tracked files (nothing left out or added by the patterns).
    addon = {name for name in tracked_files() if name.startswith("navmesh_addon/")}
    assert {name for name in names if name.startswith("navmesh_addon/") and not name.endswith("/")} == addon
    assert "navmesh_addon/cli.py" in names
    assert not any(name.endswith(".pyc") or "__pycache__" in name for name in names)
    (wheel,) = [name for name in names if name.startswith("wheels/")]
    with zipfile.ZipFile(zipfile.ZipFile(extension_zip).open(wheel)) as library:
        inside = library.namelist()
    for required in ("pipeline.py", "collada.py", "query/__init__.py"):
        assert f"blender_navmesh/{required}" in inside


def test_the_manifest_lists_the_wheel_of_this_version():
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    assert manifest["version"] == version
    assert manifest["wheels"] == [f"./wheels/blender_navmesh-{version}-py3-none-any.whl"]


def imported_modules(folder: str) -> list[tuple[str, str]]:
    """(file, module) for every import in the folder's Python files; a relative import names its
    module as written (from . import lib: lib; from ..lib import x: lib)."""
    import ast

    found = []
    for path in (ROOT / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module] if node.module else [alias.name for alias in node.names]
            else:
                continue
            found += [(str(path.relative_to(ROOT)), n) for n in names]
    return found


def test_nothing_outside_lib_imports_it_as_lib():
    """The add-on, tests, benchmark and scripts import the library by one name, blender_navmesh; a
    second name would load second copies of its modules and classes."""
    offenders = [
        f"{path}: {name}"
        for folder in ("navmesh_addon", "tests", "bench", "scripts", "levels")
        for path, name in imported_modules(folder)
        if name.split(".")[0] == "lib"
    ]
    assert not offenders


def test_benchmark_and_levels_do_not_reach_into_the_tests():
    """The level builders both use live in levels/; the benchmark runs without the test suite."""
    offenders = [
        f"{path}: {name}"
        for folder in ("bench", "levels")
        for path, name in imported_modules(folder)
        if name.split(".")[0] == "tests"
    ]
    assert not offenders


INSTALL_SCRIPT = textwrap.dedent("""
    import importlib, json, os, sys
    import bpy

    zip_path, demo, out = sys.argv[1:4]
    result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
    module = "bl_ext.user_default.navmesh"
    enabled = module in bpy.context.preferences.addons
    bpy.ops.mesh.primitive_plane_add(size=10.0)
    bake = bpy.ops.navmesh.bake()
    baked = [o.name for o in bpy.data.objects if o.get("navmesh_generated")]
    polygons = bpy.data.objects[baked[0]]["navmesh"]["polygons"] if baked else 0
    cli = importlib.import_module(module + ".navmesh_addon.cli")
    code = cli.main(["bake", demo, "--output", out, "--preset", "Human"])
    print("RESULT " + json.dumps({
        "install": sorted(result), "enabled": enabled, "bake": sorted(bake), "polygons": polygons,
        "cli_code": code, "toplevel_lib_imported": "lib" in sys.modules,
        "library": sys.modules["blender_navmesh"].__file__,
        "user_dir": bpy.utils.user_resource("EXTENSIONS"),
    }))
    # The bpy module of Blender 4.2 crashes in the interpreter's teardown once a property with an
    # update callback is registered: leave without it, as the CLI does.
    sys.stdout.flush()
    os._exit(0)
""")


def test_install_from_disk_enables_and_bakes(extension_zip, tmp_path):
    """Installed into an empty user folder, the extension registers, bakes through bpy.ops, and its
    CLI bakes the demo level, all without the repository on sys.path."""
    user = tmp_path / "user"
    user.mkdir()
    script = tmp_path / "install_and_bake.py"
    script.write_text(INSTALL_SCRIPT)
    out = tmp_path / "demo.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["BLENDER_USER_RESOURCES"] = str(user)
    run = subprocess.run(
        [sys.executable, str(script), str(extension_zip), str(DEMO), str(out)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert run.returncode == 0 and lines, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads(lines[-1][len("RESULT ") :])
    assert report["install"] == ["FINISHED"]
    assert report["enabled"]
    assert Path(report["user_dir"]).resolve().is_relative_to(user.resolve())
    assert (user / "extensions" / "user_default" / "navmesh" / "blender_manifest.toml").is_file()
    assert report["bake"] == ["FINISHED"] and report["polygons"] >= 1
    assert not report["toplevel_lib_imported"]
    # the library the add-on runs is the wheel Blender installed with it, not this checkout's
    assert Path(report["library"]).resolve().is_relative_to((user / "extensions").resolve())
    assert report["cli_code"] == 0, run.stderr[-3000:]
    mesh = lib.load(out)
    assert mesh.polygon_count >= 5 and mesh.params.agent_radius == pytest.approx(0.4)


def test_every_package_under_lib_is_in_the_wheel_list():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(("blender_navmesh", *p.parent.relative_to(ROOT / "lib").parts))
        for p in (ROOT / "lib").rglob("__init__.py")
    }
    assert listed == found


def test_the_library_installs_as_blender_navmesh_with_numpy_only_and_bakes(tmp_path):
    """pip builds the wheel from the checkout; installed alone (no checkout on the path), it bakes
    and answers a path query under its own name."""
    wheels, target, source = tmp_path / "wheels", tmp_path / "site", tmp_path / "source"
    # Built from a copy: setuptools leaves build/ and *.egg-info beside the sources.
    shutil.copytree(ROOT / "lib", source / "lib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    build = subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = wheels.glob("blender_navmesh-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [line for line in archive.read(metadata).decode().splitlines() if line.startswith("Requires-Dist")]
        assert requires == ["Requires-Dist: numpy"]
        assert not any(n.startswith(("lib/", "tests/", "navmesh_addon/")) for n in archive.namelist())
    install = subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(target), str(wheel)], capture_output=True, text=True
    )
    assert install.returncode == 0, install.stderr[-2000:]
    script = textwrap.dedent("""
        import blender_navmesh as nm
        from blender_navmesh.query import NavMeshQuery
        floor = [[0, 0, 0], [6, 0, 0], [6, 6, 0], [0, 6, 0]]
        mesh = nm.generate(floor, [[0, 1, 2], [0, 2, 3]], nm.BakeParams(agent_radius=0.3))
        path = NavMeshQuery(mesh).find_path((1, 1, 0), (5, 5, 0))
        print(mesh.polygon_count, path.status, round(path.length, 6), nm.__file__)
    """)
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    polygons, status, length, where = run.stdout.split()
    assert int(polygons) >= 1 and status == "found"
    assert float(length) == pytest.approx(4 * 2**0.5, abs=1e-6)
    assert Path(where).is_relative_to(target)


def test_build_extension_sets_up_the_venv_on_a_fresh_clone(tmp_path):
    """Without .venv and without $PYTHON, build_extension.sh runs scripts/setup.sh first (here a
    stand-in that records the call and stops), rather than failing on a missing .venv/bin/python."""
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "build_extension.sh", tmp_path / "scripts" / "build_extension.sh")
    (tmp_path / "scripts" / "setup.sh").write_text('touch "$(dirname "$0")/../setup-ran"\nexit 42\n')
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "BLENDER")}
    result = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "build_extension.sh")], env=env, capture_output=True, text=True
    )
    assert (tmp_path / "setup-ran").exists(), result.stderr
    assert result.returncode == 42 and "No such file" not in result.stderr
