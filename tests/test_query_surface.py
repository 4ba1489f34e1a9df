"""Raycast and move_along_surface at their edge cases: rays along portals, through vertices shared
by several polygons, from vertices and edges; moves that slide along a wall on a sloped polygon."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blender_navmesh import BakeParams, generate
from blender_navmesh.errors import NavMeshError
from blender_navmesh.query import NavMeshQuery
from levels import Scene


def _thin_walls_level(seed: int) -> Scene:
    """A 20 m floor (a 10 x 10 grid of squares) with 8 random boxes, thin walls and pillars turned at
    random: many polygons meeting at vertices, edges at every angle."""
    xs = np.linspace(0.0, 20.0, 11)
    scene = Scene().terrain(xs, xs, lambda x, y: 0.0 * x)
    rng = np.random.default_rng(seed)
    for _ in range(8):
        kind = rng.integers(3)
        cx, cy = rng.uniform(2, 18, 2)
        if kind == 0:
            sx, sy = rng.uniform(0.5, 4, 2)
        elif kind == 1:
            sx, sy = rng.uniform(3, 8), rng.uniform(0.1, 0.25)
        else:
            sx = sy = rng.uniform(0.3, 0.8)
        scene.box((cx, cy, -0.1), (sx, sy, 2.5), math.degrees(rng.uniform(0, math.pi)))
    return scene


@pytest.fixture(scope="module")
def thin_walls():
    scene = _thin_walls_level(0)
    return NavMeshQuery(generate(scene.vertices, scene.triangles, BakeParams(agent_radius=0.3)))


def _floor_polygons(mesh) -> list[int]:
    return [p for p in range(mesh.polygon_count) if mesh.vertices[mesh.polygon(p)][:, 2].mean() < 0.5]


def test_a_ray_from_a_wall_edge_heading_out_hits_at_t_zero_never_below(thin_walls):
    """t is in [0, 1]: a hit at the start is 0, not a rounding error below it."""
    mesh = thin_walls.mesh
    rng = np.random.default_rng(1)
    ts = []
    for p in _floor_polygons(mesh):
        vs = mesh.vertices[mesh.polygon(p)]
        for i in range(len(vs)):
            m = 0.5 * (vs[i] + vs[(i + 1) % len(vs)])
            hit = thin_walls.raycast(m, [*(m[:2] + rng.normal(0, 3, 2)), m[2]])
            ts.append(hit.t)
            assert hit.t == math.inf or 0.0 <= hit.t <= 1.0
    assert ts.count(0.0) >= 10  # rays out of the mesh from its own edge


def test_a_move_sliding_along_a_wall_ends_on_the_surface_of_a_ramp():
    """A move blocked by a ramp's side edge slides along it; the point it ends at is on the surface
    (the detail surface, which leaves the polygon's edge where the ramp meets the platform), not on
    the straight line between the edge's corners (0.44 m under the surface here)."""
    scene = Scene().floor(0, 0, 20, 12).ramp(4, 3, 10, 8, 0, 3).box((13, 5.5, 2.8), (6, 5, 0.2))
    query = NavMeshQuery(generate(scene.vertices, scene.triangles, BakeParams(agent_radius=0.3)))
    end, polys = query.move_along_surface((7.0, 5.5, 1.5), (7.0, 1.0, 1.5))
    assert end[1] > 3.0  # stopped at the ramp's side, not dropped to the floor
    assert end[2] == pytest.approx(query.index.height(polys[-1], end[:2]), abs=1e-9)
    assert end[2] == pytest.approx(query.locate(end).point[2], abs=1e-9)
    assert end[2] == pytest.approx((end[0] - 4.0) / 2.0, abs=0.1)  # the real ramp


def test_a_query_on_something_not_a_navmesh_is_a_navmesh_error():
    for bad in ({"vertices": []}, None, "level.navmesh.json"):
        with pytest.raises(NavMeshError, match="needs a NavMesh"):
            NavMeshQuery(bad)
