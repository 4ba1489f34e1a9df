"""Floors modelled as separate objects that meet edge to edge (a plank snapped to two platforms,
modular tiles with float noise between them): the seam is no ledge."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import Polygon
from shapely.ops import unary_union

from blender_navmesh import BakeParams, NavMesh, generate, query
from blender_navmesh.heightfield import build_heightfield
from blender_navmesh.soup import prepare_soup

PARAMS = BakeParams()  # cell 0.2, agent radius 0.5


def quads(rects, yaw: float) -> tuple[np.ndarray, np.ndarray]:
    """Each (x0, y0, x1, y1) a quad of its own (no shared vertices), the whole turned by yaw."""
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    v, t = [], []
    for x0, y0, x1, y1 in rects:
        n = len(v)
        v += [(c * x - s * y, s * x + c * y, 0.0) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        t += [(n, n + 1, n + 2), (n, n + 2, n + 3)]
    return np.array(v), np.array(t)


def turned(yaw: float, x: float, y: float) -> np.ndarray:
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    return np.array([c * x - s * y, s * x + c * y, 0.0])


def area(mesh: NavMesh) -> float:
    o = mesh.poly_offsets
    return unary_union(
        [Polygon(mesh.vertices[mesh.poly_vertices[o[p] : o[p + 1]]][:, :2]) for p in range(len(o) - 1)]
    ).area


@pytest.mark.parametrize("width", [1.2, 1.5])
@pytest.mark.parametrize("yaw", [0.0, 30.0, 45.0])
def test_a_plank_snapped_to_two_platforms_joins_them(width, yaw):
    """A 10 m plank whose ends touch two 10 x 10 m platforms' edges (its corners on their edges,
    no vertex shared): the free strip along it is width - 1 m wide, so a path crosses, as when the
    platforms' edges are split at its corners. Before: the platform's whole edge was a ledge across
    the plank's mouth (2 or 3 islands at widths 1.2-1.3, and 1.5 at 45 degrees)."""
    a, b = 5 - width / 2, 5 + width / 2
    v, t = quads([(0, 0, 10, 10), (20, 0, 30, 10), (10, a, 20, b)], yaw)
    mesh = generate(v, t, PARAMS)
    assert len(set(mesh.regions.tolist())) == 1
    assert query.NavMeshQuery(mesh).find_path(turned(yaw, 5, 5), turned(yaw, 25, 5)).status == "found"


def test_the_platform_edge_a_plank_is_snapped_to_is_no_ledge_across_its_mouth():
    """The boundary the heightfield gives along the platform's edge x = 10 stops at the plank's
    sides (y = 4.4 and 5.6); before, the edge's pieces clipped around each trace's exit reached a
    cell into the plank's mouth."""
    v, t = quads([(0, 0, 10, 10), (20, 0, 30, 10), (10, 4.4, 20, 5.6)], 0.0)
    soup = prepare_soup(v, t, None, None)
    hf = build_heightfield(soup, PARAMS)
    seg = hf.boundary[:, :4] + np.tile(soup.origin[:2], 2)
    on_edge = np.isclose(seg[:, 0], 10) & np.isclose(seg[:, 2], 10)
    assert on_edge.any()
    y0, y1 = np.minimum(seg[on_edge, 1], seg[on_edge, 3]), np.maximum(seg[on_edge, 1], seg[on_edge, 3])
    assert not ((y1 > 4.4 + 1e-9) & (y0 < 5.6 - 1e-9)).any()


@pytest.mark.parametrize("gap", [0.0, 1e-5, 1e-3])
@pytest.mark.parametrize("yaw", [0.0, 30.0, 45.0])
def test_modular_tiles_bake_as_one_welded_floor(gap, yaw):
    """A 1.4 m catwalk of ten 2 m tiles (separate objects) with gaps of 0, 10 um or 1 mm between
    them gives the navmesh area of one welded floor of its size, and a path along it. Before: at
    10 um the catwalk was cut at 30 degrees and lost entirely at 45 (its seams' ledges eroded it)."""
    tiles = [(k * (2 + gap), 0, k * (2 + gap) + 2, 1.4) for k in range(10)]
    v, t = quads(tiles, yaw)
    mesh = generate(v, t, PARAMS)
    one = generate(*quads([(0, 0, 20 + 9 * gap, 1.4)], yaw), PARAMS)
    assert area(mesh) == pytest.approx(area(one), abs=0.02)
    assert query.NavMeshQuery(mesh).find_path(turned(yaw, 1, 0.7), turned(yaw, 19, 0.7)).status == "found"


