"""Contour stage: sub-cell eroded outlines checked against exact shapely offsets, shared borders."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely import affinity
from shapely.geometry import LinearRing, LineString, Point, Polygon, box

from blender_navmesh.contours import build_contours
from blender_navmesh.contours.pinches import widen_pinches
from blender_navmesh.contours.push import _prune
from blender_navmesh.contours.rings import _cut_necks, _merge_rings
from blender_navmesh.contours.swept import walls_swept
from blender_navmesh.contours.trace import OFF_WALL
from blender_navmesh.geometry import segment_distance, segments_meet_matrix, signed_area
from blender_navmesh.heightfield import LinkEnds, build_heightfield
from blender_navmesh.params import BakeParams
from blender_navmesh.regions import build_regions
from blender_navmesh.soup import prepare_soup
from tests.test_regions import layered_masks, make_heightfield, params, ramp_scene, two_rooms


def outline_polygon(outline) -> Polygon:
    return Polygon(outline.rings[0][:, :2], [r[:, :2] for r in outline.rings[1:]])


def rasterise(floor, obstacles, cs: float, w: int, h: int) -> np.ndarray:
    """Column-centre sampling: a column is floor iff its centre is inside the floor and no obstacle."""
    x, y = np.meshgrid((np.arange(w) + 0.5) * cs, (np.arange(h) + 0.5) * cs, indexing="ij")
    pts = shapely.points(x.ravel(), y.ravel())
    mask = shapely.contains(floor, pts)
    for ob in obstacles:
        mask &= ~shapely.intersects(ob, pts)
    return mask.reshape(w, h)


def bake(mask, **kw):
    hf = make_heightfield([(mask, 0.0)], cs=kw.pop("cs", 0.1))
    p = params(**kw)
    rm = build_regions(hf, p)
    return hf, rm, build_contours(hf, rm, p)


def boundary_gaps(a, b, step: float) -> np.ndarray:
    """Distance to boundary b from points every `step` along boundary a."""
    pts = shapely.get_coordinates(shapely.segmentize(a, step))
    return shapely.distance(shapely.points(pts), b)


def assert_shared_borders_match(outlines) -> None:
    """Every edge bordering region X appears reversed, bitwise, in X's outline bordering back."""
    edges = {}
    for o in outlines:
        for ring, nb in zip(o.rings, o.ring_neighbors):
            for i in np.flatnonzero(nb >= 0):
                a, b = ring[i].tobytes(), ring[(i + 1) % len(ring)].tobytes()
                edges[(o.region, int(nb[i]), a, b)] = True
    for region, other, a, b in edges:
        assert (other, region, b, a) in edges, f"edge of region {region} toward {other} has no twin"


def assert_well_formed(outlines) -> None:
    for o in outlines:
        assert len(o.rings) == len(o.ring_neighbors)
        for k, (ring, nb) in enumerate(zip(o.rings, o.ring_neighbors)):
            assert ring.shape[1] == 3 and len(ring) >= 3 and len(nb) == len(ring)
            assert LinearRing(ring[:, :2]).is_simple
            assert LinearRing(ring[:, :2]).is_ccw == (k == 0)


