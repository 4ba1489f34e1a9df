"""Polygon stage: region outlines with holes -> few convex polygons, welded across regions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from shapely.geometry import LineString, Point, Polygon
from shapely.ops import unary_union

from blender_navmesh.contours import RegionOutline
from blender_navmesh.contours.trace import OFF_WALL
from blender_navmesh.geometry import min_width
from blender_navmesh.params import BakeParams
from blender_navmesh.polygons import build_polygons
from blender_navmesh.polygons.repair import _SHORT_EDGE_REFLEX, _weld_t_junctions
from blender_navmesh.triangulate import SLIVER_WIDTH
from tests.navmesh_checks import assert_valid_navmesh, polygon_xy


def outline(rings, region=0, area=0, z=0.0, neighbors=None) -> RegionOutline:
    """RegionOutline from xy rings (outer CCW, holes CW), walls everywhere unless neighbors given."""
    rings3 = [np.column_stack([np.asarray(r, dtype=np.float64), np.full(len(r), z)]) for r in rings]
    nbs = neighbors or [np.full(len(r), -1, dtype=np.int64) for r in rings]
    return RegionOutline(region, area, rings3, [np.asarray(n, dtype=np.int64) for n in nbs])


def covered_area(mesh) -> float:
    return unary_union([Polygon(polygon_xy(mesh, p)) for p in range(mesh.polygon_count)]).area


SQUARE = [(0, 0), (4, 0), (4, 4), (0, 4)]
L_SHAPE = [(0, 0), (4, 0), (4, 1), (1, 1), (1, 4), (0, 4)]
HOLE = [(1, 1), (1, 3), (3, 3), (3, 1)]


def zigzag_corridor(teeth: int) -> list[tuple[float, float]]:
    """A corridor bent like a saw: each bend has one notch on one side (r = teeth - 1 notches)."""
    lower = [(2.0 * i, 2.0 * (i % 2)) for i in range(teeth + 1)]
    upper = [(2.0 * i, 2.0 * (i % 2) + 1.5) for i in range(teeth, -1, -1)]
    return lower + upper


def notches(ring) -> int:
    xy = np.asarray(ring, dtype=np.float64)
    d1 = np.roll(xy, -1, axis=0) - xy
    d0 = np.roll(d1, 1, axis=0)
    return int(np.sum(d0[:, 0] * d1[:, 1] - d0[:, 1] * d1[:, 0] < -1e-12))


def test_square_is_one_polygon():
    mesh = build_polygons([outline([SQUARE])], BakeParams())
    assert_valid_navmesh(mesh)
    assert mesh.polygon_count == 1
    assert mesh.area_xy() == pytest.approx(16.0)


def test_l_shape_is_two_polygons():
    mesh = build_polygons([outline([L_SHAPE], region=3, area=5)], BakeParams())
    assert_valid_navmesh(mesh)
    assert mesh.polygon_count == 2
    assert mesh.regions.tolist() == [3, 3] and mesh.areas.tolist() == [5, 5]
    assert mesh.area_xy() == pytest.approx(7.0)


def test_square_with_square_hole_is_at_most_four_polygons():
    mesh = build_polygons([outline([SQUARE, HOLE])], BakeParams())
    assert_valid_navmesh(mesh)
    assert mesh.polygon_count <= 4
    assert covered_area(mesh) == pytest.approx(12.0)


@pytest.mark.parametrize("teeth", [4, 7, 10])
def test_zigzag_is_near_the_notch_lower_bound(teeth):
    ring = zigzag_corridor(teeth)
    r = notches(ring)
    mesh = build_polygons([outline([ring])], BakeParams(max_verts_per_poly=6))
    assert_valid_navmesh(mesh)
    assert mesh.polygon_count <= r + 1
    assert mesh.polygon_count >= math.ceil(r / 2) + 1
    assert covered_area(mesh) == pytest.approx(Polygon(ring).area)


def square_hole(cx: float, cy: float, half: float) -> list[tuple[float, float]]:
    """A square hole, clockwise."""
    return [(cx - half, cy - half), (cx - half, cy + half), (cx + half, cy + half), (cx + half, cy - half)]


def test_hall_with_a_grid_of_pillars_is_near_the_notch_bound():
    """16 notches around 4 pillars: at least ceil(16 / 2) + 1 - 4 = 5 convex polygons."""
    hall = [(0, 0), (20, 0), (20, 20), (0, 20)]
    pillars = [square_hole(x, y, 1.0) for x in (6, 14) for y in (6, 14)]
    mesh = build_polygons([outline([hall, *pillars])], BakeParams(max_verts_per_poly=6))
    assert_valid_navmesh(mesh)
    assert 5 <= mesh.polygon_count <= 8
    assert covered_area(mesh) == pytest.approx(400.0 - 16.0)


def test_no_new_vertex_on_a_border_shared_with_another_region():
    """The L's notch faces a border it shares with region 1: a vertex there would be a T-junction
    for region 1, so the cut ends at an existing vertex instead. ((3, 0), straight on both sides
    of the border, may go from both.)"""
    l_region = [(0, 0), (3, 0), (6, 0), (6, 2), (2, 2), (2, 6), (0, 6)]
    below = [(0, 0), (0, -3), (6, -3), (6, 0), (3, 0)]
    mesh = build_polygons(
        [
            outline([l_region], region=0, neighbors=[[1, 1, -1, -1, -1, -1, -1]]),
            outline([below], region=1, neighbors=[[-1, -1, -1, 0, 0]]),
        ],
        BakeParams(),
    )
    assert_valid_navmesh(mesh)
    on_border = {float(x) for x, y in mesh.vertices[:, :2] if y == 0}
    assert {0.0, 6.0} <= on_border <= {0.0, 3.0, 6.0}


@st.composite
def orthogonal_blob(draw):
    """A union of random grid squares: many notches, holes and pinched corners."""
    from shapely.geometry import box as shapely_box
    from shapely.geometry.polygon import orient

    cells = draw(st.sets(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=6, max_size=60))
    blob = unary_union([shapely_box(x, y, x + 1, y + 1) for x, y in cells]).simplify(0)
    parts = [blob] if blob.geom_type == "Polygon" else list(blob.geoms)
    return orient(max(parts, key=lambda g: g.area), 1.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(orthogonal_blob(), st.integers(4, 8))
def test_orthogonal_blobs_decompose_exactly_within_the_notch_bound(shape, maxv):
    rings = [list(shape.exterior.coords)[:-1]] + [list(h.coords)[:-1] for h in shape.interiors]
    mesh = build_polygons([outline(rings)], BakeParams(max_verts_per_poly=maxv))
    assert_valid_navmesh(mesh)
    assert covered_area(mesh) == pytest.approx(shape.area, rel=1e-9)
    assert mesh.area_xy() == pytest.approx(shape.area, rel=1e-9), "polygons overlap"
    if maxv == 8:
        # Every notch needs at most one cut; each cut from a hole first joins it to the rest.
        assert mesh.polygon_count <= sum(notches(r) for r in rings) - len(rings) + 2


@pytest.mark.parametrize("mode", ["fat", "first", "far"])
def test_triangulating_keeps_vertices_that_lie_straight_between_others(mode):
    """Ear clipping of a polygon with straight vertices can end on a flat remainder; those vertices
    must stay in the triangles, or the polygon next door sees a T-junction."""
    from blender_navmesh.triangulate import ear_clip

    ring = [
        (8.279, 0.3),
        (8.279, 2.3),
        (7.6, 4.3),
        (7.3, 4.7),
        (6.8, 5.3 + 0.2 / 3),
        (0.5, 13.7),
        (0.3, 13.51),
        (0.3, 0.3),
    ]
    xy = np.array(ring, dtype=float)
    tris = ear_clip(list(range(len(ring))), xy, mode)
    assert {v for t in tris for v in t} == set(range(len(ring)))
    assert sum(Polygon(xy[t]).area for t in tris) == pytest.approx(Polygon(ring).area)
    assert all(Polygon(xy[t]).area > 0 for t in tris)


@st.composite
def loops_meeting_at_a_point(draw):
    """A floor and a lobe, each star-shaped about its centre, that both start at P = (1, 0)."""

    def star(centre, radius, count):
        angles = sorted(draw(st.lists(st.floats(0.2, 2 * math.pi - 0.2), min_size=count, max_size=count, unique=True)))
        radii = draw(st.lists(st.floats(*radius), min_size=count, max_size=count))
        start = math.atan2(-centre[1], 1.0 - centre[0])
        return [(1.0, 0.0)] + [
            (centre[0] + r * math.cos(start + a), centre[1] + r * math.sin(start + a)) for a, r in zip(angles, radii)
        ]

    gap = draw(st.floats(0.3, 1.0))
    return star((0.0, 0.0), (0.3, 1.0), draw(st.integers(3, 9))), star(
        (1.0 + gap, 0.0), (0.1, gap), draw(st.integers(2, 7))
    )


@pytest.mark.parametrize("mode", ["fat", "first", "far"])
@settings(max_examples=150, deadline=None)
@given(loops_meeting_at_a_point())
def test_triangulating_a_ring_that_passes_a_point_twice_covers_each_loop_once(mode, loops):
    """The ring walks the floor from P, then the lobe from P, passing P twice. No ear may span the
    wedge outside the floor between the two loops, and each loop is cut to the end (fuzz case
    528349: triangles overlapping across a pinch)."""
    from blender_navmesh.triangulate import ear_clip

    floor_xy, lobe_xy = loops
    floor, lobe = Polygon(floor_xy), Polygon(lobe_xy)
    assume(floor.is_valid and lobe.is_valid and floor.exterior.is_ccw and lobe.exterior.is_ccw)
    assume(floor.intersection(lobe).equals(Point(1.0, 0.0)))
    xy = np.array(floor_xy + lobe_xy[1:])
    ring = list(range(len(floor_xy))) + [0] + list(range(len(floor_xy), len(xy)))
    tris = ear_clip(ring, xy, mode)
    assert tris is not None
    pieces = [Polygon(xy[t]) for t in tris]
    assert sum(piece.area for piece in pieces) == pytest.approx(floor.area + lobe.area, rel=1e-9), "overlap"
    assert unary_union(pieces).symmetric_difference(unary_union([floor, lobe])).area <= 1e-9 * floor.area


def test_max_three_vertices_gives_triangles():
    mesh = build_polygons([outline([SQUARE, HOLE])], BakeParams(max_verts_per_poly=3))
    assert_valid_navmesh(mesh)
    assert np.all(mesh.polygon_sizes == 3)
    assert covered_area(mesh) == pytest.approx(12.0)


def test_two_regions_weld_along_their_shared_border():
    # Region 0 = [0,2]x[0,2], region 1 = [2,4]x[0,2]; the shared border has an extra vertex (2, 1).
    left = [(0, 0), (2, 0), (2, 1), (2, 2), (0, 2)]
    right = [(2, 0), (4, 0), (4, 2), (2, 2), (2, 1)]
    a = outline([left], region=0, neighbors=[[-1, 1, 1, -1, -1]])
    b = outline([right], region=1, neighbors=[[-1, -1, -1, 0, 0]])
    mesh = build_polygons([a, b], BakeParams())
    assert_valid_navmesh(mesh)
    assert len(mesh.vertices) == 6, "shared border vertices are welded, and (2, 1), straight on both sides, goes"
    assert mesh.polygon_count == 2
    assert sorted(mesh.regions.tolist()) == [0, 1]
    assert np.sum(mesh.neighbors >= 0) == 2, "the border is one portal both ways"


def test_a_straight_vertex_stays_where_a_neighbour_turns_at_it():
    # Region 1 is a triangle whose corner (2, 1) lies straight on region 0's side.
    left = [(0, 0), (2, 0), (2, 1), (2, 2), (0, 2)]
    right = [(2, 1), (2, 0), (4, 1)]
    a = outline([left], region=0, neighbors=[[-1, 1, -1, -1, -1]])
    b = outline([right], region=1, neighbors=[[0, -1, -1]])
    mesh = build_polygons([a, b], BakeParams())
    assert_valid_navmesh(mesh)
    assert (2.0, 1.0) in set(map(tuple, mesh.vertices[:, :2].tolist()))


def test_collinear_wall_vertices_are_dropped_but_where_a_portal_ends_kept():
    ring = [(0, 0), (1, 0), (2, 0), (3, 0), (3, 3), (0, 3)]
    mesh = build_polygons([outline([ring])], BakeParams())
    assert mesh.polygon_count == 1 and mesh.polygon_sizes.tolist() == [4]
    below = [(1, 0), (1, -1), (2, -1), (2, 0)]
    mesh = build_polygons(
        [outline([ring], neighbors=[[-1, 7, -1, -1, -1, -1]]), outline([below], region=7, neighbors=[[-1, -1, -1, 0]])],
        BakeParams(),
    )
    assert_valid_navmesh(mesh)
    assert {(1.0, 0.0), (2.0, 0.0)} <= set(map(tuple, mesh.vertices[:, :2].tolist()))


def test_hole_touching_the_outer_ring_at_a_vertex():
    hole = [(0, 2), (2, 3), (2, 1)]  # clockwise, touches the outer ring at (0, 2)
    outer = [(0, 0), (4, 0), (4, 4), (0, 4), (0, 2)]
    mesh = build_polygons([outline([outer, hole], neighbors=[[0, 0, 0, 0, 0], [0, 0, 0]])], BakeParams())
    assert_valid_navmesh(mesh)
    assert covered_area(mesh) == pytest.approx(16.0 - 2.0)


def test_thin_sliver_region_is_cut_without_crashing():
    # Narrower than SLIVER_WIDTH cells: no walkable strip that thin survives voxelisation.
    ring = [(0, 0), (10, 0), (10, 1e-3), (0, 1e-3)]
    mesh = build_polygons([outline([ring])], BakeParams())
    assert mesh.is_empty and len(mesh.vertices) == 0


def test_empty_and_degenerate_outlines_give_an_empty_polygon_mesh():
    """(The bake then returns an empty NavMesh saying the outlines were too small to hold a polygon.)"""
    mesh = build_polygons([outline([[(0, 0), (1, 0), (2, 0)]])], BakeParams())
    assert mesh.is_empty and len(mesh.vertices) == 0
    assert build_polygons([], BakeParams()).is_empty


def test_vertices_keep_their_heights():
    mesh = build_polygons([outline([L_SHAPE], z=2.5)], BakeParams())
    assert np.all(mesh.vertices[:, 2] == 2.5)


@st.composite
def polygon_with_holes(draw):
    """A star-shaped outer ring (CCW) with up to 3 disjoint square holes (CW) inside its kernel disc.

    max_verts_per_poly >= 4 here: with triangles only, finely sampled arcs force needle triangles.
    """
    n = draw(st.integers(3, 24))
    angles = np.sort(
        np.array(draw(st.lists(st.floats(0, 2 * np.pi, exclude_max=True), min_size=n, max_size=n, unique=True)))
    )
    gaps = np.diff(np.concatenate([angles, [angles[0] + 2 * np.pi]]))
    if gaps.min() < 1e-2 or gaps.max() > 1.4:  # keep the holes' disc (radius 3) inside the ring
        angles = np.linspace(0, 2 * np.pi, n, endpoint=False)
    radii = np.array(draw(st.lists(st.floats(4.0, 10.0), min_size=n, max_size=n)))
    outer = np.round(np.column_stack([radii * np.cos(angles), radii * np.sin(angles)]), 3)
    centres = [(-1.5, -1.5), (1.5, -1.5), (0.0, 1.5)]
    k = draw(st.integers(0, 3))
    holes = []
    for cx, cy in centres[:k]:
        h = draw(st.floats(0.2, 0.6))
        holes.append([(cx - h, cy - h), (cx - h, cy + h), (cx + h, cy + h), (cx + h, cy - h)])
    maxv = draw(st.integers(4, 8))
    return outer.tolist(), holes, maxv


# A reflex corner 1.3 mm off its neighbours' line (at (5.123, -4.299)), filled: a strip that
# thin outside the ring, as the thin-corner trim allows.
FILLED_REFLEX_CORNER = (
    [
        [4.0, 0.0], [3.759, 1.368], [3.064, 2.571], [2.0, 3.464], [0.695, 3.939], [-0.695, 3.939],
        [-2.0, 3.464], [-3.064, 2.571], [-3.759, 1.368], [-4.0, 0.0], [-3.759, -1.368], [-3.064, -2.571],
        [-2.0, -3.464], [-0.695, -3.939], [0.695, -3.939], [3.0, -5.196], [5.123, -4.299], [8.222, -2.993],
    ],
    [],
    4,
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(polygon_with_holes())
@example(FILLED_REFLEX_CORNER)
def test_random_polygons_with_holes_decompose_exactly(case):
    outer, holes, maxv = case
    shape = Polygon(outer, holes)
    if not shape.is_valid:
        return
    params = BakeParams(max_verts_per_poly=maxv)
    mesh = build_polygons([outline([outer, *holes])], params)
    assert_valid_navmesh(mesh)
    covered = unary_union([Polygon(polygon_xy(mesh, p)) for p in range(mesh.polygon_count)])
    assert mesh.area_xy() == pytest.approx(covered.area, rel=1e-9), "polygons overlap"
    # Only corners narrower than the sliver width (a point all but on its neighbours' line) are cut,
    # and only reflex corners a hundredth of a cell wide (a fortieth beside an edge shorter than a
    # sliver's width) are filled: the floor they add is a strip that thin along the outline.
    cs = params.cell_size
    assert covered.area >= shape.area - SLIVER_WIDTH * cs * shape.length
    assert shape.difference(covered).buffer(-SLIVER_WIDTH * cs / 2).is_empty
    filled = max(OFF_WALL, _SHORT_EDGE_REFLEX * SLIVER_WIDTH) * cs
    assert covered.difference(shape).area <= filled * shape.length
    assert covered.difference(shape).buffer(-filled / 2).is_empty


def test_a_spike_on_a_hole_is_dropped_and_the_hole_kept_as_it_is(caplog):
    """A hole outline that runs out to a point and back along one line (fuzz case 370718) touches
    itself: its spike is dropped before the test for self-contact, not the hole replaced by its
    convex hull (which covered floor, and made a wall edge over max_edge_len)."""
    hole = [(1, 1), (1, 3), (3, 3), (3.5, 3.5), (3, 3), (3, 1)]  # clockwise, a spike at (3, 3)
    mesh = build_polygons([outline([SQUARE, hole])], BakeParams())
    assert_valid_navmesh(mesh)
    assert covered_area(mesh) == pytest.approx(16.0 - 4.0)
    assert "convex hull" not in caplog.text


def test_self_intersecting_hole_becomes_its_hull_and_is_never_walkable():
    bowtie = [(1, 1), (3, 3), (3, 1), (1, 3)]  # crosses itself at (2, 2)
    mesh = build_polygons([outline([SQUARE, bowtie])], BakeParams())
    assert_valid_navmesh(mesh)
    assert covered_area(mesh) == pytest.approx(16.0 - 4.0)
    assert not unary_union([Polygon(polygon_xy(mesh, p)) for p in range(mesh.polygon_count)]).contains(
        Polygon([(1.1, 1.1), (2.9, 1.1), (2.9, 2.9), (1.1, 2.9)]).centroid
    )


def test_a_vertex_inside_an_edge_across_is_welded_into_it():
    """Two triangles end at (1, 0), inside the edge (0, 0)-(2, 0) of the triangle across (a chord
    cut straight through a vertex): the vertex goes into that edge, and the sides pair up."""
    xyz = np.array([(0, 0, 0), (2, 0, 0), (1, 2, 0), (1, 0, 0), (0, -1, 0), (2, -1, 0), (3, 3, 0)], float)
    polys = [[0, 1, 2], [0, 4, 3], [3, 4, 5], [3, 5, 1]]
    welded, source = _weld_t_junctions(polys, xyz, 6, 0.0)
    assert welded[0] == [0, 3, 1, 2] and welded[1:] == polys[1:] and source == [0, 1, 2, 3]
    directed = {(p[k - 1], p[k]) for p in welded for k in range(len(p))}
    assert {(0, 3), (3, 1)} <= directed and {(3, 0), (1, 3)} <= directed


def test_a_welded_polygon_over_the_vertex_limit_is_cut():
    xyz = np.array([(0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0), (1, 0, 0), (1, -1, 0)], float)
    welded, source = _weld_t_junctions([[0, 1, 2, 3], [0, 5, 4], [4, 5, 1]], xyz, 4, 0.0)
    assert sorted(source) == [0, 0, 1, 2] and all(len(p) <= 4 for p in welded)
    assert sum(abs(Polygon(xyz[p, :2]).area) for p, s in zip(welded, source) if s == 0) == pytest.approx(4.0)


def test_a_vertex_only_touching_an_edge_is_not_welded():
    """Two regions pinching together at a point of a wall edge share nothing there."""
    xyz = np.array([(0, 0, 0), (2, 0, 0), (1, 2, 0), (1, 0, 0), (0.5, -1, 0), (1.5, -1, 0)], float)
    polys = [[0, 1, 2], [3, 4, 5]]
    assert _weld_t_junctions(polys, xyz, 6, 0.0) == (polys, [0, 1])


def test_a_strip_along_a_long_wall_gets_feet_on_the_wall_not_needles():
    """Fuzz case 33684's region (cell size 1.9 m, triangles only): a hole's corner 26 cm above a
    205 m wall, its edges rising slowly from it. Every triangle on the whole wall reaches from the
    wall's ends to that corner, a needle; with the corner's foot on the wall the strip is cut
    across there. The floor stays exactly the outline's."""
    outer = [
        (220.9705, 5.0558), (220.9376, 107.3158), (213.3372, 114.407), (221.1378, 122.3433),
        (221.0778, 211.6739), (219.2676, 212.0345), (13.8775, 6.6445), (16.1366, 5.0529),
    ]  # fmt: skip
    hole = [(69.4922, 16.5741), (87.5364, 68.2761), (120.9749, 56.4391), (102.8162, 5.3148)]
    mesh = build_polygons([outline([outer, hole])], BakeParams(cell_size=1.9, max_verts_per_poly=3))
    assert_valid_navmesh(mesh)
    wall = Polygon(outer).exterior
    assert any(wall.distance(Point(p)) < 1e-9 and abs(p[0] - 102.8162) < 1.0 for p in mesh.vertices[:, :2].tolist())
    assert covered_area(mesh) == pytest.approx(Polygon(outer).area - Polygon(hole).area)


