"""Area volumes (issue 15, like Unity's NavMeshModifierVolume): a closed mesh marks the walkable
floor inside it with an area id, or removes it, without touching the level mesh."""

from __future__ import annotations

import numpy as np
import pytest

from blender_navmesh import AreaVolume, BakeParams, NavMeshError, generate
from blender_navmesh.prune import islands
from blender_navmesh.query import NavMeshQuery, QueryFilter
from levels import Scene
from tests.navmesh_checks import assert_valid_navmesh

PARAMS = BakeParams(cell_size=0.2, agent_radius=0.4, max_edge_error=0.2)
R = PARAMS.agent_radius


def box(x0, y0, x1, y1, z0=-1.0, z1=2.0) -> tuple[np.ndarray, np.ndarray]:
    """A closed, outward-facing box."""
    shell = Scene().box(((x0 + x1) / 2, (y0 + y1) / 2, z0), (x1 - x0, y1 - y0, z1 - z0))
    return shell.vertices, shell.triangles


def bake(*volumes):
    floor = Scene().floor(0, 0, 20, 10)
    return generate(floor.vertices, floor.triangles, PARAMS, volumes=list(volumes))


def area_of(mesh, area: int) -> float:
    return float(mesh.polygon_areas()[mesh.areas == area].sum())


def test_a_volume_marks_the_floor_inside_it_with_its_area():
    mesh = bake(AreaVolume(*box(5, -1, 9, 11), area=5, name="Mud"))
    assert_valid_navmesh(mesh)
    # The strip x 5..9 across the floor eroded by r at its ends; its outline may move by the edge error.
    assert area_of(mesh, 5) == pytest.approx(4 * (10 - 2 * R), abs=PARAMS.max_edge_error * 2 * (4 + 10))
    assert mesh.area_xy() == pytest.approx((20 - 2 * R) * (10 - 2 * R), rel=0.01)  # nothing lost
    west = NavMeshQuery(mesh).find_path((1, 5, 0), (19, 5, 0), filter=QueryFilter(excluded={5}))
    assert west.status != "found"  # the mud strip cuts the floor in two for a path that may not enter it


def test_a_volume_without_an_area_removes_the_floor_inside_it():
    mesh = bake(AreaVolume(*box(5, -1, 9, 11), area=None, name="No go"))
    assert_valid_navmesh(mesh)
    sizes = sorted(island.area for island in islands(mesh))
    # Two floors, each eroded by r from the removed strip as from a ledge (to a cell at the strip's edge).
    expected = sorted([(5 - 2 * R) * (10 - 2 * R), (11 - 2 * R) * (10 - 2 * R)])
    assert sizes == pytest.approx(expected, abs=PARAMS.cell_size * 2 * 10)


def test_later_volumes_paint_over_earlier_ones():
    mesh = bake(AreaVolume(*box(2, -1, 12, 11), area=5), AreaVolume(*box(6, -1, 8, 11), area=6))
    assert area_of(mesh, 6) == pytest.approx(2 * (10 - 2 * R), abs=PARAMS.max_edge_error * 2 * (2 + 10))
    assert area_of(mesh, 5) == pytest.approx(8 * (10 - 2 * R), abs=PARAMS.max_edge_error * 2 * (8 + 10))


def test_a_patch_smaller_than_region_min_area_is_kept_with_the_floor_around_it():
    """A 0.8 m mud patch (0.64 m², under region_min_area) in the middle of the floor is a region of
    that floor, not an island: it was dropped, a hole of 0.5 m² in the navmesh."""
    side = 0.8
    assert side * side < PARAMS.region_min_area
    mesh = bake(AreaVolume(*box(10 - side / 2, 5 - side / 2, 10 + side / 2, 5 + side / 2), area=5, name="Mud"))
    assert_valid_navmesh(mesh)
    assert mesh.area_xy() == pytest.approx((20 - 2 * R) * (10 - 2 * R), rel=1e-6)  # no hole
    assert area_of(mesh, 5) == pytest.approx(side * side, abs=PARAMS.max_edge_error * 4 * side)


def test_a_volume_that_is_not_closed_is_an_error_naming_it():
    vertices, triangles = box(5, -1, 9, 11)
    with pytest.raises(NavMeshError, match="'Lid' is not a closed mesh|Lid is not a closed mesh"):
        bake(AreaVolume(vertices, triangles[:-1], area=5, name="Lid"))


def test_a_volume_with_a_bad_area_is_an_error_naming_it():
    with pytest.raises(NavMeshError, match="Swamp: area 99 must be a whole number from 0 to 63"):
        bake(AreaVolume(*box(5, -1, 9, 11), area=99, name="Swamp"))