@settings(max_examples=6, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(-0.5, 0.5), st.floats(-0.5, 0.5), st.floats(0.4, 2.2), st.floats(0.4, 2.2), st.floats(12, 78)
        ),
        min_size=9,
        max_size=9,
    ),
    st.lists(st.booleans(), min_size=9, max_size=9),
    st.sampled_from([(0.2, 0.5, 0.2), (0.1, 0.3, 0.1), (0.3, 0.6, 0.1)]),
)
def test_rotated_boxes_match_the_exact_offset(boxes, present, setting):
    """Rotated boxes on a 3 x 3 lattice, far enough apart that their offsets never meet.

    Edges within 12 degrees of an axis are left out: the mask is sampled at column centres, and an
    edge that runs along a row of centres for its whole length shifts that side by up to cs/2, a
    rasterisation bias no outline can see (five boxes at 3 degrees spill 1.05% from it alone; seven
    at exactly 10 degrees, 1 m wide at cs 0.2, cover 97.99%, as they did before this session).
    The generator's own scenes, rasterised from triangles, place such edges exactly.
    """
    cs, radius, err = setting
    size = 19.2
    n = int(round(size / cs))
    floor = box(0, 0, size, size)
    sites = [
        (4.8 + 4.8 * (k % 3) + dx, 4.8 + 4.8 * (k // 3) + dy, a, b, ang) for k, (dx, dy, a, b, ang) in enumerate(boxes)
    ]
    obstacles = [
        affinity.rotate(box(x - a / 2, y - b / 2, x + a / 2, y + b / 2), ang)
        for (x, y, a, b, ang), on in zip(sites, present)
        if on
    ]
    if not obstacles:
        obstacles = [affinity.rotate(box(9, 9, 10.5, 10), 30)]
    hf, rm, outlines = bake(rasterise(floor, obstacles, cs, n, n), cs=cs, agent_radius=radius, max_edge_error=err)
    exact = floor.buffer(-radius).difference(shapely.union_all([o.buffer(radius) for o in obstacles]))
    ours = shapely.union_all([outline_polygon(o) for o in outlines])
    assert ours.intersection(exact).area >= 0.98 * exact.area
    assert ours.difference(exact).area < 0.01 * exact.area
    # Rasterising by column centres moves a boundary by up to cs/2 (more at sharp obstacle corners and
    # where offsets of two obstacles meet); simplification adds up to max_edge_error on the traced line.
    tol = max(cs / 2, err)
    for a, b in ((ours.boundary, exact.boundary), (exact.boundary, ours.boundary)):
        gap = boundary_gaps(a, b, cs / 4)
        assert np.mean(gap <= tol + cs / 2) >= 0.99
        assert gap.max() <= tol + cs
    assert_well_formed(outlines)


def test_l_shaped_room_is_one_region_with_a_rounded_inner_corner():
    floor = Polygon([(0, 0), (4, 0), (4, 2), (2, 2), (2, 4), (0, 4)])
    hf, rm, outlines = bake(rasterise(floor, [], 0.1, 40, 40), agent_radius=0.5, max_edge_error=0.05)
    assert len(outlines) == 1 and len(outlines[0].rings) == 1
    ring = outlines[0].rings[0]
    # Points whose nearest wall point is the corner (2, 2) lie on the quarter circle of radius 0.5 around it.
    corner = np.hypot(ring[:, 0] - 2, ring[:, 1] - 2)
    arc = (ring[:, 0] < 2) & (ring[:, 1] < 2) & (corner < 1)
    assert arc.sum() >= 2
    np.testing.assert_allclose(corner[arc], 0.5, atol=0.05)
    exact = floor.buffer(-0.5)
    ours = outline_polygon(outlines[0])
    assert ours.symmetric_difference(exact).area < 0.02 * exact.area


def test_room_with_a_pillar_has_a_clockwise_hole():
    pillar = box(1.5, 1.5, 2.5, 2.5)
    hf, rm, outlines = bake(rasterise(box(0, 0, 4, 4), [pillar], 0.1, 40, 40), agent_radius=0.3)
    assert len(outlines) == 1
    o = outlines[0]
    assert len(o.rings) == 2
    assert_well_formed(outlines)
    hole = Polygon(o.rings[1][:, :2])
    assert hole.contains(pillar) and pillar.buffer(0.3 + 0.1).contains(hole)
    assert (o.ring_neighbors[1] == -1).all()


def test_pole_hole_becomes_a_triangle_when_the_edge_error_allows():
    """A thin pole grown by the radius is a disc; with a coarse max_edge_error its hole is the
    fewest corners that enclose it (3: each hole corner is a notch that costs polygons), and it
    never lets the navmesh onto the grown pole."""
    pole = Point(3, 3).buffer(0.1, quad_segs=2)
    radius, err = 0.5, 1.0
    hf, rm, outlines = bake(rasterise(box(0, 0, 6, 6), [pole], 0.1, 60, 60), agent_radius=radius, max_edge_error=err)
    (o,) = outlines
    assert_well_formed(outlines)
    hole = Polygon(o.rings[1][:, :2])
    assert len(o.rings[1]) == 3
    assert hole.contains(pole.buffer(radius - 0.1))
    # Within the edge error of the obstacle the heightfield holds: the pole's 2 x 2 blocked cells.
    assert box(2.9, 2.9, 3.1, 3.1).buffer(radius + err).contains(hole)


@pytest.mark.parametrize("pole_radius, radius, err", [(0.5, 0.5, 0.3), (0.3, 0.4, 0.2), (1.0, 0.5, 0.3)])
def test_a_round_pillar_is_the_fewest_corners_the_edge_error_allows(pole_radius, radius, err):
    """A round pillar grown by the agent radius is a disc of radius rho; a convex outline around it
    whose corners stay within the simplification tolerance t (the edge error less a quarter cell) of
    it needs ceil(pi / acos(rho / (rho + t))) corners, and no more are made (each hole corner is a
    notch that costs polygons). It still encloses the grown pillar and stays within the edge error."""
    cs = 0.1
    pole = Point(3, 3).buffer(pole_radius, quad_segs=16)
    mask = rasterise(box(0, 0, 6, 6), [pole], cs, 60, 60)
    hf, rm, outlines = bake(mask, agent_radius=radius, max_edge_error=err)
    (o,) = outlines
    assert_well_formed(outlines)
    rho, t = pole_radius + radius, err - cs / 4
    assert len(o.rings[1]) <= int(np.ceil(np.pi / np.arccos(rho / (rho + t))))
    hole = Polygon(o.rings[1][:, :2])
    assert hole.contains(pole.buffer(radius - cs))
    # Within the edge error of the obstacle the heightfield holds: the cells the pole blocks.
    blocked = shapely.union_all([box(i * cs, j * cs, (i + 1) * cs, (j + 1) * cs) for i, j in zip(*np.nonzero(~mask))])
    assert blocked.buffer(radius + err).contains(hole)


def test_pole_hole_keeps_its_shape_under_a_fine_edge_error():
    pole = Point(3, 3).buffer(0.1, quad_segs=2)
    hf, rm, outlines = bake(rasterise(box(0, 0, 6, 6), [pole], 0.1, 60, 60), agent_radius=0.5, max_edge_error=0.05)
    hole = Polygon(outlines[0].rings[1][:, :2])
    assert len(outlines[0].rings[1]) > 4
    # A hand-built heightfield knows the pole only as its 2 x 2 blocked cells, and the outline keeps
    # agent_radius from them (not from the smaller round pole the mask was sampled from).
    blocked = box(2.9, 2.9, 3.1, 3.1).buffer(0.5)
    assert hole.symmetric_difference(blocked).area < 0.1 * blocked.area


def test_enlarged_hole_keeps_clear_of_a_nearby_wall():
    """A pole near the wall: a triangle around it may not cut through the room's outline."""
    pole = Point(1.3, 3).buffer(0.1, quad_segs=2)
    hf, rm, outlines = bake(rasterise(box(0, 0, 6, 6), [pole], 0.1, 60, 60), agent_radius=0.3, max_edge_error=1.0)
    assert_well_formed(outlines)
    for o in outlines:
        shape = outline_polygon(o)
        assert shape.is_valid
        assert not shape.intersects(pole.buffer(0.3 - 0.1))


def test_outline_of_a_square_room_is_the_eroded_square():
    hf, rm, outlines = bake(np.ones((30, 30), bool), agent_radius=0.25)
    (o,) = outlines
    assert len(o.rings) == 1 and len(o.rings[0]) == 4
    np.testing.assert_allclose(np.sort(o.rings[0][:, 0]), [0.25, 0.25, 2.75, 2.75], atol=1e-12)
    np.testing.assert_allclose(o.rings[0][:, 2], 0.0)


@pytest.mark.parametrize("radius", [0.0, 0.25])
def test_walled_square_room_outline_starts_at_the_blocked_column_centres(radius):
    # A 3 m room whose walls fill the ring of columns around it: with every missing link a wall
    # (block fraction 1), the floor reaches the wall columns' centres, half a cell past the edges,
    # less the radius, and at radius 0 less OFF_WALL cells.
    hf = make_heightfield([(np.ones((30, 30), bool), 0.0)])
    hf.link_ends = LinkEnds.from_table(hf.links, np.ones((hf.span_count, 4)))
    p = params(agent_radius=radius)
    rm = build_regions(hf, p)
    (o,) = build_contours(hf, rm, p)
    assert len(o.rings) == 1 and len(o.rings[0]) == 4
    off = max(radius, OFF_WALL * hf.cell_size)
    lo, hi = -0.05 + off, 3.05 - off
    np.testing.assert_allclose(np.sort(o.rings[0][:, 0]), [lo, lo, hi, hi], atol=1e-12)
    np.testing.assert_allclose(np.sort(o.rings[0][:, 1]), [lo, lo, hi, hi], atol=1e-12)


def test_two_rooms_closed_door_gives_two_outlines():
    hf, rm, outlines = bake(two_rooms(5))
    assert len(outlines) == 2
    assert_well_formed(outlines)


def test_ramp_regions_share_a_border_with_identical_vertices():
    hf = ramp_scene()
    p = params(agent_radius=0.2)
    rm = build_regions(hf, p)
    outlines = build_contours(hf, rm, p)
    shared = [o for o in outlines if any((nb >= 0).any() for nb in o.ring_neighbors)]
    assert len(shared) >= 2
    assert_shared_borders_match(outlines)
    centres = hf.centers_xy()
    for o in outlines:
        own = rm.region == o.region
        for ring, nb in zip(o.rings, o.ring_neighbors):
            for i in np.flatnonzero(nb >= 0):
                # A shared edge lies on its region's own floor (the ramp or the upper floor), never
                # on the ground under the upper floor: its ends are as high as the nearest spans.
                for point in (ring[i], ring[(i + 1) % len(ring)]):
                    near = own & (np.abs(centres - point[:2]).max(axis=1) <= hf.cell_size)
                    assert near.any() and np.abs(hf.z[near] - point[2]).min() <= 0.12 + 1e-9


def test_area_ids_meet_without_erosion_between_them():
    left = np.zeros((40, 20), bool)
    left[:20] = True
    hf = make_heightfield([(left, 0.0, 1), (~left, 0.0, 2)])
    p = params(agent_radius=0.3)
    outlines = build_contours(hf, build_regions(hf, p), p)
    assert len(outlines) == 2
    assert_shared_borders_match(outlines)
    total = shapely.union_all([outline_polygon(o) for o in outlines])
    # Only the cs/2 chamfers where the border meets the eroded wall are missing.
    np.testing.assert_allclose(total.area, (4 - 0.6) * (2 - 0.6), atol=4 * 0.5 * 0.05**2 + 1e-9)
    assert Point(2.0, 1.0).within(total.buffer(1e-9))


@settings(max_examples=60, deadline=None)
@given(layered_masks(), st.sampled_from([0.0, 0.1, 0.15, 0.25]), st.sampled_from([0.05, 0.2]))
def test_random_layered_floors_give_well_formed_outlines(masks, radius, err):
    lower, upper, z = masks
    hf = make_heightfield([(lower, 0.0), (upper, z)], climb=0.15)
    p = params(agent_radius=radius, max_edge_error=err)
    rm = build_regions(hf, p)
    outlines = build_contours(hf, rm, p)
    assert {o.region for o in outlines} <= set(range(rm.region_count))
    for o in outlines:
        assert o.area == rm.region_area[o.region]
    assert_well_formed(outlines)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(4, 14).flatmap(
        lambda w: st.tuples(
            st.lists(st.booleans(), min_size=w * w, max_size=w * w),
            st.lists(st.booleans(), min_size=w * w, max_size=w * w),
        )
    ),
    st.sampled_from([0.0, 0.1, 0.15, 0.25]),
    st.sampled_from([0.05, 0.2]),
)
def test_random_area_patches_share_borders_vertex_for_vertex(cells, radius, err):
    w = int(round(len(cells[0]) ** 0.5))
    floor = np.array(cells[0]).reshape(w, w)
    second = np.array(cells[1]).reshape(w, w)
    hf = make_heightfield([(floor & ~second, 0.0, 1), (floor & second, 0.0, 2)])
    p = params(agent_radius=radius, max_edge_error=err)
    outlines = build_contours(hf, build_regions(hf, p), p)
    assert_well_formed(outlines)
    assert_shared_borders_match(outlines)


def test_a_region_wrapping_a_corner_cell_round_a_hole_shares_its_border_vertex_for_vertex():
    """A 3x3 ring of floor round an empty cell: the corner cell is area 1, the seven others area 2,
    which touches the corner cell along two edges and, diagonally, at the pinch by the hole. The
    corner cell's two borders are one run to it, two to the wrapping region (the hole parts them);
    they part at the corner on both sides."""
    floor = np.ones((3, 3), dtype=bool)
    floor[1, 1] = False
    second = floor.copy()
    second[0, 0] = False
    hf = make_heightfield([(floor & ~second, 0.0, 1), (floor & second, 0.0, 2)])
    p = params(agent_radius=0.0, max_edge_error=0.05)
    outlines = build_contours(hf, build_regions(hf, p), p)
    assert_well_formed(outlines)
    assert_shared_borders_match(outlines)


def test_a_ring_that_only_simplifies_with_its_shared_border_whole_keeps_it_on_both_sides():
    """A floor cut by a box and a ramp running off its corner (a level the property tests found):
    the floor's border with a sliver of ramp curves, and cut to a chord it crosses the floor's
    own outline. Both rings then keep that border's points whole, so the floor stays."""
    vertices = np.array(
        [
            [0, 0, 0.0949179],
            [10, 0, 0.0949179],
            [10, 10, 0.0949179],
            [0, 10, 0.0949179],
            [4.61748007, -1.48466568, 0.04011139],
            [6.31675067, -0.12108108, 0.04011139],
            [3.08026549, 0.43097897, 0.04011139],
            [4.7795361, 1.79456357, 0.04011139],
            [4.61748007, -1.48466568, 2.82122677],
            [6.31675067, -0.12108108, 2.82122677],
            [3.08026549, 0.43097897, 2.82122677],
            [4.7795361, 1.79456357, 2.82122677],
            [7.08861073, 7.79760266, 0],
            [10.20710724, 7.79760266, 2.67645157],
            [10.20710724, 10.61292088, 2.67645157],
            [7.08861073, 10.61292088, 0],
        ]
    )
    triangles = np.array(
        [
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
            [12, 13, 14],
            [12, 14, 15],
        ]
    )
    params = BakeParams(
        cell_size=0.2,
        agent_radius=0.3,
        agent_height=1.8,
        agent_max_climb=0.4,
        region_min_area=0.3,
        max_edge_error=0.15,
        max_height_error=0.15,
    )
    hf = build_heightfield(prepare_soup(vertices, triangles), params)
    rm = build_regions(hf, params)
    outlines = build_contours(hf, rm, params)
    assert_well_formed(outlines)
    assert sum(outline_polygon(o).area for o in outlines) > 80.0


def test_self_crossings_found_by_the_sweep_are_every_crossing_pair():
    """The sweep over edge boxes finds exactly the pairs an all-pairs test finds, in ring order,
    on random rings (integer grids make collinear and touching edges common)."""
    from blender_navmesh.contours.rings import _crossing_pairs

    rng = np.random.default_rng(5)
    for trial in range(300):
        n = int(rng.integers(4, 30))
        p = rng.integers(0, 5, (n, 2)).astype(float) if trial % 2 else rng.normal(0, 1, (n, 2))
        expected = []
        for i in range(n):
            for j in range(i + 2, n):
                if j - i == n - 1:
                    continue
                a, b, c, d = p[i], p[(i + 1) % n], p[j], p[(j + 1) % n]
                if segments_meet_matrix(a[None], b[None], c[None], d[None])[0]:
                    expected.append((i, j))
        assert list(zip(*[x.tolist() for x in _crossing_pairs(p)])) == expected


def ring3(xy, clockwise: bool) -> np.ndarray:
    """A ring of (x, y) as (n, 3) points at z = 0, turned the requested way."""
    ring = np.c_[np.asarray(xy, float), np.zeros(len(xy))]
    return ring[::-1] if LinearRing(xy).is_ccw == clockwise else ring


def same_area(a, b) -> bool:
    """Two polygons cover the same ground, to float noise in the crossing points."""
    return a.symmetric_difference(b).area <= 1e-9 * max(a.area, 1.0)


def star(rng, centre, radius: float, sides: int) -> list:
    """A random star-shaped polygon: corners at random radii around a centre."""
    angles = np.sort(rng.uniform(0, 2 * np.pi, sides))
    radii = rng.uniform(0.3, 1.0, sides) * radius
    return (np.asarray(centre) + np.c_[np.cos(angles), np.sin(angles)] * radii[:, None]).tolist()


def test_two_crossing_holes_merge_into_the_outline_of_their_union():
    a, b = ring3(box(0, 0, 2, 2).exterior.coords[:-1], True), ring3(box(1, 1, 3, 3).exterior.coords[:-1], True)
    merged = _merge_rings(a, b)
    assert not LinearRing(merged[:, :2]).is_ccw
    assert Polygon(merged[:, :2]).equals(box(0, 0, 2, 2).union(box(1, 1, 3, 3)))


def test_a_hole_crossing_the_outer_ring_is_cut_out_of_it():
    outer, hole = (
        ring3(box(0, 0, 10, 10).exterior.coords[:-1], False),
        ring3(box(8, 4, 12, 6).exterior.coords[:-1], True),
    )
    merged = _merge_rings(outer, hole)
    assert LinearRing(merged[:, :2]).is_ccw
    assert Polygon(merged[:, :2]).equals(box(0, 0, 10, 10).difference(box(8, 4, 12, 6)))


def test_holes_enclosing_a_pocket_merge_with_the_pocket_filled():
    """A U-shaped hole closed by a bar: the floor inside the U is cut off, and given up."""
    u = Polygon([(0, 0), (3, 0), (3, 3), (2, 3), (2, 1), (1, 1), (1, 3), (0, 3)])
    bar = box(-0.5, 2.5, 3.5, 3.5)
    merged = _merge_rings(ring3(u.exterior.coords[:-1], True), ring3(bar.exterior.coords[:-1], True))
    assert Polygon(merged[:, :2]).equals(Polygon(u.union(bar).exterior))


@pytest.mark.parametrize(
    "a, b",
    [
        (box(0, 0, 1, 1), box(1, 0, 2, 1)),  # sharing an edge
        (box(0, 0, 1, 1), box(1, 1, 2, 2)),  # touching at a corner
        (box(0, 0, 1, 1), box(2, 0, 3, 1)),  # apart
    ],
)
def test_holes_that_do_not_cross_are_not_merged(a, b):
    assert _merge_rings(ring3(a.exterior.coords[:-1], True), ring3(b.exterior.coords[:-1], True)) is None


def test_a_hole_cutting_the_outer_ring_in_two_is_not_merged():
    outer, hole = (
        ring3(box(0, 0, 10, 10).exterior.coords[:-1], False),
        ring3(box(4, -1, 6, 11).exterior.coords[:-1], True),
    )
    assert _merge_rings(outer, hole) is None


def test_merged_rings_match_shapely_on_random_stars():
    """Random crossing star-shaped holes, and holes crossing an outer star: a merge, when there is
    one, is the exact outline of the floor left of both rings (pockets between holes filled)."""
    rng = np.random.default_rng(11)
    merges = 0
    for trial in range(400):
        outer = trial % 2 == 1
        p = star(rng, (0, 0), 3.0 if outer else 1.5, int(rng.integers(3, 12)))
        q = star(rng, rng.uniform(-2, 2, 2), 1.5, int(rng.integers(3, 12)))
        pa, pb = Polygon(p), Polygon(q)
        if not (pa.is_valid and pb.is_valid and pa.boundary.crosses(pb.boundary)):
            continue
        merged = _merge_rings(ring3(p, not outer), ring3(q, True))
        if outer:
            floor = pa.difference(pb)
            if merged is None:
                assert (
                    floor.geom_type == "MultiPolygon" or pa.boundary.intersection(pb.boundary).geom_type != "MultiPoint"
                )
                continue
            assert LinearRing(merged[:, :2]).is_ccw and same_area(Polygon(merged[:, :2]), floor)
        else:
            assert merged is not None
            assert not LinearRing(merged[:, :2]).is_ccw
            assert same_area(Polygon(merged[:, :2]), Polygon(pa.union(pb).exterior))
        merges += 1
    assert merges > 150


def _keyhole(lobe: float) -> tuple[np.ndarray, np.ndarray]:
    """A 4 m square room (counter-clockwise, walls only) whose north wall opens, through a mouth 2 cm
    wide at x = 2, into a 2 m wide trapezoid 1 m deep: floor beyond the wall (lobe = +1) or a notch
    into the room (lobe = -1)."""
    pts = [(0, 0), (4, 0), (4, 4), (2.01, 4), (3, 4 + lobe), (1, 4 + lobe), (1.99, 4), (0, 4)]
    return np.array([(x, y, 0.0) for x, y in pts], dtype=float), np.full(len(pts), -1, dtype=np.int64)


def test_a_small_lobe_of_floor_on_a_neck_is_cut_off():
    """Polygons across a 2 cm neck would be slivers: the lobe (1 m², under min_area) is given up,
    and the room keeps its walls (the cut runs along the wall the neck left)."""
    ring, nb = _keyhole(+1)
    cut, cut_nb = _cut_necks(ring, nb, neck=0.03, min_area=2.0, others=[])
    room = Polygon(cut[:, :2])
    assert room.is_valid and room.area == pytest.approx(16.0, abs=0.02) and (cut_nb < 0).all()
    assert room.buffer(1e-9).contains(box(0, 0, 4, 4).buffer(-0.03))


def test_two_large_parts_joined_by_a_neck_stay_joined():
    """With the lobe over min_area nothing is cut: the neck may be a passage the push off the walls
    narrowed, and the floor beyond it stays reachable."""
    ring, nb = _keyhole(+1)
    assert len(_cut_necks(ring, nb, neck=0.03, min_area=0.5, others=[])[0]) == len(ring)


def test_a_lobe_is_kept_when_wide_necked_or_a_notch_or_holding_a_border_or_a_hole():
    """Only floor is given up, and only behind a neck narrower than `neck`: a notch (the neck's far
    side is not floor) is never filled in, a lobe holding a shared border or another ring of the
    region stays."""
    ring, nb = _keyhole(+1)
    assert len(_cut_necks(ring, nb, 0.01, 2.0, [])[0]) == len(ring)
    notch, notch_nb = _keyhole(-1)
    assert len(_cut_necks(notch, notch_nb, 0.03, 2.0, [])[0]) == len(notch)
    shared = nb.copy()
    shared[4] = 7  # the lobe's far edge borders region 7
    assert len(_cut_necks(ring, shared, 0.03, 2.0, [])[0]) == len(ring)
    pillar = np.array([(1.9, 4.5, 0.0), (2.1, 4.5, 0.0), (2.1, 4.7, 0.0)])  # a hole of the region in the lobe
    assert len(_cut_necks(ring, nb, 0.03, 2.0, [pillar])[0]) == len(ring)


class _Walls:
    """A floor boundary made of given wall segments, as FloorBoundary answers the contours."""

    def __init__(self, walls, radius: float, cs: float):
        self.walls, self.radius, self.cs = np.asarray(walls, dtype=float), radius, cs
        self.seg = np.column_stack([self.walls, np.zeros(len(self.walls))])
        self.storey = np.inf

    def segments_near(self, p, q, reach):
        return np.repeat(np.arange(len(p)), len(self.walls)), np.tile(np.arange(len(self.walls)), len(p))

    def distance(self, p, q, zp, zq):
        a, b = self.walls[:, :2], self.walls[:, 2:]
        each = [
            segment_distance(np.repeat(p[[i]], len(a), 0), np.repeat(q[[i]], len(a), 0), a, b) for i in range(len(p))
        ]
        best = [int(np.argmin(d)) for d, _ in each]
        return np.array([d[k] for (d, _), k in zip(each, best)]), np.array([t[k] for (_, t), k in zip(each, best)])


def _pillar_by_the_wall():
    """A 10 m room (walls on its sides) and a pillar 1.05 m from its left wall, agent radius 0.5:
    the real passage between their bands is 5 cm wide, the traced outline left 1 cm of it. The
    room's top edge is a shared border (region 3)."""
    room = [(0, 0, 10, 0), (10, 0, 10, 10), (10, 10, 0, 10), (0, 10, 0, 0)]
    pillar = [(1.05, 4, 1.1, 4), (1.1, 4, 1.1, 6), (1.1, 6, 1.05, 6), (1.05, 6, 1.05, 4)]
    outer = np.array([(0.5, 0.5, 0), (9.5, 0.5, 0), (9.5, 9.5, 0), (0.5, 9.5, 0)], dtype=float)
    hole = np.array([(0.51, 3.5, 0), (0.51, 6.5, 0), (1.6, 6.5, 0), (1.6, 3.5, 0)], dtype=float)
    neighbours = [np.array([-1, -1, 3, -1]), np.array([-1, -1, -1, -1])]
    return [outer, hole], neighbours, _Walls(room + pillar, radius=0.5, cs=0.2)


def test_a_pinch_is_widened_as_far_as_the_band_allows():
    """A strip of floor 1 cm wide along a 9 m wall would be a needle in any decomposition: the
    pillar's outline moves off the wall to where its band really is (the strip becomes 4-6 cm), no
    edge comes closer to a wall than agent_radius less 0.04 cells, and the points of the shared
    border stay bit for bit."""
    rings, neighbours, walls = _pillar_by_the_wall()
    reach = walls.radius - 0.04 * walls.cs
    widened = widen_pinches([r.copy() for r in rings], neighbours, walls, reach)
    outer, hole = (Polygon(r[:, :2]) for r in widened)
    assert 0.04 <= outer.exterior.distance(hole.exterior) <= 0.06
    for ring in widened:
        ends = np.roll(ring, -1, axis=0)
        assert (walls.distance(ring[:, :2], ends[:, :2], ring[:, 2], ends[:, 2])[0] >= reach - 1e-12).all()
    assert np.array_equal(widened[0][2:], rings[0][2:])
    assert Polygon(widened[0][:, :2]).contains(Polygon(widened[1][:, :2]))


def test_a_pinch_the_band_closes_is_widened_no_further_than_the_band():
    """With the pillar's band right at its traced outline, the pillar's points stay; only the room's
    corners may take the band's slack (agent_radius less 0.04 cells), never more."""
    rings, neighbours, walls = _pillar_by_the_wall()
    reach = walls.radius - 0.04 * walls.cs
    walls.walls[4:, [0, 2]] += 0.51 + reach - 1.05
    widened = widen_pinches([r.copy() for r in rings], neighbours, walls, reach)
    assert np.array_equal(widened[1], rings[1])
    assert widened[0][:, 0].min() >= walls.radius - 0.04 * walls.cs - 1e-12
    for ring in widened:
        ends = np.roll(ring, -1, axis=0)
        assert (walls.distance(ring[:, :2], ends[:, :2], ring[:, 2], ends[:, 2])[0] >= reach - 1e-12).all()


def test_a_pinch_no_move_widens_is_closed_where_two_corners_all_but_touch():
    """Two pillars' bands meeting corner to corner, 3 micrometres apart, with no slack to move
    either (fuzz case 301062): every triangulation of the gap between them would be a needle. The
    one corner is put on the other, so the floor pinches to a point there; nothing else moves."""
    room = [(0, 0, 10, 0), (10, 0, 10, 10), (10, 10, 0, 10), (0, 10, 0, 0)]
    pillars = [(3.5, 3.5, 4.5, 3.5), (4.5, 3.5, 4.5, 4.5), (4.5, 4.5, 3.5, 4.5), (3.5, 4.5, 3.5, 3.5)]
    gap = 2e-6
    pillars += [(x0 + 2 + gap, y0 + 2 + gap, x1 + 2 + gap, y1 + 2 + gap) for x0, y0, x1, y1 in pillars]
    walls = _Walls(room + pillars, radius=0.5, cs=0.2)
    outer = np.array([(0.5, 0.5, 0), (9.5, 0.5, 0), (9.5, 9.5, 0), (0.5, 9.5, 0)], dtype=float)
    first = np.array([(3, 3, 0), (3, 5, 0), (5, 5, 0), (5, 3, 0)], dtype=float)  # clockwise: holes
    second = first + (2 + gap, 2 + gap, 0)
    rings = [outer, first, second]
    widened = widen_pinches([r.copy() for r in rings], [np.full(4, -1)] * 3, walls, walls.radius)
    moved = [(j, k) for j, (a, b) in enumerate(zip(rings, widened)) for k in range(4) if not np.array_equal(a[k], b[k])]
    assert moved in ([(1, 2)], [(2, 0)])
    assert np.array_equal(widened[1][2], widened[2][0])


def test_a_notch_is_not_a_pinch():
    """Two sides of a slot 2 cm wide with no floor between them (the room's outline running into
    and out of a thin obstacle's band) are not a pinch: moving them apart would only give up floor."""
    room = [(0, 0, 10, 0), (10, 0, 10, 10), (10, 10, 0, 10), (0, 10, 0, 0)]
    outline = [(0.5, 0.5), (9.5, 0.5), (9.5, 9.5), (5.01, 9.5), (5.01, 5), (4.99, 5), (4.99, 9.5), (0.5, 9.5)]
    ring = np.array([(x, y, 0.0) for x, y in outline])
    walls = _Walls(room, radius=0.5, cs=0.2)
    widened = widen_pinches([ring.copy()], [np.full(len(ring), -1)], walls, walls.radius - 0.04 * walls.cs)
    assert Polygon(widened[0][:, :2]).area >= Polygon(ring[:, :2]).area
    assert np.array_equal(widened[0][3:7], ring[3:7])


def test_pruning_a_tiny_hole_never_turns_it_inside_out():
    """A hole 1 mm thick shaped like an arrowhead (fuzz case 85127): dropping its tip, which lies
    within a quarter cell of the shortcut, would leave a counter-clockwise triangle, floor where the
    obstacle is, that the polygon stage cannot bridge to. The hole stays clockwise."""
    arrow = np.array([(0, 0, 0), (1, 0.003, 0), (2, 0, 0), (1, 0.002, 0)], dtype=float)
    assert signed_area(arrow) < 0
    walls = _Walls([(-10, -10, 10, -10)], radius=0.5, cs=0.2)
    pruned, _ = _prune(arrow, np.full(4, -1), np.zeros(4, dtype=bool), walls, walls.radius)
    assert signed_area(pruned) < 0


# The tip of a hole round a wall of no thickness along y = 0 ending at x = 1: clockwise, the floor
# on the left, 1 cm off the wall on its sides and 2 cm beyond its end.
_SLIVER_TIP = np.array([(0.5, 0.01, 0), (1.0, 0.01, 0), (1.02, 0.0, 0), (1.0, -0.01, 0), (0.5, -0.01, 0)], dtype=float)
_ONE_CHAIN = (np.array([0]), np.array([4]))


@pytest.mark.parametrize("across_chord", [False, True])
def test_a_chord_across_a_slivers_tip_sweeps_over_the_wall_inside(across_chord):
    """The chord from the first point of _SLIVER_TIP to its last cuts the tip off: the piece of
    wall beyond it, x = 0.6 to 1, would lie in the floor, crossing neither the chord nor the traced
    points, seen by no distance to the chord at radius 0. The chain walked the other way (the floor
    inside the sliver) gives floor up instead; a chord 5 mm beyond the wall's end adds floor but no
    wall; and a wall that the traced points cross is left to the push."""
    wall = _Walls([(0.0, 0.0, 0.6, 0.0), (0.6, 0.0, 1.0, 0.0)], radius=0.0, cs=0.2)
    assert walls_swept(_SLIVER_TIP, *_ONE_CHAIN, wall, across_chord).tolist() == [True]
    assert walls_swept(_SLIVER_TIP[::-1].copy(), *_ONE_CHAIN, wall, across_chord).tolist() == [False]
    beyond_end = _SLIVER_TIP.copy()
    beyond_end[[0, 4], 0] = 1.005
    assert walls_swept(beyond_end, *_ONE_CHAIN, wall, across_chord).tolist() == [False]
    through_tip = _Walls([(0.6, 0.0, 1.1, 0.0)], radius=0.0, cs=0.2)
    assert walls_swept(_SLIVER_TIP, *_ONE_CHAIN, through_tip, across_chord).tolist() == [False]


def test_a_wall_across_the_chord_is_left_to_the_push_before_it_and_counts_after():
    """A wall piece the chord across _SLIVER_TIP crosses, reaching 0.5 m past it: Ramer-Douglas-
    Peucker leaves it to the push, which moves the edge past it; pruning, after the push, must not
    make such a chord."""
    wall = _Walls([(0.0, 0.0, 1.0, 0.0)], radius=0.0, cs=0.2)
    assert walls_swept(_SLIVER_TIP, *_ONE_CHAIN, wall, across_chord=True).tolist() == [True]
    assert walls_swept(_SLIVER_TIP, *_ONE_CHAIN, wall, across_chord=False).tolist() == [False]


def test_pruning_at_radius_0_keeps_the_tip_of_a_hole_round_a_wall_of_no_thickness():
    """At radius 0 the shortcut of a pruned point needs no distance from the walls (its reach is
    negative): the tip of a sliver round a wall, 1 cm beyond the wall's end and within a quarter
    cell of its neighbours' line, went, and the wall's end with it (paths crossed the wall, 2 m
    from its end at 1 degree off the grid's axis). The tip stays, and the hole holds the wall; round
    a shorter wall it goes."""
    ring = np.array(
        [(0, 0.01, 0), (1, 0.01, 0), (1.02, 0.001, 0), (1, -0.01, 0), (0, -0.01, 0), (-0.02, -0.001, 0)], dtype=float
    )
    walls_only, free = np.full(len(ring), -1), np.zeros(len(ring), dtype=bool)
    for end in (1.01, 0.5):
        wall = _Walls([(0.0, 0.0, end, 0.0)], radius=0.0, cs=0.2)
        pruned, _ = _prune(ring, walls_only, free, wall, -0.04 * wall.cs)
        assert Polygon(pruned[:, :2]).buffer(1e-9).contains(LineString([(0, 0), (end, 0)]))
        assert ((pruned == ring[2]).all(axis=1).any()) == (end > 1)


def test_a_loop_an_outer_trace_holds_twice_is_dropped_and_an_island_in_its_hole_is_kept():
    """An outer ring's trace that overlaps itself splits into loops: the main one, a hole, and a
    small loop turning the same way. Inside the main loop and outside the hole, the small loop's
    floor is held twice (135157: two polygons on one edge); inside the hole it is an island."""
    from blender_navmesh.contours import _held_twice

    main = ring3([(0, 0), (10, 0), (10, 10), (0, 10)], clockwise=False)
    hole = ring3([(5, 5), (8, 5), (8, 8), (5, 8)], clockwise=True)
    beside_the_hole = ring3([(1, 1), (2, 1), (1, 2)], clockwise=False)
    in_the_hole = ring3([(6, 6), (7, 6), (6, 7)], clockwise=False)
    assert _held_twice([main, hole, beside_the_hole, in_the_hole]) == {2}
    assert _held_twice([main]) == set()
    # Two loops of the same size (a trace run twice) do not cancel each other out.
    assert _held_twice([main, main.copy()]) == set()


def test_two_regions_walls_from_one_point_to_ends_a_few_millimetres_apart_become_their_border():
    """nav_test at (47.8, 7.0): two regions' outlines leave the end of their shared border along the
    edge of floor eroded to exactly the radius, and each places the far end by its own interpolation,
    4.5 mm apart: two walls back to back across floor (a crack). The free far end of one moves onto
    the other's, and the pair becomes the regions' border; an end shared with a third region stays."""
    from blender_navmesh.contours import _far_ends_met, _RegionRing, _walls_walked_both_ways_shared

    def ring(points, nb, shared):
        pts = np.array(points, dtype=float)
        return _RegionRing((pts, np.array(nb), np.array(shared)), None, [])

    # Region 0 walks the shared border up x = 1 to (1, 1), then a wall to (0.2, 1.8); region 1 walks a
    # wall from (0.2045, 1.7975) to (1, 1), then the border down. Their other sides are walls.
    left = ring([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0.2, 1.8, 0), (0, 1.8, 0)], [-1, 1, -1, -1, -1], [0, 1, 1, 0, 0])
    right_points = [(1, 0, 0), (2, 0, 0), (2, 2, 0), (0.2045, 1.7975, 0), (1, 1, 0)]
    right = ring(right_points, [-1, -1, -1, -1, 0], [1, 0, 0, 0, 1])
    met = _walls_walked_both_ways_shared(_far_ends_met({0: [left], 1: [right]}, 0.05 * 0.3, climb=0.3), climb=0.3)
    # The wall that starts at the border's end (region 0's) has its far end moved onto region 1's.
    points, nb, _ = met[0][0].option
    assert points[3].tolist() == [0.2045, 1.7975, 0.0] and nb[2] == 1
    assert met[1][0].option[1][3] == 0
    # Too far apart, the far end shared with another region, or a slab 2.4 m over the floor whose
    # walls lie where the floor's do seen from above (fuzz case 30233): left as walls, in place.
    far = ring([*right_points[:3], (0.22, 1.78, 0), (1, 1, 0)], [-1, -1, -1, -1, 0], [1, 0, 0, 0, 1])
    pinned = ring([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0.2, 1.8, 0), (0, 1.8, 0)], [-1, 1, -1, -1, -1], [0, 1, 1, 1, 0])
    slab = ring([(x, y, 2.4) for x, y, _ in right_points], [-1, -1, -1, -1, 0], [1, 0, 0, 0, 1])
    for rings in ({0: [left], 1: [far]}, {0: [pinned], 1: [right]}, {0: [left], 1: [slab]}):
        kept = _walls_walked_both_ways_shared(_far_ends_met(rings, 0.05 * 0.3, climb=0.3), climb=0.3)
        assert kept[1][0].option[1][3] == -1 and kept[0][0].option[1][2] == -1
        assert kept[0][0].option[0][3].tolist() == rings[0][0].option[0][3].tolist()