def test_a_thin_spike_whose_tip_lies_beyond_its_base_is_cut_off():
    """Fuzz case 81455: a lobe of floor joined to a corridor by a neck 5.5 mm wide, with a spike
    5.5 mm wide beside the neck whose short side runs back past its base corner: its tip (x 4.9543)
    is 7.6 mm from the base's end but within 5.5 mm of the base's line, so the floor given up by
    cutting it is a strip thinner than 0.05 cells. Kept, a sliver is forced (every convex polygon
    at the neck meets the spike's base corner at a reflex angle); cut, none is, and at most that
    triangle of floor is lost."""
    lobe = [
        (4.6026, 6.9513), (4.9275, 6.9272), (4.9671, 6.9618), (5.1153, 6.724), (5.2928, 6.7073),
        (5.2972, 6.7877), (5.3145, 6.8646), (5.3896, 7.0894), (5.1334, 7.0894), (4.9543, 6.9645),
        (4.9617, 6.963), (4.6387, 6.9635),
    ]  # fmt: skip
    params = BakeParams(cell_size=0.1446, max_verts_per_poly=4)
    mesh = build_polygons([outline([lobe])], params)
    widths = [min_width(polygon_xy(mesh, p)) for p in range(mesh.polygon_count)]
    assert min(widths) >= SLIVER_WIDTH * params.cell_size
    spike = Polygon([(5.1334, 7.0894), (4.9543, 6.9645), (4.9617, 6.963)])
    assert Polygon(lobe).area - spike.area - 1e-9 <= covered_area(mesh) <= Polygon(lobe).area + 1e-9


