"""glTF export through Blender's exporter, and a path found in it by three-pathfinding (Node)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import bpy
import numpy as np
import pytest

from lib.navmesh import to_y_up
from navmesh_addon import io_formats
from tests.fixtures.io import navmeshes

JS_DIR = Path(__file__).parent / "js"


@pytest.fixture
def empty_blender():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    yield bpy.context
    bpy.ops.wm.read_factory_settings(use_empty=True)


def read_glb(path: Path) -> tuple[dict, bytes]:
    """The JSON and BIN chunks of a .glb file."""
    data = path.read_bytes()
    magic, version, _ = struct.unpack_from("<4sII", data, 0)
    assert (magic, version) == (b"glTF", 2)
    chunks, offset = {}, 12
    while offset < len(data):
        length, kind = struct.unpack_from("<I4s", data, offset)
        chunks[kind] = data[offset + 8 : offset + 8 + length]
        offset += 8 + length
    return json.loads(chunks[b"JSON"]), chunks[b"BIN\x00"]


def accessor(doc: dict, binary: bytes, index: int) -> np.ndarray:
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    dtype = {5123: np.uint16, 5125: np.uint32, 5126: np.float32}[acc["componentType"]]
    width = {"SCALAR": 1, "VEC3": 3}[acc["type"]]
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    return np.frombuffer(binary, dtype=dtype, count=acc["count"] * width, offset=start).reshape(acc["count"], -1)


def test_glb_holds_the_y_up_surface_named_for_godot_with_extras(empty_blender, tmp_path):
    mesh = navmeshes.mixed()
    keep = bpy.data.objects.new("Keep", None)
    empty_blender.scene.collection.objects.link(keep)
    keep.select_set(True)
    path = io_formats.write_navmesh_file(mesh, tmp_path / "level.glb", "glb", context=empty_blender)

    doc, binary = read_glb(path)
    (node,) = doc["nodes"]
    assert node["name"] == "level-navmesh"
    assert doc["meshes"][node["mesh"]]["name"] == "level-navmesh"
    extras = node["extras"]["navmesh"]
    assert extras["format"] == "navmesh" and extras["units"] == "meter"
    assert extras["areas"] == mesh.areas.tolist() and extras["neighbors"] == mesh.neighbors.tolist()
    assert extras["params"]["agent_radius"] == pytest.approx(mesh.params.agent_radius)

    (prim,) = doc["meshes"][node["mesh"]]["primitives"]
    positions = accessor(doc, binary, prim["attributes"]["POSITION"]).astype(np.float64)
    triangles = accessor(doc, binary, prim["indices"]).reshape(-1, 3)
    assert len(triangles) == int(np.sum(mesh.polygon_sizes - 2))
    expected = to_y_up(mesh.vertices)
    nearest = np.abs(positions[:, None, :] - expected[None, :, :]).max(axis=2).min(axis=1)
    assert nearest.max() < 1e-6, "every exported position is a navmesh vertex, converted to +Y up"
    # Triangles are counter-clockwise seen from +Y: their normals point up.
    a, b, c = (positions[triangles[:, k]] for k in range(3))
    assert np.all(np.cross(b - a, c - a)[:, 1] > 0)

    assert [o.name for o in bpy.data.objects] == ["Keep"], "the temporary export object is removed"
    assert len(bpy.data.meshes) == 0
    assert keep.select_get(), "the user's selection is restored"


def test_glb_without_godot_suffix_keeps_the_plain_name(empty_blender, tmp_path):
    path = io_formats.write_navmesh_file(
        navmeshes.l_corridor(), tmp_path / "out.glb", "glb", name="floor", godot_suffix=False
    )
    doc, _ = read_glb(path)
    assert [n["name"] for n in doc["nodes"]] == ["floor"]


def _node_project() -> Path:
    """tests/js installed into a cache directory keyed by its package.json (npm install once)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to check the glTF export with three-pathfinding")
    package = (JS_DIR / "package.json").read_bytes()
    cache = Path(os.environ.get("NAVMESH_JS_CACHE", Path.home() / ".cache" / "navmesh-tests"))
    project = cache / f"js-{hashlib.sha256(package).hexdigest()[:12]}"
    project.mkdir(parents=True, exist_ok=True)
    shutil.copy(JS_DIR / "package.json", project / "package.json")
    shutil.copy(JS_DIR / "path.mjs", project / "path.mjs")
    if not (project / "node_modules" / "three-pathfinding").is_dir():
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund"], cwd=project, capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            pytest.skip(f"npm install of three-pathfinding failed (offline?): {done.stderr.strip()[-300:]}")
    return project


def three_pathfinding_path(glb: Path, start, goal) -> dict:
    """Run tests/js/path.mjs on a .glb; start and goal are Blender (Z-up) points."""
    project = _node_project()
    coords = [f"{c:.9g}" for c in np.concatenate([to_y_up([start])[0], to_y_up([goal])[0]])]
    done = subprocess.run(
        ["node", str(project / "path.mjs"), str(glb), *coords], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


def test_three_pathfinding_finds_the_known_shortest_path(empty_blender, tmp_path):
    path = io_formats.write_navmesh_file(navmeshes.l_corridor(), tmp_path / "l.glb", "glb")
    result = three_pathfinding_path(path, navmeshes.L_START, navmeshes.L_GOAL)
    assert result["length"] == pytest.approx(navmeshes.L_LENGTH, rel=0.02)
    corner = to_y_up([(8.0, 2.0, 0.5)])[0]
    assert any(np.allclose(p, corner, atol=1e-4) for p in result["points"]), "the path turns at the inner corner"


def test_three_pathfinding_agrees_with_our_query_within_two_percent(empty_blender, tmp_path):
    query = pytest.importorskip("lib.query", reason="lib.query (path queries) is not in this checkout yet")
    mesh = navmeshes.l_corridor()
    path = io_formats.write_navmesh_file(mesh, tmp_path / "l.glb", "glb")
    theirs = three_pathfinding_path(path, navmeshes.L_START, navmeshes.L_GOAL)
    ours = query.find_path(mesh, np.array(navmeshes.L_START), np.array(navmeshes.L_GOAL))
    assert ours.length == pytest.approx(theirs["length"], rel=0.02)