def test_two_regions_walls_side_by_side_with_no_common_point_become_their_border_where_they_overlap():
    """Fuzz cases 27540 and 49719: two regions on one ramp rising out of a floor, their walls a few
    millimetres apart along each other and no point in common: a crack no path crosses. Where the
    walls overlap they become the regions' border, its ends the walls' own ends; an end within the
    seam of the other wall's free end takes that end's place; walls farther apart, on the floor's
    side, or of one region stay walls."""
    from blender_navmesh.contours import RegionOutline
    from blender_navmesh.contours.seams import joined_alongside

    def outline(region, points):
        return RegionOutline(region, 0, [np.array(points, dtype=float)], [np.full(len(points), -1)])

    def pair(gap, low=0.2, right_region=1):
        # Region 0 is the unit square; region 1's left wall runs down x = 1 + gap from 0.8 to `low`.
        left = outline(0, [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)])
        right = outline(right_region, [(1 + gap, low, 0), (2, low, 0), (2, 0.8, 0), (1 + gap, 0.8, 0)])
        return left, right

    left, right = joined_alongside(list(pair(0.004)), reach=0.015, climb=0.3)
    assert left.rings[0][:, :2].tolist() == [[0, 0], [1, 0], [1.004, 0.2], [1.004, 0.8], [1, 1], [0, 1]]
    assert left.ring_neighbors[0].tolist() == [-1, -1, 1, -1, -1, -1]
    assert right.rings[0][:, :2].tolist() == [[1.004, 0.2], [2, 0.2], [2, 0.8], [1.004, 0.8]]
    assert right.ring_neighbors[0].tolist() == [-1, -1, -1, 0]
    # The square's corner (1, 0) is free and 1 cm from the seam's end: it moves there.
    left, right = joined_alongside(list(pair(0.004, low=0.01)), reach=0.015, climb=0.3)
    assert left.rings[0][:, :2].tolist() == [[0, 0], [1.004, 0.01], [1.004, 0.8], [1, 1], [0, 1]]
    assert left.ring_neighbors[0].tolist() == [-1, 1, -1, -1, -1]
    for gap, region in ((0.02, 1), (-0.004, 1), (0.004, 0)):
        kept = joined_alongside(list(pair(gap, right_region=region)), reach=0.015, climb=0.3)
        assert all((o.ring_neighbors[0] == -1).all() and len(o.rings[0]) == 4 for o in kept)


