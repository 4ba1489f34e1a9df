"""The taut string at the bake radius: funnel known answers, the certificate that it is the shortest
path, corridor rerouting, and agreement with the visibility-graph chain it replaces."""

import math

import numpy as np
import pytest

from blender_navmesh import BakeParams, generate
from blender_navmesh.query import NavMeshQuery, funnel
from blender_navmesh.query.graph import MeshGraph
from tests.oracle import PARAMS, random_level
from tests.test_query_scenes import ROOM, grid_mesh, two_floors, visibility_shortest

BLOCK = [(4.0, 0.0, 6.0, 6.0)]  # a wall from the room's south side: paths from west to east wrap it


def _polygon_at(query: NavMeshQuery, x: float, y: float) -> int:
    return query.locate((x, y, 0.0)).polygon


def _portal(query: NavMeshQuery, p: int, q: int) -> int:
    """The edge slot of polygon p that leads into q."""
    g = query.graph
    return next(e for e in range(g.offs_l[p], g.offs_l[p + 1]) if g.nb_l[e] == q)


def _ports(query: NavMeshQuery, portals: list[int]) -> list[tuple]:
    return [query._portal_line(e) for e in portals]


def _string_length(string) -> float:
    return sum(math.dist(a[:2], b[:2]) for a, b in zip(string, string[1:]))


def test_string_through_a_straight_corridor_has_no_bend():
    string = funnel.pull_string(
        (0.5, 0.5),
        (3.5, 0.5),
        [(1.0, 1.0, 11, 1.0, 0.0, 10), (2.0, 1.0, 21, 2.0, 0.0, 20), (3.0, 1.0, 31, 3.0, 0.0, 30)],
    )
    assert string == [(0.5, 0.5, funnel.START), (3.5, 0.5, funnel.GOAL)]


def test_string_round_a_corner_bends_at_the_inner_vertex():
    # Corridor east along y 0..1, then north through x 2..3: the string wraps the inner corner (2, 1).
    portals = [
        (1.0, 1.0, 11, 1.0, 0.0, 10),
        (2.0, 1.0, 21, 2.0, 0.0, 20),
        (2.0, 1.0, 21, 3.0, 1.0, 31),
        (2.0, 2.0, 22, 3.0, 2.0, 32),
    ]
    string = funnel.pull_string((0.5, 0.5), (2.5, 3.0), portals)
    assert [vid for _, _, vid in string] == [funnel.START, 21, funnel.GOAL]
    assert _string_length(string) == pytest.approx(math.hypot(1.5, 0.5) + math.hypot(0.5, 2.0))


@pytest.fixture(scope="module")
def block_room():
    return NavMeshQuery(grid_mesh(ROOM, BLOCK, step=1.0))


def test_certificate_accepts_a_string_wrapping_a_wall_with_no_hole_near(block_room):
    q = block_room
    result = q.find_path((2.0, 2.0, 0.0), (8.0, 2.0, 0.0))
    assert result.length == pytest.approx(
        visibility_shortest(ROOM, BLOCK, np.array([2.0, 2.0, 0]), np.array([8.0, 2.0, 0]))
    )
    cert = funnel.PlanarCertificate(q.mesh)
    string = [(2.0, 2.0, funnel.START), (4.0, 6.0, q.locate((4.0, 6.0, 0.0)).polygon), (8.0, 2.0, funnel.GOAL)]
    vertex = {tuple(v[:2]): k for k, v in enumerate(q.mesh.vertices.tolist())}
    string = [
        (2.0, 2.0, funnel.START),
        (4.0, 6.0, vertex[(4.0, 6.0)]),
        (6.0, 6.0, vertex[(6.0, 6.0)]),
        (8.0, 2.0, funnel.GOAL),
    ]
    assert cert.loose_bend(string) == -1  # both bends wrap the wall's corners
    assert cert.nothing_inside(string, q.locate((2.0, 2.0, 0.0)).polygon)


def test_a_bend_in_open_floor_is_loose(block_room):
    vertex = {tuple(v[:2]): k for k, v in enumerate(block_room.mesh.vertices.tolist())}
    v = vertex[(2.0, 8.0)]  # an interior vertex of the grid: no wall around it
    string = [(1.0, 7.0, funnel.START), (2.0, 8.0, v), (3.0, 7.0, funnel.GOAL)]
    assert funnel.PlanarCertificate(block_room.mesh).loose_bend(string) == v