def test_a_pinch_narrower_than_a_sliver_is_closed_at_three_vertices_a_polygon():
    """Fuzz case 393512's region, cut down: a spike of floor runs out to a ramp's foot past a wall
    corner (3.162, 1.494) that comes within 9 mm of the middle of the wall edge across (under 0.05
    cells at 0.25 m cells). At three vertices a polygon every triangle across that gap is a
    sliver; the corner moves onto its foot on the wall edge, the floor pinches to that point, and
    the floor on each side is decomposed on its own. The floor given up is the gap's strip."""
    ring = [
        (2.0, 1.0), (2.709, 1.225), (3.106, 1.458), (3.46, 1.623), (3.543, 1.71), (3.857, 1.857),
        (4.053, 1.647), (4.053, 1.9), (3.673, 1.986), (3.542, 1.727), (3.162, 1.494), (3.019, 1.457),
        (2.893, 1.48), (2.775, 1.531), (2.0, 2.0),
    ]  # fmt: skip
    params = BakeParams(cell_size=0.25, max_verts_per_poly=3)
    mesh = build_polygons([outline([ring])], params)
    assert_valid_navmesh(mesh)
    widths = [min_width(polygon_xy(mesh, p)) for p in range(mesh.polygon_count)]
    assert min(widths) >= SLIVER_WIDTH * params.cell_size
    corner = mesh.vertices[np.argmin(np.hypot(*(mesh.vertices[:, :2] - (3.162, 1.494)).T)), :2]
    assert LineString([(3.106, 1.458), (3.46, 1.623)]).distance(Point(corner)) < 1e-9
    assert Polygon(ring).area - 0.003 <= covered_area(mesh) <= Polygon(ring).area + 1e-9


