"""glTF export through Blender's exporter, and a path found in it by three-pathfinding (Node)."""
from __future__ import annotations

import bpy
import numpy as np
import pytest

from lib.navmesh import to_y_up
from navmesh_addon import io_formats
from tests.fixtures.io import navmeshes
from tests.fixtures.io.gltf_tools import accessor, read_glb, three_pathfinding_path


@pytest.fixture
def empty_blender():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    yield bpy.context
    bpy.ops.wm.read_factory_settings(use_empty=True)


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


def test_three_pathfinding_finds_the_known_shortest_path(empty_blender, tmp_path):
    path = io_formats.write_navmesh_file(navmeshes.l_corridor(), tmp_path / "l.glb", "glb")
    result = three_pathfinding_path(path, navmeshes.L_START, navmeshes.L_GOAL)
    assert result["length"] == pytest.approx(navmeshes.L_LENGTH, rel=0.02)
    corner = to_y_up([(8.0, 2.0, 0.5)])[0]
    assert any(np.allclose(p, corner, atol=1e-4) for p in result["points"]), "the path turns at the inner corner"


def test_three_pathfinding_agrees_with_our_query_within_two_percent(empty_blender, tmp_path):
    from lib import query
    mesh = navmeshes.l_corridor()
    path = io_formats.write_navmesh_file(mesh, tmp_path / "l.glb", "glb")
    theirs = three_pathfinding_path(path, navmeshes.L_START, navmeshes.L_GOAL)
    ours = query.find_path(mesh, np.array(navmeshes.L_START), np.array(navmeshes.L_GOAL))
    assert ours.length == pytest.approx(theirs["length"], rel=0.02)
