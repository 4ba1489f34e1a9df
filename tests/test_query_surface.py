"""Raycast and move_along_surface at their edge cases: rays along portals, through vertices shared
by several polygons, from vertices and edges; moves that slide along a wall on a sloped polygon."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blender_navmesh import BakeParams, generate
from blender_navmesh.errors import NavMeshError
from blender_navmesh.query import NavMeshQuery
from levels import Scene, random_solids


def _thin_walls_level(seed: int) -> Scene:
    """A 20 m floor (a 10 x 10 grid of squares) with 8 random boxes, thin walls and pillars turned at
    random: many polygons meeting at vertices, edges at every angle."""
    xs = np.linspace(0.0, 20.0, 11)
    return random_solids(Scene().terrain(xs, xs, lambda x, y: 0.0 * x), np.random.default_rng(seed), 8)


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


def _exit_oracle(mesh, polygons, s, e, tol: float = 1e-7) -> float:
    """The first fraction at which the segment s -> e (XY) leaves the union of the polygons seen
    from above (inf if never): each polygon, grown by tol, clipped exactly to an interval of the
    segment, and the intervals merged from 0."""
    d = e - s
    length = float(np.hypot(*d))
    spans = []
    for p in polygons:
        v = mesh.vertices[mesh.polygon(p)][:, :2]
        u = np.roll(v, -1, axis=0) - v
        band = tol * np.hypot(u[:, 0], u[:, 1])
        off_s = u[:, 0] * (s[1] - v[:, 1]) - u[:, 1] * (s[0] - v[:, 0]) + band  # >= 0 inside
        rate = u[:, 0] * d[1] - u[:, 1] * d[0]
        lo, hi = 0.0, 1.0
        for o, r in zip(off_s, rate):
            if abs(r) < 1e-300:
                if o < 0:
                    lo, hi = 1.0, 0.0
            elif r > 0:
                lo = max(lo, -o / r)
            else:
                hi = min(hi, -o / r)
        if lo <= hi:
            spans.append((lo, hi))
    reach, gap = 0.0, tol / max(length, tol)
    for lo, hi in sorted(spans):
        if lo <= reach + gap:
            reach = max(reach, hi)
    return math.inf if reach >= 1.0 - gap else reach


def _agrees(t: float, mesh, polygons, s, e) -> bool:
    """Does t lie between where the segment leaves the polygons grown by 1e-13 and by 1e-7 m (the
    walk's own tolerance is 1e-9 m; a segment leaving a corner at a shallow angle stays within a
    tolerance of it for a while), to 1e-9 m?"""
    slack = 1e-9 / max(float(np.hypot(*(e - s))), 1e-9)
    lo, hi = _exit_oracle(mesh, polygons, s, e, 1e-13), _exit_oracle(mesh, polygons, s, e, 1e-7)
    return lo - slack <= t <= hi + slack or t == hi == math.inf


@pytest.mark.parametrize("seed", [0, 1])
def test_rays_along_portals_through_shared_vertices_and_from_vertices_stop_only_where_they_leave(seed):
    """A ray along the edge two polygons share runs on past its end vertex into the polygons beyond;
    one through a vertex where several polygons meet goes on into the one beyond it, not stopped by
    the first edge there that leads nowhere. Every ray agrees with the exact union of the floor's
    polygons (each gets its own level's cases: rays from every vertex along each edge, through each
    vertex from the polygon's centre, from each vertex in a random direction)."""
    scene = _thin_walls_level(seed)
    query = NavMeshQuery(generate(scene.vertices, scene.triangles, BakeParams(agent_radius=0.3)))
    mesh = query.mesh
    floor = _floor_polygons(mesh)
    rng = np.random.default_rng(seed)
    wrong = []
    count = 0
    for p in floor:
        v = mesh.vertices[mesh.polygon(p)][:, :2]
        c = v.mean(axis=0)
        for i in range(len(v)):
            a, b = v[i], v[(i + 1) % len(v)]
            for s, e in ((a, a + 2.5 * (b - a)), (c, c + 2.0 * (a - c)), (a, a + rng.normal(0, 3, 2))):
                hit = query.raycast([*s, 0.0], [*e, 0.0])
                count += 1
                if not _agrees(hit.t, mesh, floor, s, e):
                    wrong.append((s.tolist(), e.tolist(), hit.t, _exit_oracle(mesh, floor, s, e)))
                if hit.t != math.inf:
                    assert np.linalg.norm(hit.normal) == pytest.approx(1.0)
    assert count > 300 and not wrong, f"{len(wrong)} of {count}: {wrong[:3]}"


def test_a_ray_along_a_portal_runs_on_past_its_end_vertex():
    """The tester's reproducer: a floor with two boxes; the portal between two polygons ends at a
    vertex three polygons share, and the ray along it stays on the mesh until 0.88 (0.40 before)."""
    scene = Scene().floor(0, 0, 10, 10).box((3, 5, -0.1), (2, 2, 2)).box((7, 4, -0.1), (1, 3, 2))
    query = NavMeshQuery(generate(scene.vertices, scene.triangles, BakeParams(agent_radius=0.5)))
    a, b = np.array([4.407498647393212, 3.5]), np.array([5.9714219241889, 2.1335281043607597])
    mesh = query.mesh
    assert min(np.hypot(*(mesh.vertices[:, :2] - a).T)) < 1e-6 and min(np.hypot(*(mesh.vertices[:, :2] - b).T)) < 1e-6
    for reach in (2.5, 1.8):
        e = a + reach * (b - a)
        hit = query.raycast([*a, 0.0], [*e, 0.0])
        assert _agrees(hit.t, mesh, range(mesh.polygon_count), a, e)
        assert hit.t == pytest.approx({2.5: 0.8782, 1.8: math.inf}[reach], abs=1e-4)
        assert len(hit.polygons) >= 2


@pytest.mark.parametrize("scale", [0.01, 1.0, 100.0])
def test_a_path_over_a_ridge_follows_it_at_any_scale(scale):
    """The same level as a miniature, at full size and at 100 times, every parameter scaled: the path
    climbs over the 1.5 m ridge alike. A fixed 2 cm drape tolerance drew the 1:100 path straight
    through the hill (16.000 instead of 16.663, scaled back)."""
    ridge = Scene().floor(-6, 0, 0, 4).ramp(0, 0, 3, 4, 0, 1.5).ramp(3, 0, 6, 4, 1.5, 0).floor(6, 0, 12, 4)
    lengths = dict(cell_size=0.15, agent_radius=0.4, agent_height=2.0, agent_max_climb=0.35, max_edge_error=0.2)
    params = BakeParams(
        **{k: v * scale for k, v in lengths.items()}, max_height_error=0.1 * scale, region_min_area=scale**2
    )
    mesh = generate(ridge.vertices * scale, ridge.triangles, params)
    path = NavMeshQuery(mesh).find_path(np.array([-5, 2, 0]) * scale, np.array([11, 2, 0]) * scale)
    assert path.status == "found"
    over_ridge = 2 * math.hypot(3, 1.5) + 10  # 16.708 along the centre line; the path cuts the ridge's top
    assert 16.6 < path.length / scale <= over_ridge
    assert np.interp(3 * scale, path.points[:, 0], path.points[:, 2]) / scale > 1.4
