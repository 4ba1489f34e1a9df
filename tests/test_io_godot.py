"""Godot 3 NavigationMesh (.tres) export: the file keeps the convex polygons where the floor is flat and
the detail triangles where it is not, on the real floor; Godot 3 (headless) loads it, imports the .glb's
"-navmesh" node too, and finds the paths our query finds, about as long, on the floor."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from blender_navmesh import godot
from blender_navmesh.export_surface import UNLIMITED_CLEARANCE, corner_fans
from blender_navmesh.navmesh import NavMesh
from blender_navmesh.params import BakeParams
from tests.fixtures.io import navmeshes, rolling
from tests.fixtures.io.godot_tools import fan_triangles, godot_paths, read_tres

# Godot's A* costs polygon-edge midpoints, so now and then it takes a corridor whose pulled string is
# longer than our shortest path (up to ~11% on the hills), the more often the larger the polygons;
# most paths match to a few millimetres.
LENGTH_TOLERANCE = 0.02
SHARE_WITHIN_TOLERANCE = 2 / 3
LONGEST_RATIO = 1.2


def _signed_areas(vertices: np.ndarray, polygons: list[list[int]]) -> np.ndarray:
    """Area of each polygon seen from +Z: positive when counter-clockwise."""
    areas = []
    for polygon in polygons:
        xy = vertices[polygon, :2]
        areas.append(0.5 * np.sum(xy[:, 0] * np.roll(xy[:, 1], -1) - np.roll(xy[:, 0], -1) * xy[:, 1]))
    return np.array(areas)


def test_tres_is_a_navigation_mesh_of_y_up_clockwise_faces_covering_the_polygons():
    mesh = navmeshes.mixed()
    text = godot.to_tres(mesh)
    assert text.startswith('[gd_resource type="NavigationMesh" format=2]\n\n[resource]\n')
    tres = read_tres(text)
    np.testing.assert_allclose(
        np.sort(tres["vertices"], axis=0),
        np.sort(np.unique(mesh.detail_vertices, axis=0), axis=0),
        atol=1e-12,
        err_msg="the vertices are the detail surface's, shared between faces",
    )
    areas = _signed_areas(tres["vertices"], tres["polygons"])
    assert np.all(areas < 0), "clockwise seen from above (+Y in Godot), as Godot's own baker writes them"
    assert -areas.sum() == pytest.approx(mesh.area_xy())
    assert [len(p) for p in tres["polygons"]] == mesh.polygon_sizes.tolist(), "flat polygons stay whole"
    assert tres["settings"]["agent/radius"] == mesh.params.agent_radius


def test_tres_metadata_rebuilds_the_polygons_and_their_edges():
    mesh = navmeshes.mixed()
    tres = read_tres(godot.to_tres(mesh))
    meta = tres["meta"]
    assert meta["navmesh_format"] == "navmesh" and meta["units"] == "meter"
    np.testing.assert_array_equal(meta["polygon_sizes"], mesh.polygon_sizes)
    corners = tres["vertices"][meta["polygon_corners"].astype(int)]
    np.testing.assert_allclose(corners[:, :2], mesh.vertices[mesh.poly_vertices, :2])
    np.testing.assert_array_equal(meta["edge_neighbors"], mesh.neighbors)
    np.testing.assert_array_equal(meta["polygon_regions"], mesh.regions)
    np.testing.assert_array_equal(meta["polygon_areas"], mesh.areas)
    np.testing.assert_array_equal(meta["face_polygons"], [0, 1, 2])
    np.testing.assert_array_equal(meta["edge_clearance"], np.minimum(mesh.edge_clearance, UNLIMITED_CLEARANCE))
    assert "inf" not in godot.to_tres(mesh), "Godot 3.2 writes inf but cannot read it back"


def test_tres_surface_lies_on_the_real_floor_within_max_height_error():
    mesh = rolling.navmesh()
    tres = read_tres(godot.to_tres(mesh))
    meta = tres["meta"]
    gaps = rolling.gap_to_floor(tres["vertices"], fan_triangles(tres["polygons"]))
    assert gaps.max() <= mesh.params.max_height_error + rolling.SAMPLING_SLACK, (
        "Godot fans each face from its first vertex"
    )
    assert rolling.gap_to_floor(mesh.vertices, corner_fans(mesh)[0]).max() > 3 * mesh.params.max_height_error
    faces_per_polygon = np.bincount(meta["face_polygons"].astype(int), minlength=mesh.polygon_count)
    assert faces_per_polygon.min() >= 1 and (faces_per_polygon == 1).any() and (faces_per_polygon > 1).any()
    assert len(tres["polygons"]) < len(mesh.detail_triangles), "fewer faces than the triangles Godot's importer makes"


def test_godot_paths_the_l_corridor_round_its_inner_corner(tmp_path):
    mesh = navmeshes.l_corridor()
    godot.write_tres(mesh, tmp_path / "l.tres")
    pairs = np.array([[*navmeshes.L_START, *navmeshes.L_GOAL]])
    found = godot_paths(tmp_path / "l.tres", pairs, tmp_path / "project")
    assert len(found["polygons"]) == mesh.polygon_count
    (path,) = found["paths"]
    length = np.linalg.norm(np.diff(path, axis=0), axis=1).sum()
    assert length == pytest.approx(navmeshes.L_LENGTH, rel=0.01)
    assert np.min(np.abs(path - (8.0, 2.0, 0.51)).max(axis=1)) < 1e-4, "it turns at the inner corner (detail height)"


@pytest.fixture(scope="module")
def hills_pairs():
    mesh = rolling.navmesh()
    return mesh, rolling.pairs_on(mesh, 24, seed=1)


def _check_godot(mesh, pairs, found) -> None:
    """Godot reaches what we reach, about as far, and its navmesh and paths are on the real floor."""
    ratios = rolling.length_ratios(mesh, pairs, found["paths"])
    assert ratios.min() >= 1 - LENGTH_TOLERANCE, "Godot is never shorter than our shortest path"
    assert abs(np.median(ratios) - 1) <= LENGTH_TOLERANCE
    assert np.mean(ratios <= 1 + LENGTH_TOLERANCE) >= SHARE_WITHIN_TOLERANCE
    assert ratios.max() <= LONGEST_RATIO
    limit = mesh.params.max_height_error + rolling.SAMPLING_SLACK
    assert rolling.gap_to_floor(found["vertices"], fan_triangles(found["polygons"])).max() <= limit
    points = np.vstack(found["paths"])
    on_ground = ~rolling.inside_boxes(points[:, :2])
    assert np.abs(points[on_ground, 2] - rolling.floor_height(points[on_ground, :2])).max() <= limit


def test_godot_loads_the_tres_and_finds_our_paths_on_the_hills(hills_pairs, tmp_path):
    mesh, pairs = hills_pairs
    godot.write_tres(mesh, tmp_path / "hills.tres")
    found = godot_paths(tmp_path / "hills.tres", pairs, tmp_path / "project")
    assert len(found["polygons"]) == len(read_tres((tmp_path / "hills.tres").read_text())["polygons"])
    _check_godot(mesh, pairs, found)


def test_godot_imports_the_glb_as_a_navigation_mesh_and_finds_our_paths(hills_pairs, tmp_path):
    import bpy

    from navmesh_addon import io_formats

    mesh, pairs = hills_pairs
    bpy.ops.wm.read_factory_settings(use_empty=True)
    path = io_formats.write_navmesh_file(mesh, tmp_path / "hills.glb", "glb")
    found = godot_paths(path, pairs, tmp_path / "project")
    assert len(found["polygons"]) == len(mesh.detail_triangles), "Godot's importer makes one polygon per triangle"
    assert np.all(_signed_areas(found["vertices"], found["polygons"]) < 0), (
        "wound clockwise seen from above, as the .tres"
    )
    _check_godot(mesh, pairs, found)


def test_an_empty_navmesh_is_an_empty_resource_with_its_reason():
    tres = read_tres(godot.to_tres(NavMesh.empty(BakeParams(), 'nothing "walkable"')))
    assert len(tres["vertices"]) == 0 and tres["polygons"] == []
    assert tres["meta"]["empty_reason"] == 'nothing \\"walkable\\"', "quotes escaped as Godot reads them"


@pytest.mark.parametrize("offset, warned", [(10_000.0, False), (11_000.0, True), (-50_000.0, True)])
def test_a_level_beyond_godot_3s_reach_is_warned_of(offset, warned):
    """Godot 3.2.3 returned paths ending 20 km away for a room 11 km from the origin (it keys points
    on a 1 cm grid in 21 bits), with no error: the export says so."""
    mesh = navmeshes.l_corridor()
    far = replace(
        mesh, vertices=mesh.vertices + [offset, 0.0, 0.0], detail_vertices=mesh.detail_vertices + [offset, 0.0, 0.0]
    )
    warning = godot.range_warning(far)
    assert (warning is not None) == warned
    if warned:
        assert "Godot 3 paths only within 10,486 m across" in warning and "move the level nearer the origin" in warning