def test_two_regions_walls_leaving_their_border_back_to_back_are_joined_as_far_as_the_shorter():
    """Fuzz case 972: two regions push the walls that leave their border's end by different
    amounts, along nearly one line, 5 mm apart over 13 cm: floor between them that neither holds.
    The shorter wall's far end is put on the longer one and the part up to it becomes their
    border; walls farther apart than the seam (or of one region) stay walls."""
    from blender_navmesh.contours import RegionOutline
    from blender_navmesh.contours.seams import joined_back_to_back

    def outline(region, points, nb):
        return RegionOutline(region, 0, [np.array(points, dtype=float)], [np.array(nb)])

    def pair(offset, far_end=(0.5, 2.0, 0.0)):
        # Region 0 walks the border up x = 1 to (1, 1), then a wall towards (0.5, 2); region 1's wall
        # comes back to (1, 1) from halfway along that line, `offset` to its right, then the border.
        b = (0.75 + offset * 2 / 5**0.5, 1.5 + offset / 5**0.5, 0.0)
        left = outline(0, [(0, 0, 0), (1, 0, 0), (1, 1, 0), far_end, (0, 2, 0)], [-1, 1, -1, -1, -1])
        right = outline(1, [(1, 0, 0), (2, 0, 0), (2, 2, 0), b, (1, 1, 0)], [-1, -1, -1, -1, 0])
        return left, right, b

    left, right, b = pair(0.005)
    joined = joined_back_to_back([left, right], reach=0.015, climb=0.3)
    points, nb = joined[0].rings[0], joined[0].ring_neighbors[0]
    assert points[3].tolist() == list(b) and nb.tolist() == [-1, 1, 1, -1, -1, -1]
    assert joined[1].ring_neighbors[0].tolist() == [-1, -1, -1, 0, 0]
    # Far ends within the seam: the longer wall's free end moves onto the shorter's.
    left, right, b = pair(0.005, far_end=(0.7473, 1.5053, 0.0))
    joined = joined_back_to_back([left, right], reach=0.015, climb=0.3)
    assert joined[0].rings[0][3].tolist() == list(b) and joined[0].ring_neighbors[0].tolist() == [-1, 1, 1, -1, -1]
    # 2 cm apart, or on the floor's side of the longer wall, or one region's own: left as they are.
    for offset, regions in ((0.02, (0, 1)), (-0.005, (0, 1)), (0.005, (0, 0))):
        left, right, _ = pair(offset)
        right = RegionOutline(regions[1], 0, right.rings, right.ring_neighbors)
        kept = joined_back_to_back([left, right], reach=0.015, climb=0.3)
        assert kept[0].ring_neighbors[0].tolist() == [-1, 1, -1, -1, -1] and len(kept[0].rings[0]) == 5