@pytest.mark.parametrize("yaw", [0.0, 30.0, 37.0])
def test_t_junctions_along_a_seam_cut_no_notches(yaw):
    """Four 10 x 10 m floors meeting at x = 10 and y = 10, two of them split into a grid whose
    vertices lie on the others' edges (T-junctions): the area of one 20 x 20 m floor. Before, at
    30 degrees, V-notches about 1.2 m long cut 2.4 m2 where the seams meet the border."""
    rects = [(0, 0, 10, 10), (10, 10, 20, 20)]
    rects += [(x, y, x + 2, y + 2) for x in range(10, 20, 2) for y in range(0, 10, 2)]
    rects += [(x, y, x + 10 / 3, y + 10 / 3) for x in (0, 10 / 3, 20 / 3) for y in (10, 40 / 3, 50 / 3)]
    mesh = generate(*quads(rects, yaw), PARAMS)
    one = generate(*quads([(0, 0, 20, 20)], yaw), PARAMS)
    assert area(mesh) == pytest.approx(area(one), abs=0.02)


@pytest.mark.parametrize("gap", [1e-3, 1e-2, 5e-2])
@pytest.mark.parametrize("yaw", [10.0, 30.0, 60.0])
def test_a_crack_narrower_than_a_cell_between_two_tiles_is_bridged(gap, yaw):
    """Two 10 x 10 m tiles with a crack between them: a column whose centre falls in the crack gets
    the floor around it (Recast's voxels bridge a gap narrower than a cell), so the floor is one
    island with a path across, and up to 1 cm wide the area of one floor as wide (within 0.05 m2).
    Before: a 5 cm crack split it in two at these angles, 1 mm and 1 cm cracks cut 1.5-3 m2
    notches where a column's centre fell in the crack."""
    v, t = quads([(0, 0, 10, 10), (10 + gap, 0, 20 + gap, 10)], yaw)
    mesh = generate(v, t, PARAMS)
    assert len(set(mesh.regions.tolist())) == 1
    assert query.NavMeshQuery(mesh).find_path(turned(yaw, 2, 5), turned(yaw, 18, 5)).status == "found"
    if gap <= 1e-2:  # a 5 cm crack still loses about 1.8 m2 where it meets the border at 30 degrees
        one = area(generate(*quads([(0, 0, 20 + gap, 10)], yaw), PARAMS))
        assert area(mesh) == pytest.approx(one, abs=0.05)


def test_a_column_whose_centre_falls_in_a_crack_is_floor():
    """The heightfield itself: 1 cm crack at x = 10.0-10.01 turned by 30 degrees; every column
    whose centre lies in the crack (a few along it) gets a floor span at the tiles' height."""
    yaw = 30.0
    v, t = quads([(0, 0, 10, 10), (10.01, 0, 20.01, 10)], yaw)
    soup = prepare_soup(v, t, None, None)
    hf = build_heightfield(soup, PARAMS)
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    width, height = hf.width, hf.height
    i, j = np.meshgrid(np.arange(width), np.arange(height))
    cx = hf.bmin[0] + (i.ravel() + 0.5) * hf.cell_size + soup.origin[0]
    cy = hf.bmin[1] + (j.ravel() + 0.5) * hf.cell_size + soup.origin[1]
    u, w = c * cx + s * cy, -s * cx + c * cy
    in_crack = (u > 10.0) & (u < 10.01) & (w > 0) & (w < 10)
    assert in_crack.any()
    floor = np.zeros(width * height, dtype=bool)
    floor[hf.y * width + hf.x] = True
    assert floor[in_crack].all()
