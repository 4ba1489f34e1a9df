"""Property tests: random polygon soups through the whole generator (issue 2)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blender_navmesh import BakeParams, NavMesh, generate
from blender_navmesh.contours import build_contours
from blender_navmesh.heightfield import build_heightfield
from blender_navmesh.polygons import build_polygons
from blender_navmesh.regions import build_regions
from blender_navmesh.soup import prepare_soup
from levels import Scene
from tests.navmesh_checks import assert_valid_navmesh
from tests.soup_fuzz import KNOWN_GAPS

PARAMS = BakeParams(
    cell_size=0.2,
    agent_radius=0.3,
    agent_height=1.8,
    agent_max_climb=0.4,
    region_min_area=0.3,
    max_edge_error=0.15,
    max_height_error=0.15,
)


@st.composite
def level_soups(draw) -> Scene:
    """A floor plus boxes, ramps, stacked slabs, duplicates and degenerate triangles: a modelled level's mess."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    size = float(draw(st.floats(4.0, 14.0)))
    scene = Scene().floor(0, 0, size, size, z=float(rng.uniform(-1, 1)))
    for _ in range(draw(st.integers(0, 6))):
        cx, cy = rng.uniform(0, size, 2)
        scene.box(
            (cx, cy, rng.uniform(-0.5, 0.5)),
            (*rng.uniform(0.2, 3.0, 2), rng.uniform(0.1, 3.0)),
            float(rng.uniform(0, 180)),
            walkable=bool(rng.random() < 0.8),
        )
    for _ in range(draw(st.integers(0, 2))):
        x0, y0 = rng.uniform(0, size - 2, 2)
        scene.ramp(x0, y0, x0 + rng.uniform(1, 4), y0 + rng.uniform(1, 3), 0.0, rng.uniform(0, 3))
    for _ in range(draw(st.integers(0, 2))):  # an upper floor slab, maybe overlapping the ground floor
        x0, y0 = rng.uniform(0, size - 2, 2)
        scene.box((x0, y0, rng.uniform(1.0, 4.0)), (*rng.uniform(1, 5, 2), 0.2), float(rng.uniform(0, 90)))
    if draw(st.booleans()):  # a duplicated copy of part of the level
        scene.add(scene.vertices[:8], scene.triangles[:4] % 8)
    if draw(st.booleans()):  # degenerate triangles: a repeated index and collinear points
        n = len(scene.vertices)
        scene.add(np.array([[0, 0, 0], [1, 1, 0], [2, 2, 0]], dtype=float), [[0, 1, 2], [0, 0, 1]])
        scene.triangles[-1] = [n, n, n + 1]
    return scene


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(level_soups())
def test_random_levels_bake_into_valid_meshes(scene):
    mesh = generate(scene.vertices, scene.triangles, PARAMS, walkable=scene.walkable)
    if mesh.is_empty:
        assert mesh.empty_reason
        return
    assert_valid_navmesh(mesh, known_gaps=KNOWN_GAPS)
    lo, hi = scene.vertices.min(axis=0), scene.vertices.max(axis=0)
    assert np.all(mesh.vertices >= lo - 1e-6) and np.all(mesh.vertices <= hi + 1e-6), "vertices leave the level"
    assert np.all((mesh.detail_polygons >= 0) & (mesh.detail_polygons < mesh.polygon_count))
    covered = np.bincount(mesh.detail_polygons, minlength=mesh.polygon_count)
    assert np.all(covered > 0), "every polygon needs its height detail"
    clearance = mesh.edge_clearance
    assert clearance is not None and np.all(clearance[mesh.neighbors < 0] == 0)
    assert np.all(clearance[mesh.neighbors >= 0] >= PARAMS.agent_radius - 1e-9), (
        "a portal narrower than the bake radius"
    )
    again = NavMesh.from_json(mesh.to_json())
    assert np.array_equal(again.vertices, mesh.vertices) and np.array_equal(again.neighbors, mesh.neighbors)


def test_crate_whose_cut_ends_on_a_straight_vertex_has_no_t_junction():
    """Found by the property test above: a cell with a vertex straight between two others was
    triangulated without it, leaving a T-junction against the cell next door."""
    box = np.array(
        [[8.66414196, 2.39316454], [9.86407448, 2.82824282], [7.9891729, 4.25470848], [9.18910541, 4.68978676]]
    )
    corners = np.vstack([np.column_stack([box, np.full(4, -0.39526358)]), np.column_stack([box, np.full(4, 0.371329)])])
    floor = [[0, 0, -0.33573393], [14, 0, -0.33573393], [14, 14, -0.33573393], [0, 14, -0.33573393]]
    vertices = np.vstack([floor, corners])
    triangles = [
        [0, 1, 2],
        [0, 2, 3],
        [4, 6, 7],
        [8, 9, 11],
        [4, 5, 9],
        [6, 10, 11],
        [4, 8, 10],
        [5, 7, 11],
        [4, 7, 5],
        [8, 11, 10],
        [4, 9, 8],
        [6, 11, 7],
        [4, 10, 6],
        [5, 11, 9],
    ]
    assert_valid_navmesh(generate(vertices, np.array(triangles), PARAMS))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(level_soups())
def test_random_levels_keep_every_region_the_erosion_keeps(scene):
    """A region with room to spare after erosion comes out as polygons: the outline and polygon
    stages never drop one (they once did where outlines pinched, touched or crossed themselves)."""
    soup = prepare_soup(scene.vertices, scene.triangles, scene.walkable)
    if soup.empty_reason:
        return
    hf = build_heightfield(soup, PARAMS)
    regions = build_regions(hf, PARAMS)
    mesh = build_polygons(build_contours(hf, regions, PARAMS), PARAMS)
    cells = np.bincount(regions.region[regions.region >= 0], minlength=regions.region_count) * PARAMS.cell_size**2
    roomy = set(np.flatnonzero(cells >= 3 * PARAMS.region_min_area).tolist())
    assert roomy <= set(mesh.regions.tolist()), f"regions {sorted(roomy - set(mesh.regions.tolist()))} were lost"