def test_walls_back_to_back_along_a_bent_seam_are_joined_joint_after_joint():
    """Fuzz case 71155: two regions' walls leave their border's end back to back, a few millimetres
    apart, and bend together at a ledge's corner. Joining the first pair moves one wall's far end
    onto the other's, a new common point where the next pair leaves back to back: it is joined too,
    so no wall of either region is left along the crack."""
    from blender_navmesh.contours import RegionOutline
    from blender_navmesh.contours.seams import joined_back_to_back

    offset = 0.005
    bend = (0.75 + offset * 2 / 5**0.5, 1.5 + offset / 5**0.5, 0.0)  # 5 mm right of (0.75, 1.5)
    left = RegionOutline(
        0,
        0,
        [np.array([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0.75, 1.5, 0), (0.75, 2.5, 0), (0, 2.5, 0)], dtype=float)],
        [np.array([-1, 1, -1, -1, -1, -1])],
    )
    right = RegionOutline(
        1,
        0,
        [np.array([(1, 0, 0), (2, 0, 0), (2, 3, 0), (0.755, 2.2, 0), bend, (1, 1, 0)], dtype=float)],
        [np.array([-1, -1, -1, -1, -1, 0])],
    )
    joined = joined_back_to_back([left, right], reach=0.015, climb=0.3)
    # Region 1's two walls along the crack are both its border with region 0 now ...
    assert joined[1].ring_neighbors[0].tolist() == [-1, -1, -1, 0, 0, 0]
    # ... and region 0 passes through both their far ends with a border up to the second.
    points, nb = joined[0].rings[0], joined[0].ring_neighbors[0]
    keys = [tuple(p) for p in points.tolist()]
    at_bend, at_end = keys.index(tuple(joined[1].rings[0][4])), keys.index((0.755, 2.2, 0.0))
    assert nb[keys.index((1.0, 1.0, 0.0))] == 1 and nb[at_bend] == 1 and at_end == at_bend + 1
    assert nb[at_end] == -1


