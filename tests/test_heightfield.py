"""Walkable heightfield: known-answer scenes and property tests for build_heightfield."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blender_navmesh import heightfield
from blender_navmesh.geometry import STEP_NOISE
from blender_navmesh.heightfield import DIR_DX, DIR_DY, build_heightfield, ends, rasterise, spans
from blender_navmesh.params import BakeParams
from blender_navmesh.soup import prepare_soup
from levels import Scene, multi_storey, rotated_boxes_scene

PARAMS = BakeParams(cell_size=0.5, agent_height=2.0, agent_max_climb=0.5, agent_max_slope=45.0)


def bake(scene: Scene, params: BakeParams = PARAMS, areas=None):
    soup = prepare_soup(scene.vertices, scene.triangles, scene.walkable, areas)
    return build_heightfield(soup, params), soup


def spans_at(hf, i: int, j: int) -> np.ndarray:
    return np.flatnonzero((hf.x == i) & (hf.y == j))


def linked(hf, a: int, b: int) -> bool:
    return bool((hf.links[a] == b).any())


def test_flat_floor_one_span_per_column_all_interior_links():
    hf, soup = bake(Scene().floor(0, 0, 10, 6, z=3.0))
    assert (hf.width, hf.height) == (20, 12)
    assert hf.span_count == 20 * 12
    np.testing.assert_allclose(hf.z + soup.origin[2], 3.0)
    assert np.all(np.isinf(hf.ceiling))
    # Sorted by (y, x, z).
    assert np.all(np.diff(hf.y * hf.width + hf.x) > 0)
    for d in range(4):
        nx, ny = hf.x + DIR_DX[d], hf.y + DIR_DY[d]
        inside = (nx >= 0) & (nx < hf.width) & (ny >= 0) & (ny < hf.height)
        assert np.all(hf.links[inside, d] >= 0)
        assert np.all(hf.links[~inside, d] == -1)
        target = hf.links[inside, d]
        assert np.array_equal(hf.x[target], nx[inside]) and np.array_equal(hf.y[target], ny[inside])


def test_centre_sampling_is_unbiased():
    """A floor ending mid-column covers exactly the columns whose centre it contains."""
    scene = Scene().floor(0, 0, 10, 4).floor(0, 4, 2.6, 4.9)  # 2.6 covers centres 0.25..2.25
    hf, _ = bake(scene)
    top_row = hf.x[hf.y == 8]  # y centre 4.25
    assert sorted(top_row.tolist()) == list(range(5))
    assert hf.span_count == 20 * 8 + 5 * 2  # rows 8 and 9 (centres 4.25, 4.75) hold 5 columns


def test_ceiling_lower_than_agent_removes_spans():
    scene = Scene().floor(0, 0, 10, 10).floor(3, 3, 7, 7, z=1.5).floor(0, 0, 1, 1, z=2.5)
    hf, _ = bake(scene)
    cx, cy = hf.centers_xy().T
    under = (cx > 3) & (cx < 7) & (cy > 3) & (cy < 7)
    # Under the low slab only the slab's top remains (ground spans were dropped).
    np.testing.assert_allclose(hf.z[under], 1.5)
    assert np.count_nonzero(under) == 8 * 8
    high = (cx < 1) & (cy < 1)
    np.testing.assert_allclose(np.sort(hf.z[high]), [0.0] * 4 + [2.5] * 4)
    np.testing.assert_allclose(hf.ceiling[high & (hf.z == 0.0)], 2.5)


def test_step_below_climb_links_above_does_not():
    low = Scene().floor(0, 0, 4, 4).floor(4, 0, 8, 4, z=0.4)
    hf, _ = bake(low)
    a, b = spans_at(hf, 7, 3)[0], spans_at(hf, 8, 3)[0]
    assert hf.links[a, 0] == b and hf.links[b, 2] == a
    high = Scene().floor(0, 0, 4, 4).floor(4, 0, 8, 4, z=0.6)
    hf, _ = bake(high)
    a, b = spans_at(hf, 7, 3)[0], spans_at(hf, 8, 3)[0]
    assert hf.links[a, 0] == -1 and hf.links[b, 2] == -1
    assert hf.span_count == 16 * 8


@pytest.mark.parametrize("step, joined", [(1e-7, True), (1e-5, True), (9e-5, True), (1e-3, False), (0.01, False)])
def test_at_climb_0_floors_within_float32_noise_of_each_other_are_linked(step, joined):
    """Two floor pieces meant at one height, off by the float32 rounding of a level's coordinates
    (Blender's: up to about 1e-5 m 100 m from the origin): an agent that climbs no step walks
    across, up to a step of 0.1 mm. They were split there whatever the noise, into two islands
    with a ledge along the seam; a millimetre is a step, and stops it."""
    params = dataclasses.replace(PARAMS, agent_max_climb=0.0)
    hf, _ = bake(Scene().floor(0, 0, 4, 4).floor(4, 0, 8, 4, z=step), params)
    a, b = spans_at(hf, 7, 3)[0], spans_at(hf, 8, 3)[0]
    assert bool(hf.links[a, 0] == b and hf.links[b, 2] == a) is joined
    assert hf.span_count == 16 * 8


def _slope_floor(deg: float) -> Scene:
    rise = 4.0 * math.tan(math.radians(deg))
    return Scene().quad((0, 0, 0), (4, 0, rise), (4, 4, rise), (0, 4, 0))


def test_slope_just_under_max_is_walkable_just_over_is_not():
    params = BakeParams(cell_size=0.5, agent_max_climb=0.6, agent_max_slope=45.0)
    hf, _ = bake(_slope_floor(44.0), params)
    assert hf.span_count == 8 * 8
    cx = hf.centers_xy()[:, 0]
    np.testing.assert_allclose(hf.z, cx * math.tan(math.radians(44.0)))
    hf, _ = bake(_slope_floor(46.0), params)
    assert hf.span_count == 0


def test_a_steep_ramp_laid_on_a_floor_is_linked_at_its_foot():
    """The ramp's foot (x = 2.3) lies between column 4's centre (2.25) and its border (2.5); at the
    border the ramp is already 0.19 m up, more than a climb step, but the agent steps onto it at the
    foot, where the step is zero. The same ramp raised 0.3 m starts with a step too high to climb."""
    params = BakeParams(cell_size=0.5, agent_height=2.0, agent_max_climb=0.15, agent_max_slope=45.0)
    rise = 1.7 * math.tan(math.radians(44.0))
    for foot, expect_link in ((0.0, True), (0.3, False)):
        scene = Scene().floor(0, 0, 4, 4).quad((2.3, 0, foot), (4, 0, foot + rise), (4, 4, foot + rise), (2.3, 4, foot))
        hf, _ = bake(scene, params)
        for j in range(8):
            floor, ramp = spans_at(hf, 4, j), spans_at(hf, 5, j)
            assert len(floor) == 1 and len(ramp) == 1
            assert (hf.links[floor[0], 0] == ramp[0]) == expect_link
            assert (hf.links[ramp[0], 2] == floor[0]) == expect_link


def test_headroom_between_two_floors_is_measured_where_their_columns_meet():
    """A ramp (rising 0.2 per metre) under a slab whose edge (x = 2.2) lies in column 4. At the
    border of columns 4 and 5 (x = 2.5) the floor is at 0.5; column 5's centre is at 0.55. A slab at
    2.53 leaves 2.03 m there, room for the 2 m agent (fuzz case 170308: comparing the lower ceiling
    with the higher centre, 1.98 m, cut the ramp and its outlines overlapped); at 2.47 it does not."""
    for slab, expect_link in ((2.53, True), (2.47, False)):
        scene = Scene().quad((0, 0, 0), (8, 0, 1.6), (8, 4, 1.6), (0, 4, 0))
        scene.quad((0, 0, slab), (0, 4, slab), (2.2, 4, slab), (2.2, 0, slab), walkable=False)
        hf, _ = bake(scene)
        for j in range(8):
            under, beyond = spans_at(hf, 4, j), spans_at(hf, 5, j)
            assert len(under) == 1 and len(beyond) == 1
            assert hf.ceiling[under[0]] == pytest.approx(slab) and np.isinf(hf.ceiling[beyond[0]])
            assert (hf.links[under[0], 0] == beyond[0]) == expect_link
            assert (hf.links[beyond[0], 2] == under[0]) == expect_link


def test_thin_vertical_wall_cuts_links():
    """A zero-thickness wall quad at x = 5.1 (not on a column edge) blocks every crossing."""
    scene = Scene().floor(0, 0, 10, 10).quad((5.1, 0, 0), (5.1, 10, 0), (5.1, 10, 3), (5.1, 0, 3), walkable=False)
    hf, _ = bake(scene)
    # Column 10 (x in [5, 5.5)) holds the wall; its floor span is gone.
    assert not np.any(hf.x == 10)
    assert np.count_nonzero(hf.x == 9) == 20 and np.count_nonzero(hf.x == 11) == 20
    crossing = hf.links[:, 0] >= 0
    assert np.all(hf.x[hf.links[crossing, 0]] - hf.x[crossing] == 1)
    left, right = hf.x <= 9, hf.x >= 11
    for d in range(4):
        ok = hf.links[:, d] >= 0
        assert not np.any(left[ok] & right[hf.links[ok, d]])


def test_diagonal_thin_wall_is_not_missed():
    """A zero-thickness diagonal wall leaves no link from one side of it to the other."""
    scene = Scene().floor(0, 0, 10, 10).quad((0.3, 0, 0), (10, 9.7, 0), (10, 9.7, 3), (0.3, 0, 3), walkable=False)
    hf, _ = bake(scene)
    cx, cy = hf.centers_xy().T
    side = np.sign(cy - (cx - 0.3))
    for d in range(4):
        ok = hf.links[:, d] >= 0
        assert np.all(side[ok] == side[hf.links[ok, d]])


def test_steep_roof_gives_exact_ceiling_over_each_column():
    """A 63° roof z = 2.5 + 2x is rasterised conservatively: a column's ceiling is the roof's
    lowest point over its square, at the square's left edge, for interior and edge squares alike."""
    scene = Scene().floor(0, 0, 10, 10).quad((0, 0, 2.5), (2, 0, 6.5), (2, 10, 6.5), (0, 10, 2.5))
    hf, _ = bake(scene)
    under = hf.x < 4
    assert np.count_nonzero(under) == 4 * 20
    np.testing.assert_allclose(hf.ceiling[under], 2.5 + 2 * 0.5 * hf.x[under])
    assert np.all(np.isinf(hf.ceiling[~under]))
    assert np.all(hf.z == 0.0)


def test_steep_roof_seen_from_both_sides_and_rotated():
    """Same roof along y and facing down: the conservative range does not depend on orientation."""
    scene = Scene().floor(0, 0, 10, 10).quad((0, 0, 2.5), (10, 0, 2.5), (10, 2, 6.5), (0, 2, 6.5))
    hf, _ = bake(scene)
    under = hf.y < 4
    np.testing.assert_allclose(hf.ceiling[under], 2.5 + 2 * 0.5 * hf.y[under])


def test_box_on_floor_removes_columns_under_it():
    # Lower than agent_height: nothing fits under the top (a taller crate encloses ground, see below).
    scene = Scene().floor(0, 0, 10, 10).box((5, 5, 0), (3, 3, 1.5), walkable=False)
    hf, _ = bake(scene)
    cx, cy = hf.centers_xy().T
    inside = (np.abs(cx - 5) < 1.5) & (np.abs(cy - 5) < 1.5)
    assert not inside.any()
    # Columns that do not touch the box footprint [3.5, 6.5]^2 all keep their floor span.
    clear = (np.abs(cx - 5) > 1.75) | (np.abs(cy - 5) > 1.75)
    assert np.count_nonzero(clear) == 20 * 20 - 8 * 8
    assert np.all(hf.z == 0.0)


def test_walkable_box_top_is_a_floor_not_linked_to_ground():
    scene = Scene().floor(0, 0, 10, 10).box((5, 5, 0), (3, 3, 1.0))
    hf, _ = bake(scene)
    top = hf.z == 1.0
    assert np.count_nonzero(top) == 6 * 6
    ground = np.flatnonzero(~top)
    assert not np.any(top[hf.links[ground][hf.links[ground] >= 0]])


def floors_at(hf, soup, x: float, y: float) -> list[float]:
    """World heights of the floor spans over the column containing (x, y)."""
    i = int((x - soup.origin[0] - hf.bmin[0]) // hf.cell_size)
    j = int((y - soup.origin[1] - hf.bmin[1]) // hf.cell_size)
    return sorted((hf.z[spans_at(hf, i, j)] + soup.origin[2]).round(6).tolist())


def test_floor_inside_a_closed_crate_is_not_walkable():
    """A crate taller than the agent encloses ground with headroom; inside a solid is not a floor."""
    scene = Scene().floor(0, 0, 10, 10).box((5, 5, 0), (4, 4, 3.0))
    hf, soup = bake(scene)
    assert floors_at(hf, soup, 5.1, 5.1) == [3.0]
    assert floors_at(hf, soup, 1.1, 1.1) == [0.0]


def test_walls_around_a_yard_leave_its_floor_walkable():
    """Four closed wall boxes enclose a yard, but the yard is outside every solid."""
    scene = Scene().floor(0, 0, 10, 10)
    for x0, y0, x1, y1 in ((2, 2, 8, 2), (8, 2, 8, 8), (8, 8, 2, 8), (2, 8, 2, 2)):
        scene.wall(x0, y0, x1, y1, height=3.0, thickness=0.4)
    hf, soup = bake(scene)
    assert floors_at(hf, soup, 5.1, 5.1) == [0.0]


def test_room_shell_facing_inwards_keeps_its_floor():
    """A closed box modelled as a room (faces pointing in) is walked inside: its floor stays."""
    room = Scene().box((5, 5, 0), (8, 8, 3.0))
    room.triangles = room.triangles[:, ::-1].copy()
    hf, soup = bake(room)
    assert floors_at(hf, soup, 5.1, 5.1) == [0.0]


def test_floor_under_a_closed_slab_stays_walkable():
    """A slab (bottom faces down, top faces up) over a floor cancels out: both floors stay."""
    scene = Scene().floor(0, 0, 10, 10).box((5, 5, 3.0), (4, 4, 0.3))
    hf, soup = bake(scene)
    assert floors_at(hf, soup, 5.1, 5.1) == [0.0, 3.3]


def test_open_shell_above_a_floor_does_not_hide_it():
    """A single upward-facing plane (an upper floor) is not a closed solid."""
    scene = Scene().floor(0, 0, 10, 10).floor(3, 3, 7, 7, z=3.0)
    hf, soup = bake(scene)
    assert floors_at(hf, soup, 5.1, 5.1) == [0.0, 3.0]


def test_surface_met_on_a_diagonal_counts_once():
    """A column centre on the top face's diagonal (two triangles) counts that face once: the slab
    below is split along its other diagonal, so double counting would put the floor inside it."""
    slab = Scene().box((4, 4, 3.0), (4, 4, 0.3))
    slab.triangles[0], slab.triangles[6] = (0, 2, 1), (2, 3, 1)
    scene = Scene().floor(0, 0, 8, 8).add(slab.vertices, slab.triangles)
    hf, soup = bake(scene)
    assert floors_at(hf, soup, 3.25, 3.25) == [0.0, 3.3]


@pytest.mark.parametrize("edge", [4.25, 4.5, 4.0])
def test_solids_side_by_side_meeting_over_a_column_centre_count_once_each(edge):
    """Two boxes side by side over a floor (stair steps, a flight on the storey above): where they
    meet, their bottoms share a plane and their tops differ in height. A column centre on that
    edge (4.25 here) is under both or neither, never under one box's bottom and both tops, which
    put the floor inside a solid: a strip of floor across the level gone, its two sides cut apart."""
    scene = Scene().floor(0, 0, 8, 8)
    scene.box(((1 + edge) / 2, 4, 3.0), (edge - 1, 6, 0.5))
    scene.box(((edge + 7) / 2, 4, 3.0), (7 - edge, 6, 0.8))
    hf, soup = bake(scene)
    for x in (edge - 0.3, edge, edge + 0.3):
        assert floors_at(hf, soup, x, 4.1)[0] == 0.0, x


def test_walls_and_ledges_are_placed_where_their_geometry_crosses_the_step():
    # An obstacle with faces at x = 4.63 and 5.63 and a walkable platform from x = 7.87 to 8.87,
    # on a floor whose columns are 0.5 m wide. The platform's sides are ledges seen from its top
    # and walls seen from the ground; the floor's own edges are the grid's edges.
    scene = Scene().floor(0, 0, 10, 10).box((5.13, 5, 0), (1, 3, 1.0), walkable=False)
    scene.box((8.37, 5, 0), (1, 10, 1.0))
    hf, _ = bake(scene)
    row = hf.y == 10  # centres at y = 5.25

    def at(x: float, z: float, d: int) -> tuple[float, bool]:
        (s,) = np.flatnonzero(row & np.isclose(hf.centers_xy()[:, 0], x) & (hf.z == z))
        assert hf.links[s, d] < 0
        fraction, found = hf.link_end(np.array([s]), np.array([d]))
        return float(fraction[0]), bool(found[0])

    east, west = 0, 2
    assert DIR_DX[east] == 1 and DIR_DX[west] == -1
    expected = {
        (4.25, 0.0, east): 0.76,
        (6.25, 0.0, west): 1.24,  # obstacle faces, walls
        (7.25, 0.0, east): 1.24,
        (9.25, 0.0, west): 0.76,  # platform sides from the ground, walls
        (8.25, 1.0, west): 0.76,
        (8.75, 1.0, east): 0.24,  # platform edges from its top, ledges
        (0.25, 0.0, west): 0.5,
        (9.75, 0.0, east): 0.5,  # the floor's edges
    }
    for (x, z, d), fraction in expected.items():
        got, was_found = at(x, z, d)
        assert was_found and got == pytest.approx(fraction, abs=1e-9), (x, z, d, got)


@pytest.mark.parametrize("agent_height", [2.0, 0.51, 0.5, 0.3, 1e-6])
def test_a_wall_is_found_at_its_face_whatever_the_agent_height_against_the_climb(agent_height):
    """A 2.5 m obstacle with faces at x = 4.63 and 5.63 blocks an agent of any height at climb 0.5:
    its floor ends at the faces, 0.76 and 1.24 of the steps into it, and the faces are boundary
    segments there. The part of a wall that blocks was taken between a climb and the agent's
    height above the floor, which holds nothing at agent_height <= agent_max_climb: the wall was
    never found, nor bounded the floor, and the floor was eroded from the column centre instead."""
    params = dataclasses.replace(PARAMS, agent_height=agent_height, agent_max_climb=0.5)
    scene = Scene().floor(0, 0, 10, 10).box((5.13, 5, 0), (1, 3, 2.5), walkable=False)
    hf, _ = bake(scene, params)
    row = hf.y == 10  # centres at y = 5.25
    for x, d, fraction in ((4.25, 0, 0.76), (6.25, 2, 1.24)):  # east and west into the obstacle
        (s,) = np.flatnonzero(row & np.isclose(hf.centers_xy()[:, 0], x) & (hf.z == 0.0))
        assert hf.links[s, d] < 0
        got, found = hf.link_end(np.array([s]), np.array([d]))
        assert found[0] and got[0] == pytest.approx(fraction, abs=1e-9), (x, got)
    segments = hf.boundary
    for face in (4.63, 5.63):
        on_face = np.isclose(segments[:, 0], face) & np.isclose(segments[:, 2], face)
        ys = segments[on_face][:, [1, 3]]
        assert on_face.any() and ys.max() - ys.min() == pytest.approx(3.0), face


def test_a_ledge_of_a_platform_modelled_twice_in_place_is_found_where_it_is():
    """A platform whose mesh is duplicated in place (fuzz case 43272: stacked copies of a step).
    The trace from its top must cross from one half of its top into the other, not into the copy
    of its own half, or it never leaves the top and the ledge falls back to the cell's edge, here
    0.13 m past the platform's side, where the floor below is."""
    scene = Scene().floor(0, 0, 10, 10)
    for _ in range(2):
        scene.box((8.37, 5, 0), (1, 10, 1.0))
    hf, _ = bake(scene)
    row = hf.y == 10
    for x, d, fraction in ((8.25, 2, 0.76), (8.75, 0, 0.24)):  # west and east from its top
        (s,) = np.flatnonzero(row & np.isclose(hf.centers_xy()[:, 0], x) & (hf.z == 1.0))
        assert hf.links[s, d] < 0
        got, found = hf.link_end(np.array([s]), np.array([d]))
        assert found[0] and got[0] == pytest.approx(fraction, abs=1e-9), (x, got)


def test_wall_clipping_a_column_off_the_step_is_expected_at_its_centre():
    # A 0.1 m post at the corner of four 0.5 m columns blocks all four, but the step from
    # (4.25, 4.75) east runs at y = 4.75, below it: there the wall is only expected, at the
    # blocked column's centre, a point rather than a line.
    scene = Scene().floor(0, 0, 10, 10).box((5.02, 5.02, 0), (0.1, 0.1, 2.5), walkable=False)
    hf, _ = bake(scene)
    centre = hf.centers_xy()
    (s,) = np.flatnonzero(np.isclose(centre[:, 0], 4.25) & np.isclose(centre[:, 1], 4.75))
    east = 0
    assert hf.links[s, east] < 0
    fraction, found = hf.link_end(np.array([s]), np.array([east]))
    assert fraction[0] == 1.0 and not found[0]


def test_a_floor_ending_short_of_a_wall_ends_at_its_own_edge():
    """A floor that stops at x = 5.1 and a block whose face is at x = 5.3 (fuzz case 93506, where
    a slope ended a few centimetres before a steep face): the step east from the column centred at
    x = 4.75 meets the floor's end at 0.7 of the step, before the wall at 1.1. The floor ends
    there, where the outline goes; at the wall it would reach 0.2 m past the floor."""
    scene = Scene().floor(0, 0, 5.1, 10).box((5.8, 5, -1.0), (1, 10, 3.0), walkable=False)
    hf, _ = bake(scene)
    (s,) = np.flatnonzero(np.isclose(hf.centers_xy()[:, 0], 4.75) & np.isclose(hf.centers_xy()[:, 1], 5.25))
    east = 0
    assert hf.links[s, east] < 0
    fraction, found = hf.link_end(np.array([s]), np.array([east]))
    assert fraction[0] == pytest.approx(0.7, abs=1e-9) and found[0]


def test_obstacle_only_triangles_never_walkable():
    scene = Scene().floor(0, 0, 10, 10, walkable=False).box((5, 5, 0), (3, 3, 1.0), walkable=False)
    hf, _ = bake(scene)
    assert hf.span_count == 0
    assert hf.links.shape == (0, 4)


def test_kerb_lower_than_climb_is_stepped_over():
    """Recast's climb rule: a solid within agent_max_climb above a floor keeps the span walkable.
    The floor keeps its own height there: a zero-thickness sheet's top edge is no surface to stand
    on (Recast lifts the column to it, a ridge a cell wide floating over the floor)."""
    scene = Scene().floor(0, 0, 10, 10).quad((5.1, 0, 0), (5.1, 10, 0), (5.1, 10, 0.3), (5.1, 0, 0.3), walkable=False)
    hf, _ = bake(scene)
    assert hf.span_count == 20 * 20
    assert np.all(hf.z == 0.0)
    assert np.all(hf.links[(hf.x == 9) | (hf.x == 10), 0] >= 0)


def test_steep_face_lower_than_climb_leaves_the_floor_height():
    """A face too steep to walk rising from the floor within a climb step merges with the floor's
    span, but the span keeps the floor's height at the column centre, not the face's top over the
    column (up to a climb step above any surface there)."""
    scene = Scene().floor(0, 0, 10, 10).quad((5.12, 0, 0.3), (5.12, 10, 0.3), (5.0, 10, 0), (5.0, 0, 0), walkable=False)
    hf, _ = bake(scene)
    assert hf.span_count == 20 * 20
    assert np.all(hf.z == 0.0)
    assert np.all(hf.links[(hf.x == 9) | (hf.x == 10), 0] >= 0)


def test_bridge_over_walkway_two_spans_not_linked():
    scene = Scene().floor(0, 0, 10, 10).box((5, 5, 3.0), (10, 2, 0.2))
    hf, _ = bake(scene)
    i, j = 10, 10
    s = spans_at(hf, i, j)
    assert len(s) == 2
    np.testing.assert_allclose(hf.z[s], [0.0, 3.2])
    np.testing.assert_allclose(hf.ceiling[s[0]], 3.0)
    assert not linked(hf, s[0], s[1]) and not linked(hf, s[1], s[0])
    # Each level links along itself.
    left = spans_at(hf, i - 1, j)
    assert hf.links[s[0], 2] == left[0] and hf.links[s[1], 2] == left[1]


def test_area_ids_follow_the_floor():
    scene = Scene().floor(0, 0, 5, 5).floor(5, 0, 10, 5)
    hf, _ = bake(scene, areas=[3, 3, 7, 7])
    np.testing.assert_array_equal(hf.area, np.where(hf.centers_xy()[:, 0] < 5, 3, 7))


def test_far_coordinates_keep_precision():
    offset = np.array([1e6, -2e6, 1e6])
    base = Scene().floor(0, 0, 10, 10).floor(10, 0, 20, 10, z=0.4)
    far = Scene(base.vertices + offset, base.triangles, base.walkable)
    hf_far, soup = bake(far)
    hf_near, _ = bake(base)
    assert hf_far.span_count == hf_near.span_count == 40 * 20
    np.testing.assert_allclose(hf_far.z + soup.origin[2], hf_near.z + offset[2], atol=1e-9)
    np.testing.assert_array_equal(hf_far.links, hf_near.links)


def test_empty_soup_gives_empty_heightfield():
    soup = prepare_soup(np.zeros((0, 3)), np.zeros((0, 3), dtype=int))
    hf = build_heightfield(soup, PARAMS)
    assert hf.span_count == 0 and hf.links.shape == (0, 4)


coords = st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(
    verts=st.lists(st.tuples(coords, coords, st.floats(-2.0, 2.0)), min_size=3, max_size=12),
    tri_seed=st.integers(0, 2**31 - 1),
    n_tris=st.integers(1, 12),
    climb=st.floats(0.0, 1.5),
    agent_height=st.floats(0.1, 3.0),
)
def test_random_soups_give_consistent_links(verts, tri_seed, n_tris, climb, agent_height):
    rng = np.random.default_rng(tri_seed)
    v = np.array(verts)
    tris = rng.integers(0, len(v), size=(n_tris, 3))
    walkable = rng.random(n_tris) < 0.8
    soup = prepare_soup(v, tris, walkable)
    params = BakeParams(cell_size=0.4, agent_height=agent_height, agent_max_climb=climb)
    hf = build_heightfield(soup, params)
    s = hf.span_count
    assert hf.links.shape == (s, 4)
    assert np.all((hf.x >= 0) & (hf.x < hf.width) & (hf.y >= 0) & (hf.y < hf.height))
    if s == 0:
        return
    zmin, zmax = soup.vertices[:, 2].min(), soup.vertices[:, 2].max()
    assert np.all((hf.z >= zmin - 1e-9) & (hf.z <= zmax + 1e-9))
    assert np.all(hf.ceiling - hf.z >= agent_height)
    for d in range(4):
        ok = hf.links[:, d] >= 0
        a, b = np.flatnonzero(ok), hf.links[ok, d]
        assert np.array_equal(hf.links[b, (d + 2) % 4], a)
        assert np.array_equal(hf.x[b] - hf.x[a], np.full(len(a), DIR_DX[d]))
        assert np.array_equal(hf.y[b] - hf.y[a], np.full(len(a), DIR_DY[d]))
        # The step where the two columns meet, each floor carried there along its own slope but
        # not past its triangle's lowest or highest point, is climbable, or two climbable steps by
        # way of the lower floor's solid top (a riser merged onto it); or else the two floors'
        # planes come within a climb step of each other on the way between the centres (where
        # both triangles exist, which only the bake's trace knows: the foot of a ramp on a floor).
        half = 0.5 * params.cell_size * np.array([DIR_DX[d], DIR_DY[d]], dtype=float)
        bound_a, bound_b = hf.surface_range_at(a), hf.surface_range_at(b)
        there = np.clip(hf.z[b] - hf.gradient_at(b) @ half, bound_b[:, 0], bound_b[:, 1])
        here = np.clip(hf.z[a] + hf.gradient_at(a) @ half, bound_a[:, 0], bound_a[:, 1])
        at_border = np.abs(there - here) <= 2 * (climb + STEP_NOISE)
        gap_a = hf.z[b] - hf.z[a] - hf.gradient_at(b) @ (2 * half)  # at a's centre
        gap_b = hf.z[b] - hf.z[a] - hf.gradient_at(a) @ (2 * half)  # at b's centre
        on_the_way = (gap_a * gap_b <= 0) | (np.minimum(np.abs(gap_a), np.abs(gap_b)) <= climb + STEP_NOISE)
        assert np.all(at_border | on_the_way)


def _crates_and_storeys(scene_name: str) -> Scene:
    return {
        # Crates taller than the agent, closed round the floor they stand on, and a slab above it.
        "crates": lambda: (
            rotated_boxes_scene(3, count=12)[0]
            .box((6, 6, 0.0), (3, 2, 3.0), 30.0)
            .box((14, 13, 0.0), (2, 4, 3.0), 75.0)
            .box((10, 10, 3.0), (4, 3, 1.0), 30.0)
        ),
        "storeys": multi_storey,
    }[scene_name]()


def _assert_same_heightfield(a, b) -> None:
    for name in ("x", "y", "z", "ceiling", "area", "links", "boundary", "floor_triangle", "floor_across"):
        assert getattr(a, name).dtype == getattr(b, name).dtype, name
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for name in ("key", "fraction", "found"):
        assert np.array_equal(getattr(a.link_ends, name), getattr(b.link_ends, name)), name


def test_a_floor_sloping_up_from_a_ledge_is_no_step_by_way_of_its_column_centre():
    """A plateau 0.56 m above the foot of a 44 degree ramp rising away from it (climb 0.5, cell 0.2):
    nothing stands on the ramp, and the step at the columns' border is 0.56 m. Taking a floor's own
    centre height as a solid step between it and its neighbour linked the two (15 links)."""
    scene = Scene().floor(0.0, 0.0, 2.95, 3.0, z=0.56).ramp(3.0, 0.0, 3.4, 3.0, 0.0, 0.386)
    scene.floor(3.4, 0.0, 6.0, 3.0, z=0.386)
    hf = build_heightfield(prepare_soup(scene.vertices, scene.triangles), BakeParams())
    for d in range(4):
        a = np.flatnonzero(hf.links[:, d] >= 0)
        b = hf.links[a, d]
        assert not np.any((hf.z[a] > 0.55) & (hf.z[b] < 0.2))


@pytest.mark.parametrize("scene_name", ["crates", "storeys"])
def test_a_large_level_built_in_bands_and_runs_is_the_level_built_whole(monkeypatch, scene_name):
    """Large levels are rasterised, merged, tested against solids and walls, and their floors'
    ends cut, in batches, runs, bands and chunks (memory); the heightfield is the same, bit for
    bit, as built in one piece."""
    scene = _crates_and_storeys(scene_name)
    whole, _ = bake(scene)
    monkeypatch.setattr(spans, "_MERGE_CHUNK", 50)
    monkeypatch.setattr(spans, "_SOLID_BAND_COLUMNS", 7)
    monkeypatch.setattr(rasterise, "_CHUNK_PAIRS", 37)
    monkeypatch.setattr(ends, "_WALL_CHUNK", 13)
    monkeypatch.setattr(ends, "_PART_PAIRS", 5)
    monkeypatch.setattr(ends, "_SAMPLE_CHUNK", 7)
    pieces, _ = bake(scene)
    _assert_same_heightfield(whole, pieces)


def test_floors_own_samples_made_again_are_the_fragments_held(monkeypatch):
    """The fragments that are a floor's own sample are dropped through the linking and made again
    from the floors for the walls' ends (memory): the heightfield is the one built holding them."""
    scene = _crates_and_storeys("crates")
    rebuilt, _ = bake(scene)
    dropped = []

    def hold_all(frags, floors):
        sampled, alone = ends._own_samples(frags, floors)
        dropped.append(int(alone.sum()))
        return np.zeros_like(sampled), np.zeros_like(alone)

    monkeypatch.setattr(heightfield, "_own_samples", hold_all)
    held, _ = bake(scene)
    assert dropped[0] > 0
    _assert_same_heightfield(rebuilt, held)


def test_the_floors_only_hold_no_ceilings_areas_or_boundary():
    """The detail stage is handed the floors only (memory): the heightfield's ceilings, area ids and
    boundary are dropped, reading them fails, and the floors are the very arrays built."""
    hf, _ = bake(multi_storey())
    floors = hf.floors_only()
    assert floors.boundary is None
    with pytest.raises(IndexError):
        floors.ceiling[0]
    with pytest.raises(IndexError):
        floors.area[0]
    for name in ("x", "y", "z", "links", "link_ends", "floor_triangle", "floor_slope", "floor_corners"):
        assert getattr(floors, name) is getattr(hf, name), name
    assert len(hf.ceiling) == len(hf.area) == hf.span_count and hf.boundary is not None