def test_certificate_refuses_when_a_hole_lies_inside_the_ellipse():
    pillar = [(4.0, 4.0, 6.0, 6.0)]
    q = NavMeshQuery(grid_mesh(ROOM, pillar, step=1.0))
    cert = funnel.PlanarCertificate(q.mesh)
    vertex = {tuple(v[:2]): k for k, v in enumerate(q.mesh.vertices.tolist())}
    # Passing south of the pillar: a path north of it would be as short, so nothing is proven.
    south = [
        (2.0, 5.0, funnel.START),
        (4.0, 4.0, vertex[(4.0, 4.0)]),
        (6.0, 4.0, vertex[(6.0, 4.0)]),
        (8.0, 5.0, funnel.GOAL),
    ]
    assert cert.loose_bend(south) == -1
    assert not cert.nothing_inside(south, q.locate((2.0, 5.0, 0.0)).polygon)
    # A straight string far from the pillar proves itself.
    assert cert.nothing_inside([(1.0, 1.0, funnel.START), (9.0, 1.0, funnel.GOAL)], q.locate((1.0, 1.0, 0.0)).polygon)


def test_stacked_floors_overlap_where_one_lies_over_the_other():
    mesh = two_floors()
    centers, radii, pairs = funnel.overlaps(mesh)
    # Each of the lower floor's 24 cells (0..12, 0..2) lies under one cell of the upper floor; cells
    # that only share an edge or a corner do not overlap.
    assert len(centers) == len(pairs) == 24
    assert sorted(map(tuple, centers.tolist())) == [(x + 0.5, y + 0.5) for x in range(12) for y in range(2)]
    assert radii == pytest.approx(math.sqrt(0.5))
    heights = np.sort(mesh.vertices[mesh.poly_vertices[mesh.poly_offsets[pairs.ravel()]], 2].reshape(-1, 2), axis=1)
    assert heights.tolist() == [[0.0, 3.0]] * 24  # one polygon of each pair on each floor
    assert len(funnel.overlaps(grid_mesh(ROOM, BLOCK, step=1.0))[0]) == 0


def test_certificate_ignores_a_floor_overhead_that_connects_outside_the_ellipse():
    # Along the lower floor, well short of the ramp at x = 12: the floor above joins this one only
    # through the ramp, so no shorter path can use it.
    q = NavMeshQuery(two_floors())
    cert = funnel.PlanarCertificate(q.mesh)
    start = q.locate((1.0, 1.0, 0.0)).polygon
    assert cert.nothing_inside([(1.0, 1.0, funnel.START), (9.0, 1.0, funnel.GOAL)], start)
    # A string as long as the way round by the ramp and the floor above: that floor is in reach.
    assert not cert.nothing_inside([(1.0, 1.0, funnel.START), (12.0, 6.0, 0), (1.0, 1.5, funnel.GOAL)], start)
    path = q.find_path((1.0, 1.0, 0.0), (9.0, 1.0, 0.0))
    assert path.status == "found" and path.length == pytest.approx(8.0)


def test_reroute_takes_the_short_way_round_an_open_vertex():
    q = NavMeshQuery(grid_mesh(ROOM, [], step=1.0))
    a, north, north_east, b = (_polygon_at(q, x, y) for x, y in ((4.5, 4.5), (4.5, 5.5), (5.5, 5.5), (5.5, 4.5)))
    long_way = [_portal(q, a, north), _portal(q, north, north_east), _portal(q, north_east, b)]
    string = funnel.pull_string((4.2, 4.8), (5.8, 4.8), _ports(q, long_way))
    loose = funnel.PlanarCertificate(q.mesh).loose_bend(string)
    vertex = {tuple(v[:2]): k for k, v in enumerate(q.mesh.vertices.tolist())}
    assert loose == vertex[(5.0, 5.0)]
    short = funnel.reroute(q.graph, long_way, loose, q.r0)
    assert short == [_portal(q, a, b)]
    assert funnel.pull_string((4.2, 4.8), (5.8, 4.8), _ports(q, short)) == [
        (4.2, 4.8, funnel.START),
        (5.8, 4.8, funnel.GOAL),
    ]


def test_reroute_refuses_a_way_round_that_a_wall_closes():
    q = NavMeshQuery(grid_mesh(ROOM, BLOCK, step=1.0))
    graph: MeshGraph = q.graph
    vertex = {tuple(v[:2]): k for k, v in enumerate(q.mesh.vertices.tolist())}
    # Around the wall's corner (4, 6) the other way is the wall itself.
    a, north, north_east = (_polygon_at(q, x, y) for x, y in ((3.5, 5.5), (3.5, 6.5), (4.5, 6.5)))
    corridor = [_portal(q, a, north), _portal(q, north, north_east)]
    assert funnel.reroute(graph, corridor, vertex[(4.0, 6.0)], q.r0) is None


