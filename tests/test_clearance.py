"""Clearance precompute: known answers on scenes whose walls are exactly known."""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blender_navmesh.navmesh import NavMesh
from tests.test_query_scenes import grid_mesh


def _vertical_portals(mesh, x):
    a = mesh.vertices[mesh.poly_vertices]
    b = mesh.vertices[mesh.edge_next_vertex]
    return np.flatnonzero((mesh.neighbors >= 0) & np.isclose(a[:, 0], x) & np.isclose(b[:, 0], x))


@pytest.mark.parametrize("r0", [0.0, 0.25])
def test_corridor_portals_admit_half_the_width_plus_bake_radius(r0):
    mesh = grid_mesh((0.0, 0.0, 10.0, 2.0), [], r0=r0, step=1.0)
    for x in (3.0, 5.0, 7.0):
        e = _vertical_portals(mesh, x)
        assert len(e) == 4  # two cells tall, both directions
        assert mesh.edge_clearance[e] == pytest.approx(r0 + 1.0, abs=1e-9)
    assert np.all(mesh.edge_clearance[mesh.neighbors < 0] == 0.0)


def test_doorway_clearance_is_half_the_door_width():
    mesh = grid_mesh((0.0, 0.0, 10.0, 10.0), [(4.8, 0.0, 5.2, 4.4), (4.8, 5.6, 5.2, 10.0)], step=1.0)
    e = _vertical_portals(mesh, 5.0)
    assert len(e) > 0
    assert mesh.edge_clearance[e].max() == pytest.approx(0.6, abs=1e-6)


def test_open_room_portal_clearance_reaches_the_room_centre():
    mesh = grid_mesh((0.0, 0.0, 10.0, 10.0), [], step=1.0)
    e = _vertical_portals(mesh, 5.0)
    assert mesh.edge_clearance[e].max() == pytest.approx(5.0, abs=1e-6)
    assert mesh.edge_clearance[e].min() == pytest.approx(1.0, abs=1e-6)  # portal y in [0, 1]


def test_cross_clearance_in_a_narrow_corridor_and_its_bounds():
    mesh = grid_mesh((0.0, 0.0, 6.0, 1.0), [], step=1.0)
    offs = mesh.cross_offsets
    p = 3  # interior cell: portals left (edge 3) and right (edge 1), walls top and bottom 1 m apart
    block = mesh.cross_clearance[offs[p] : offs[p + 1]].reshape(4, 4)
    assert block[3, 1] == pytest.approx(0.5) and block[1, 3] == pytest.approx(0.5)
    assert block[0, 1] == 0.0  # bottom edge is a wall
    ec = mesh.edge_clearance
    for q in range(mesh.polygon_count):
        n = mesh.polygon_sizes[q]
        blk = mesh.cross_clearance[offs[q] : offs[q + 1]].reshape(n, n)
        e = ec[mesh.poly_offsets[q] : mesh.poly_offsets[q + 1]]
        assert np.all(blk <= np.minimum.outer(e, e) + 1e-12)
        assert np.allclose(blk, blk.T)


def test_three_portal_polygon_admits_wide_agents_on_one_cross_only():
    # T junction: a wide corridor along x (y 0..4) with a 1 m side corridor going up at x 4..5.
    mesh = grid_mesh((0.0, 0.0, 10.0, 8.0), [(0.0, 4.0, 4.0, 8.0), (5.0, 4.0, 10.0, 8.0)], step=1.0)
    offs = mesh.cross_offsets
    # The cell x 4..5, y 3..4 has portals left, right and up.
    c = mesh.vertices[mesh.poly_vertices].reshape(-1, 4, 3).mean(axis=1)
    p = int(np.flatnonzero(np.isclose(c[:, 0], 4.5) & np.isclose(c[:, 1], 3.5))[0])
    blk = mesh.cross_clearance[offs[p] : offs[p + 1]].reshape(4, 4)
    assert blk[3, 1] == pytest.approx(1.0, abs=1e-6)  # along the wide corridor, under the wall corners
    assert blk[3, 2] == pytest.approx(0.5, abs=1e-6)  # into the 1 m side corridor


def test_clearance_survives_json_with_infinity():
    mesh = grid_mesh((0.0, 0.0, 4.0, 4.0), [], step=1.0)
    mesh = replace(mesh, edge_clearance=np.where(mesh.neighbors >= 0, math.inf, mesh.edge_clearance))
    back = NavMesh.from_json(mesh.to_json())
    assert np.array_equal(back.edge_clearance, mesh.edge_clearance)
    assert np.array_equal(back.cross_clearance, mesh.cross_clearance)


def _brute_portal_clearance(mesh, e, samples=1001):
    """max over dense portal samples of the distance to the nearest boundary edge of the whole mesh."""
    v = mesh.vertices
    p0, p1 = v[mesh.poly_vertices[e]], v[mesh.edge_next_vertex[e]]
    walls = np.flatnonzero(mesh.neighbors < 0)
    a, b = v[mesh.poly_vertices[walls]], v[mesh.edge_next_vertex[walls]]
    pts = p0 + np.linspace(0.0, 1.0, samples)[:, None] * (p1 - p0)
    ab = b - a
    t = np.clip(np.einsum("smk,mk->sm", pts[:, None] - a[None], ab) / (ab * ab).sum(1), 0.0, 1.0)
    d = np.linalg.norm(pts[:, None] - (a[None] + t[..., None] * ab[None]), axis=2)
    return d.min(axis=1).max()


@settings(max_examples=8, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(1, 3), st.integers(1, 3)), max_size=4),
    st.sampled_from([0.0, 0.3]),
)
def test_portal_clearance_matches_brute_force_on_one_floor(boxes, r0):
    # On one floor the nearest wall of any portal point is always graph-reachable (the straight
    # line to it stays in free space), so the definition reduces to all walls of the mesh.
    obstacles = [(x + 0.5, y + 0.5, x + 0.5 + w, y + 0.5 + h) for x, y, w, h in boxes]
    mesh = grid_mesh((0.0, 0.0, 10.0, 10.0), obstacles, r0=r0, step=1.0)
    v = mesh.vertices
    for e in np.flatnonzero(mesh.neighbors >= 0)[::5]:
        length = np.linalg.norm(v[mesh.edge_next_vertex[e]] - v[mesh.poly_vertices[e]])
        brute = r0 + _brute_portal_clearance(mesh, e)
        # Ours samples the exact maximum (never above it); brute force is within length/2000 of it.
        assert mesh.edge_clearance[e] <= brute + length / 2000 + 1e-9
        assert mesh.edge_clearance[e] >= brute - length / 64 - 1e-9