def test_a_hole_inside_another_hole_is_dropped_and_the_floor_keeps_the_outer_one(caplog):
    """Fuzz case 434388: the contour stage left a small hole inside a wrapped obstacle's outline.
    No bridge from it to the outline can pass the obstacle, so it was dropped with a warning that
    a hole had been ignored (the warning the fuzzer hunts, as it usually means floor over an
    obstacle). A hole inside another excludes nothing more: it is dropped before the bridges, and
    a hole beside the obstacle still is one."""
    floor = [(0, 0), (10, 0), (10, 10), (0, 10)]
    # A square wall 1 m thick round a courtyard, open at the bottom (a hole: clockwise).
    wall = [(2, 2), (4.5, 2), (4.5, 3), (3, 3), (3, 7), (7, 7), (7, 3), (5.5, 3), (5.5, 2), (8, 2), (8, 8), (2, 8)]
    wall = wall[::-1]
    walled = [(7.3, 4.0), (7.3, 4.5), (7.7, 4.5), (7.7, 4.0)]  # inside the wall
    inside = [(5.5, 5.5), (5.5, 6.5), (6.5, 6.5), (6.5, 5.5)]  # in the courtyard
    beside = [(8.8, 8.8), (8.8, 9.4), (9.4, 9.4), (9.4, 8.8)]
    obstacle = Polygon(wall)
    assert obstacle.contains(Polygon(walled)) and not obstacle.intersects(Polygon(inside))
    assert not obstacle.intersects(Polygon(beside))
    mesh = build_polygons([outline([floor, wall, walled, inside, beside])], BakeParams(max_verts_per_poly=3))
    assert_valid_navmesh(mesh)
    assert "ignored" not in caplog.text
    expected = Polygon(floor).difference(unary_union([obstacle, Polygon(inside), Polygon(beside)]))
    assert covered_area(mesh) == pytest.approx(expected.area)