def test_a_slit_in_one_outline_is_zipped_shut_where_the_edge_moved_stays_off_the_walls():
    """Fuzz case 58822: a ring runs into a corner and back out 8 mm apart over 20 cm (each wall
    edge pushed off the walls on its own, round the end of a ramp's side): floor no polygon holds,
    a crack. The corner goes and the shorter edge's far end moves onto the longer edge, at its foot
    there; the floor gained is the slit's. A slit wider than the crack's width, one whose far end
    another ring passes through, or one whose moved edge would come within reach of a wall stays."""
    from blender_navmesh.contours import RegionOutline
    from blender_navmesh.contours.slits import closed_slits

    def zipped(slit_x: float, walls=(), other_ring=None, radius: float = 0.5):
        # A 10 m room; up from (4, 0.5) to the slit's tip (4, 3), back down to (slit_x, 2.8) and
        # out to (4.3, 0.5). Slits under 1 cm are zipped.
        ring = np.array(
            [(0.5, 0.5), (4.0, 0.5), (4.0, 3.0), (slit_x, 2.8), (4.3, 0.5), (9.5, 0.5), (9.5, 9.5), (0.5, 9.5)]
        )
        ring = np.column_stack([ring, np.zeros(len(ring))])
        room = [(0, 0, 10, 0), (10, 0, 10, 10), (10, 10, 0, 10), (0, 10, 0, 0), *walls]
        outlines = [RegionOutline(0, 0, [ring], [np.full(len(ring), -1)])]
        if other_ring is not None:
            outlines.append(RegionOutline(1, 0, [other_ring], [np.full(len(other_ring), -1)]))
        walls = _Walls(room, radius=radius, cs=0.2)
        out = closed_slits(outlines, walls, radius - 0.04 * 0.2, 0.01, 0.0)
        return out[0].rings[0][:, :2], out[0].ring_neighbors[0], ring[:, :2]

    points, nb, before = zipped(4.008)
    assert points.tolist() == [*before[:2].tolist(), [4.0, 2.8], *before[4:].tolist()]
    assert nb.tolist() == [-1] * 7
    # The slit's top 20 cm and the sliver the edge out of it sweeps moving 8 mm: floor gained only.
    gained = Polygon(points).difference(Polygon(before))
    assert gained.area == pytest.approx(0.5 * 0.008 * (0.2 + 2.3)) and Polygon(before).within(Polygon(points))
    # 2 cm apart, over the width: a notch, kept.
    assert zipped(4.02)[0].tolist() == zipped(4.02)[2].tolist()
    # The far end (4.008, 2.8) is a point of another ring too.
    other = np.array([(4.008, 2.8, 0.0), (4.2, 5.0, 0.0), (3.8, 5.0, 0.0)])
    assert len(zipped(4.008, other_ring=other)[0]) == 8
    # Agent radius 5 cm (reach 4.2 cm) and a post in the notch 4.35 cm from the edge out of the slit,
    # 1 m below the slit: moved, the edge would come 1.7 mm nearer, within reach. A post 5 cm from
    # it lets it move.
    along, left = np.array([0.292, -2.3]) / np.hypot(0.292, 2.3), np.array([2.3, 0.292]) / np.hypot(0.292, 2.3)
    for gap, kept in ((0.0435, 8), (0.05, 7)):
        post = np.array([4.008, 2.8]) + (1.8 / 2.3) * np.hypot(0.292, 2.3) * along - gap * left
        assert len(zipped(4.008, walls=[(*post, *post)], radius=0.05)[0]) == kept
