"""Exports of a baked navmesh (lib.generate): JSON, COLLADA and glTF agree with the bake."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import blender_navmesh as lib
from blender_navmesh.collada import to_collada
from levels import Scene
from tests.fixtures.io import navmeshes

SCHEMA = json.loads((Path(__file__).parent.parent / "schema" / "navmesh.schema.json").read_text())
START, GOAL = (2.0, 2.0, 0.0), (18.0, 2.0, 0.0)


@pytest.fixture(scope="module")
def baked() -> lib.NavMesh:
    """A 20 m x 10 m floor split by a wall at x = 10 that leaves a 3 m gap at the far side."""
    scene = Scene().floor(0, 0, 20, 10).wall(10, 0, 10, 7, 2.0, 0.4)
    mesh = lib.generate(scene.vertices, scene.triangles, lib.BakeParams(agent_radius=0.4), walkable=scene.walkable)
    assert not mesh.is_empty, mesh.empty_reason
    return mesh


@pytest.mark.parametrize("y_up", [False, True])
def test_baked_mesh_json_is_schema_valid_and_lossless(baked, tmp_path, y_up):
    path = tmp_path / "baked.json"
    lib.save(baked, path, y_up=y_up)
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(path.read_text()))
    navmeshes.assert_equal(lib.load(path), baked)


def test_baked_mesh_collada_keeps_every_polygon_of_a_flat_floor_whole(baked):
    import io

    import collada

    dae = collada.Collada(io.BytesIO(to_collada(baked).encode("utf-8")))
    (prim,) = dae.geometries[0].primitives
    assert len(prim) == baked.polygon_count
    for face, polygon in zip(prim, baked.polygons):
        corners = baked.vertices[polygon]
        start = int(np.argmin(np.abs(corners - face.vertices[0]).max(axis=1)))
        np.testing.assert_allclose(
            face.vertices,
            np.roll(corners, -start, axis=0),
            atol=1e-6,
            err_msg="the same corners in the same order, from the fan's apex",
        )


def test_loaded_file_answers_path_queries_like_the_bake(baked, tmp_path):
    from blender_navmesh import query

    lib.save(baked, tmp_path / "baked.json", y_up=True)
    loaded = lib.load(tmp_path / "baked.json")
    a = query.find_path(baked, np.array(START), np.array(GOAL))
    b = query.find_path(loaded, np.array(START), np.array(GOAL))
    assert b.length == a.length
    assert a.length > np.hypot(16.0, 0.0), "the wall forces a detour"


def test_three_pathfinding_on_the_glb_agrees_with_our_path_within_two_percent(baked, tmp_path):
    import bpy

    from blender_navmesh import query
    from navmesh_addon import io_formats
    from tests.fixtures.io.gltf_tools import three_pathfinding_path

    bpy.ops.wm.read_factory_settings(use_empty=True)
    path = io_formats.write_navmesh_file(baked, tmp_path / "baked.glb", "glb")
    theirs = three_pathfinding_path(path, START, GOAL)
    ours = query.find_path(baked, np.array(START), np.array(GOAL))
    assert theirs["length"] == pytest.approx(ours.length, rel=0.02)