@pytest.mark.parametrize("shape", ["room with pillars", "star"])
def test_at_three_vertices_a_polygon_a_region_takes_the_fewest_triangles_its_outline_allows(shape):
    """With triangles only, notch portals cannot make larger polygons, and their feet on the walls
    add vertices, so triangles: a room with four square pillars took 30 triangles and a 16-point
    star 22, where a triangulation of the outline takes n + 2h - 2 (26 and 14). The plain
    triangulation is compared too, and kept when it has no more slivers."""
    if shape == "star":
        radius = [9.0 if k % 2 == 0 else 3.0 for k in range(16)]
        angles = [k * math.pi / 8 for k in range(16)]
        rings = [[(10 + r * math.cos(a), 10 + r * math.sin(a)) for r, a in zip(radius, angles)]]
    else:
        pillars = [[(x, y), (x, y + 1), (x + 1, y + 1), (x + 1, y)] for x, y in [(3, 3), (8, 12), (14, 5), (15, 15)]]
        rings = [[(0, 0), (20, 0), (20, 20), (0, 20)], *pillars]
    mesh = build_polygons([outline(rings)], BakeParams(max_verts_per_poly=3))
    assert_valid_navmesh(mesh)
    assert mesh.polygon_count == sum(len(r) for r in rings) + 2 * (len(rings) - 1) - 2
    assert covered_area(mesh) == pytest.approx(Polygon(rings[0], rings[1:]).area)