@pytest.mark.parametrize("seed", [3, 8])
def test_taut_paths_are_never_longer_than_the_chain_they_replace(seed, monkeypatch):
    """Random single-floor levels: the same queries with the certificate (taut strings where proven)
    and without it (every path drawn by the chain over corners) find the same paths, up to float noise."""
    level = random_level(seed)
    kw = PARAMS["r0.3"]
    mesh = generate(level.scene.vertices, level.scene.triangles, BakeParams(**kw))
    rng = np.random.default_rng(seed)
    points = level.random_points(kw["agent_radius"], 160, rng)
    taut = NavMeshQuery(mesh)
    first = [taut.find_path(s, g) for s, g in zip(points[:80], points[80:])]
    monkeypatch.setattr(funnel.PlanarCertificate, "nothing_inside", lambda self, string, start_poly: False)
    chain = NavMeshQuery(mesh)
    second = [chain.find_path(s, g) for s, g in zip(points[:80], points[80:])]
    assert [r.status for r in first] == [r.status for r in second]
    found = [(a.length, b.length) for a, b in zip(first, second) if a.status == "found"]
    assert len(found) >= 40
    assert all(a <= b + 1e-6 for a, b in found)
    assert sum(a for a, _ in found) == pytest.approx(sum(b for _, b in found), rel=1e-4)


def _nothing_inside_everywhere(cert: funnel.PlanarCertificate, string, start_poly: int) -> bool:
    """`nothing_inside` by its definition: every link end, overlap and hole of the mesh measured."""
    s, g = string[0][:2], string[-1][:2]
    length = sum(math.dist(a[:2], b[:2]) for a, b in zip(string, string[1:])) + funnel.ELLIPSE_TOL

    def focal(xy: np.ndarray) -> np.ndarray:
        return np.hypot(xy[:, 0] - s[0], xy[:, 1] - s[1]) + np.hypot(xy[:, 0] - g[0], xy[:, 1] - g[1])

    if (focal(cert._link_ends) <= length).any():
        return False
    near = np.flatnonzero(focal(cert._layer_center) - 2.0 * cert._layer_radius <= length)
    if len(near):
        floor = cert._floor_inside(start_poly, s, g, length)
        if any(a in floor and b in floor for a, b in cert._layer_pairs[near].tolist()):
            return False
    centers, pieces = cert._holes
    return not any(focal(pieces[k]).max() <= length for k in np.flatnonzero(focal(centers) <= length).tolist())


@pytest.mark.parametrize("level", ["random", "two floors"])
def test_the_certificate_measures_only_its_ellipse_s_slab_and_misses_nothing_there(level):
    """The ellipse test looks only at the places whose x its ellipse can reach: on a random level of
    pillars, walls and boxes (holes) and on two floors joined by a ramp (overlaps), strings from short
    to as long as the level give the answer of measuring every place."""
    if level == "random":
        scene = random_level(3).scene
        mesh = generate(scene.vertices, scene.triangles, BakeParams(**PARAMS["r0.3"]))
    else:
        mesh = two_floors()
    cert = funnel.PlanarCertificate(mesh)
    assert len(cert._holes[0] if level == "random" else cert._layer_center)
    lo, hi = mesh.vertices[:, :2].min(axis=0), mesh.vertices[:, :2].max(axis=0)
    rng = np.random.default_rng(5)
    strings = []
    for _ in range(300):
        s, bend, g = rng.uniform(lo, hi, size=(3, 2))
        strings.append([(*s, funnel.START), (*bend, 0), (*g, funnel.GOAL)])
        if rng.random() < 0.5:
            strings[-1] = [strings[-1][0], strings[-1][2]]
    # Strings starting just beside a place and bending far off it, either way along x: the place lies
    # near one end of a fat ellipse, as far in x from its middle as a place inside it can be.
    for cx, cy in np.concatenate([cert._holes[0], cert._layer_center]).tolist():
        for span in (-16.0, -8.0, 8.0, 16.0):
            s, g = (cx + 0.01 * span, cy), (cx - 0.99 * span, cy)
            bend = (cx - 0.49 * span, cy + 0.5 * abs(span))
            strings.append([(*s, funnel.START), (*bend, 0), (*g, funnel.GOAL)])
    answers = set()
    for string in strings:
        start_poly = int(rng.integers(mesh.polygon_count))
        answer = cert.nothing_inside(string, start_poly)
        assert answer == _nothing_inside_everywhere(cert, string, start_poly)
        answers.add(answer)
    assert answers == {True, False}