def test_a_corner_all_but_straight_goes_after_a_spike_beside_it_is_cut_off():
    """Fuzz case 300455 (max_verts_per_poly 3): a thin spike of floor cut off left a wall edge
    0.8 mm long beside a reflex corner 20 microns off its neighbours' line; every triangle on that
    edge was a needle. The floor a cut changes is measured on its own side of the new edge: the
    spike was given up on the other side, so it does not make the corner's strip look wide."""
    from blender_navmesh.polygons.repair import _trim_thin_corners

    a, corner, tip, w, b = (0, 0), (1.0, 0.00002), (1.0004, -0.14), (1.0008, 0), (2, 0)
    xy = np.array([a, corner, tip, w, b, (2, 2), (0, 2)], dtype=float)
    assert _trim_thin_corners([list(range(7))], xy, np.ones(7, int), set(), 0.015, 0.003, 0.0)[0] == [0, 3, 4, 5, 6]
    # A slit into the floor instead, on the corner's side: the slit goes (0.8 mm wide, under
    # reflex_thin), and the corner stays, as the floor both add together reaches 14 cm.
    xy[2] = (1.0004, 0.14)
    trimmed = _trim_thin_corners([list(range(7))], xy, np.ones(7, int), set(), 0.015, 0.003, 0.0)[0]
    assert 1 in trimmed and 2 not in trimmed


def test_a_reflex_corner_all_but_on_its_neighbours_line_is_dropped_and_a_deeper_one_kept():
    """Fuzz case 20872: a hole's corner 0.3 mm off the line of its neighbours left a wall edge
    9 mm long whose only triangle was a sliver, cut off into a crack. A reflex corner whose
    triangle is narrower than reflex_thin goes (the floor it adds reaches no farther than that
    into the agent's band), or half `thin` beside an edge shorter than `thin`; a deeper one stays.
    A convex one goes under `thin`."""
    from blender_navmesh.polygons.repair import _trim_thin_corners

    def trimmed(dent: float) -> list[int]:
        xy = np.array([(0, 0), (1, dent), (2, 0), (2, 2), (0, 2)], dtype=float)
        return _trim_thin_corners([[0, 1, 2, 3, 4]], xy, np.ones(5, int), set(), 0.015, 0.003, 0.0)[0]

    assert trimmed(0.0003) == [0, 2, 3, 4]  # reflex, 0.3 mm: dropped
    assert trimmed(0.005) == [0, 1, 2, 3, 4]  # reflex, 5 mm: kept
    assert trimmed(-0.005) == [0, 2, 3, 4]  # convex, 5 mm, under `thin`: cut off
    # On a border shared with another region, or used by another ring: kept.
    xy = np.array([(0, 0), (1, 0.0003), (2, 0), (2, 2), (0, 2)], dtype=float)
    assert _trim_thin_corners([[0, 1, 2, 3, 4]], xy, np.ones(5, int), {(0, 1)}, 0.015, 0.003, 0.0)[0] == [0, 1, 2, 3, 4]
    assert _trim_thin_corners([[0, 1, 2, 3, 4]], xy, np.array([1, 2, 1, 1, 1]), set(), 0.015, 0.003, 0.0)[0] == [
        0,
        1,
        2,
        3,
        4,
    ]
    # Fuzz case 26942: 5 mm deep but beside a wall edge 7 mm long, shorter than a sliver's width,
    # whose every triangle reaches a far corner: dropped up to half that width (the edge's other
    # end, on a shared border here, stays). Beside a wall edge 5 cm long: kept.
    for end, kept in ((1.005, [0, 2, 3, 4, 5]), (1.05, [0, 1, 2, 3, 4, 5])):
        short = np.array([(0, 0), (1, 0.005), (end, 0), (2, 0), (2, 2), (0, 2)], dtype=float)
        assert _trim_thin_corners([[0, 1, 2, 3, 4, 5]], short, np.ones(6, int), {(2, 3)}, 0.015, 0.003, 0.0)[0] == kept
    # Fuzz case 5797: another ring (or this one again) passes through the new edge's end, and its
    # edges there could cross the floor gained: kept.
    assert _trim_thin_corners([[0, 1, 2, 3, 4]], xy, np.array([2, 1, 1, 1, 1]), set(), 0.015, 0.003, 0.0)[0] == [
        0,
        1,
        2,
        3,
        4,
    ]


@pytest.mark.parametrize("maxv", [3, 4])
def test_a_sliver_on_a_border_between_regions_is_regrouped_with_the_polygon_across(maxv):
    """Fuzz case 23145: a region's wall 5 mm from its border with another region leaves a sliver of
    floor along the border that its own region cannot regroup (the border's edges stay). Regrouped
    with the polygon across the border, the union is cut again without one; the pieces take that
    polygon's region and area. Within one region nothing changes here."""
    from blender_navmesh.polygons.merge import _is_sliver
    from blender_navmesh.polygons.repair import _regrouped_across_borders

    xy = np.array([(0, 0), (0.005, 0.5), (0, 1), (-1, 0.5)], dtype=float)  # A, B (5 mm off A-C), C, P
    sliver, across = [0, 1, 2], [2, 3, 0]
    polys, regions, areas = _regrouped_across_borders([sliver, across], [1, 0], [1, 0], xy, maxv, 0.015)
    assert not any(_is_sliver(xy[p], 0.015) for p in polys)
    assert regions == [0] * len(polys) and areas == [0] * len(polys)
    assert sum(Polygon(xy[p]).area for p in polys) == pytest.approx(Polygon(xy[[3, 0, 1, 2]]).area)
    assert _regrouped_across_borders([sliver, across], [0, 0], [1, 0], xy, maxv, 0.015)[0] == [sliver, across]


def test_a_sliver_is_cut_off_only_where_the_polygons_across_it_would_not_face_each_other():
    """Fuzz cases 6827 and 8890: a triangle sliver cut off whose longest edge and another edge had
    polygons across left those two facing each other a few millimetres apart: a crack. Polygons
    across edges that run opposite ways face each other; across a triangle's two short edges they
    lie end to end along its long one. A spike of floor that hangs on the sliver alone, smaller
    than the region's minimum area, may go with it; floor reached another way, or past a shared
    border, or larger, may not."""
    from blender_navmesh.polygons.repair import _facing, _lobe

    # Sliver S = A, C, B (C 5 mm below A-B); Q across its long edge B->A, spike L across A->C.
    xy = np.array([(0, 0), (0.5, -0.005), (1, 0), (1, 1), (0, 1), (0.2, -0.3)], dtype=float)
    A, C, B, D, E, P = range(6)
    sliver, q, spike = [A, C, B], [A, B, D, E], [C, A, P]
    current = [sliver, q, spike]
    owner = {(poly[k - 1], poly[k]): p for p, poly in enumerate(current) for k in range(len(poly))}
    edges = [(A, C), (C, B), (B, A)]
    assert _facing(edges, owner, xy, 0.015)  # Q and L both across
    assert not _facing(edges, {e: p for e, p in owner.items() if p != 1}, xy, 0.015)  # L alone
    assert not _facing(edges, {e: p for e, p in owner.items() if p != 2}, xy, 0.015)  # Q alone
    # A strip 5 mm wide with polygons across its two ends: they lie its length apart.
    strip_xy = np.array([(0, 0), (1, 0), (1, 0.005), (0, 0.005)], dtype=float)
    assert not _facing([(1, 2), (3, 0)], {(2, 1): 1, (0, 3): 2}, strip_xy, 0.015)
    assert _facing([(0, 1), (2, 3)], {(1, 0): 1, (3, 2): 2}, strip_xy, 0.015)  # along its long sides
    # Fuzz case 49706: a triangle's two edges with polygons across meet at its corner at an angle.
    corner_xy = np.array([(0, 0), (0.1191, 0.0277), (-0.0068, 0.0129)], dtype=float)
    assert not _facing([(1, 2), (2, 0)], {(2, 1): 1, (0, 2): 2}, corner_xy, 0.017)
    assert _lobe(0, 2, current, owner, xy, set(), most=1.0) == [2]
    assert _lobe(0, 2, current, owner, xy, set(), most=0.05) is None  # the spike holds 0.075 m²
    assert _lobe(0, 2, current, owner, xy, {(A, P)}, most=1.0) is None  # a border leads on from it
    assert _lobe(0, 1, current, owner, xy, set(), most=10.0) == [1]
    assert _lobe(0, None, current, owner, xy, set(), most=1.0) is None


def test_a_rough_polygon_is_cut_across_its_middle_leaving_its_neighbours_as_they_are():
    """lib.polygons.rough: a 10 m square beside a 2 m strip, the square too large for its floor's
    relief. It is cut into two convex halves across its middle; the cut ends inside its walls, never
    inside the edge it shares with the strip (that would be a T-junction), so the strip keeps its
    corners, and it points across that edge to the half that holds it. A polygon too small to cut
    into halves two cells wide is left as it is."""
    from blender_navmesh.navmesh import PolyMesh
    from blender_navmesh.polygons import split_rough

    vertices = np.array([(0, 0, 0), (10, 0, 0), (10, 10, 0), (0, 10, 0), (12, 0, 0), (12, 10, 0)], dtype=float)
    params = BakeParams(cell_size=0.3)
    mesh = PolyMesh.from_polygons([[0, 1, 2, 3], [1, 4, 5, 2]], [0, 0], [0, 0], vertices, params)
    cut, ids = split_rough(mesh, [0])
    assert ids == [0] and cut.polygon_count == 3 and cut.polygon(1).tolist() == mesh.polygon(1).tolist()
    halves = [Polygon(polygon_xy(cut, p)) for p in (0, 2)]
    assert all(h.is_valid and h.exterior.is_ccw and h.area == pytest.approx(50.0) for h in halves)
    assert unary_union(halves).area == pytest.approx(100.0)
    assert_valid_navmesh(cut)
    # The strip's edge from (10, 10) to (10, 0) leads to the half that holds it, and back.
    strip_slots = range(cut.poly_offsets[1], cut.poly_offsets[2])
    (back,) = [s for s in strip_slots if cut.neighbors[s] != -1]
    holder = int(cut.neighbors[back])
    assert Polygon(polygon_xy(cut, holder)).bounds[2] == pytest.approx(10.0)
    assert 1 in cut.neighbors[cut.poly_offsets[holder] : cut.poly_offsets[holder + 1]]
    # Each half sees the other across the cut.
    assert 2 in cut.neighbors[cut.poly_offsets[0] : cut.poly_offsets[1]]
    small = PolyMesh.from_polygons([[0, 1, 2, 3]], [0], [0], vertices * 0.1, params)  # 1 m, cells 0.3 m
    same, ids = split_rough(small, [0])
    assert same is small and ids == []


def test_a_rough_polygon_with_no_cut_between_its_corners_and_walls_ends_its_cut_inside_a_portal():
    """lib.polygons.rough: a 30 m right triangle whose far corners are clipped by walls 0.2 m long,
    its three long sides portals (on open rolling ground, hills seed 3 at cell 0.5, such a polygon
    of 2,472 m² kept 255 detail triangles 0.45 m off the floor: every chord between its corners and
    walls leaves a sliver, so it was never cut). The cut ends inside a portal, and the neighbour
    across it takes that end as a corner on its straight edge: the two halves and the neighbours
    still meet corner to corner."""
    from blender_navmesh.navmesh import PolyMesh
    from blender_navmesh.polygons import split_rough
    from blender_navmesh.polygons.rough import _best_cut

    p = [(0, 0), (30, 0), (29.9, 0.2), (0.2, 29.9), (0, 30)]
    others = [(0, -5), (30, -5), (35, 5), (5, 35), (-5, 30), (-5, 0)]
    vertices = np.array([(x, y, 0.0) for x, y in p + others])
    rings = [[0, 1, 2, 3, 4], [5, 6, 1, 0], [3, 2, 7, 8], [0, 4, 9, 10]]
    mesh = PolyMesh.from_polygons(rings, [0, 1, 2, 3], [0] * 4, vertices, BakeParams(cell_size=0.3))
    cut, ids = split_rough(mesh, [0])
    assert ids == [0] and cut.polygon_count == 5
    halves = [Polygon(polygon_xy(cut, q)) for q in (0, 4)]
    assert all(h.is_valid and h.exterior.is_ccw and h.area > 100.0 for h in halves)
    assert unary_union(halves).area == pytest.approx(Polygon(p).area)
    assert_valid_navmesh(cut)
    # One neighbour gained the cut's end as a corner; no other polygon changed.
    grown = [q for q in (1, 2, 3) if len(cut.polygon(q)) == len(mesh.polygon(q)) + 1]
    assert len(grown) == 1
    assert all(cut.polygon(q).tolist() == mesh.polygon(q).tolist() for q in (1, 2, 3) if q not in grown)
    assert Polygon(polygon_xy(cut, grown[0])).area == pytest.approx(Polygon(polygon_xy(mesh, grown[0])).area)
    # Neighbours with max_verts_per_poly corners already take none: no cut.
    ring, nbs = vertices[rings[0]], mesh.neighbors[: mesh.poly_offsets[1]].tolist()
    assert _best_cut(ring, nbs, 6, 0.6, {1: 2, 2: 2, 3: 2}) is not None
    assert _best_cut(ring, nbs, 6, 0.6, {1: 0, 2: 0, 3: 0}) is None
