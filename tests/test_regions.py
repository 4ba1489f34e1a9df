"""Region stage: exact erosion distance, components, single-storey split, small-island drop."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from blender_navmesh.heightfield import DIR_DX, DIR_DY, Heightfield, LinkEnds, build_heightfield
from blender_navmesh.params import BakeParams
from blender_navmesh.regions import build_regions
from blender_navmesh.soup import prepare_soup

FIXTURES = Path(__file__).parent / "fixtures" / "fuzz"


def make_heightfield(floors, cs: float = 0.1, climb: float = 0.5) -> Heightfield:
    """Heightfield from floors given as (mask (W, H) bool, z scalar or (W, H), [area id]).

    Each True cell is a span at that floor's height; 4-neighbours link when their heights are
    within `climb` (the closest one if several, and only if that one picks back).
    """
    w, h = floors[0][0].shape
    xs, ys, zs, areas = [], [], [], []
    for floor in floors:
        mask = np.asarray(floor[0], dtype=bool)
        z = np.broadcast_to(np.asarray(floor[1], dtype=float), mask.shape)
        i, j = np.nonzero(mask)
        xs.append(i)
        ys.append(j)
        zs.append(z[i, j])
        areas.append(np.full(len(i), floor[2] if len(floor) > 2 else 0))
    x, y, z, area = (np.concatenate(a) for a in (xs, ys, zs, areas))
    order = np.lexsort((z, x, y))
    x, y, z, area = x[order], y[order], z[order], area[order]
    by_column: dict[tuple[int, int], list[int]] = {}
    for k in range(len(z)):
        by_column.setdefault((int(x[k]), int(y[k])), []).append(k)
    links = np.full((len(z), 4), -1, dtype=np.int64)
    for k in range(len(z)):
        for d in range(4):
            cands = [
                n
                for n in by_column.get((int(x[k] + DIR_DX[d]), int(y[k] + DIR_DY[d])), [])
                if abs(z[n] - z[k]) <= climb
            ]
            if cands:
                links[k, d] = min(cands, key=lambda n: abs(z[n] - z[k]))
    # Links are mutual, as build_heightfield makes them.
    for k, d in zip(*np.nonzero(links >= 0)):
        if links[links[k, d], (d + 2) % 4] != k:
            links[k, d] = -1
    return Heightfield(
        cs,
        np.zeros(2),
        w,
        h,
        x.astype(np.int32),
        y.astype(np.int32),
        z,
        np.full(len(z), np.inf),
        area.astype(np.int32),
        links,
    )


def params(**kw) -> BakeParams:
    base = dict(cell_size=0.1, agent_radius=0.3, region_min_area=0.0, max_edge_error=0.1)
    base.update(kw)
    return BakeParams(**base)


def two_rooms(door_cells: int) -> np.ndarray:
    """Two 3 m x 3 m rooms (cs 0.1) side by side, a one-cell wall between with a centred door."""
    mask = np.ones((61, 30), dtype=bool)
    mask[30, :] = False
    lo = 15 - door_cells // 2
    mask[30, lo : lo + door_cells] = True
    return mask


def assert_single_storey(hf: Heightfield, region: np.ndarray) -> None:
    keep = region >= 0
    keys = np.stack([region[keep], hf.x[keep], hf.y[keep]], axis=1)
    assert len(np.unique(keys, axis=0)) == len(keys), "a region holds two spans of one column"


def test_distance_to_a_straight_wall_is_exact():
    hf = make_heightfield([(np.ones((20, 20), bool), 0.0)])
    rm = build_regions(hf, params(agent_radius=0.5))
    # Spans within reach of the x = 0 wall only (rows away from the other walls): distance = centre x.
    near = (hf.x < 5) & (hf.y >= 7) & (hf.y < 13)
    np.testing.assert_allclose(rm.distance[near], (hf.x[near] + 0.5) * 0.1, atol=1e-12)


def test_distance_matches_brute_force_near_boundaries():
    mask = np.ones((30, 30), bool)
    mask[10:13, 14] = False  # a thin wall piece
    mask[20, 5] = False  # a one-cell pillar
    mask[25:, 25:] = False  # a notch in the outer wall
    hf = make_heightfield([(mask, 0.0)])
    radius = 0.4
    rm = build_regions(hf, params(agent_radius=radius))
    centre = hf.centers_xy()
    s, d = np.nonzero(hf.links < 0)
    # Boundary = cell edges with a missing link; distance to the nearest point of any such segment.
    mid = centre[s] + 0.05 * np.stack([DIR_DX[d], DIR_DY[d]], axis=1)
    tangent = np.stack([DIR_DY[d], DIR_DX[d]], axis=1).astype(float)
    rel = centre[:, None, :] - mid[None]
    t = np.clip((rel * tangent[None]).sum(axis=2), -0.05, 0.05)
    brute = np.hypot(*(rel - t[:, :, None] * tangent[None]).transpose(2, 0, 1)).min(axis=1)
    near = brute < radius + 0.1
    np.testing.assert_allclose(rm.distance[near], brute[near], atol=1e-12)
    assert (rm.distance >= brute - 1e-12).all()


def test_walls_are_points_at_the_blocked_column_centres():
    # Same mask with every missing link a wall (block fraction 1): the boundary is the set of
    # blocked column centres, so distances are to the nearest such point.
    mask = np.ones((30, 30), bool)
    mask[10:13, 14] = False
    mask[20, 5] = False
    hf = make_heightfield([(mask, 0.0)])
    hf.link_ends = LinkEnds.from_table(hf.links, np.ones((hf.span_count, 4)))
    radius = 0.4
    rm = build_regions(hf, params(agent_radius=radius))
    centre = hf.centers_xy()
    s, d = np.nonzero(hf.links < 0)
    blocked = centre[s] + 0.1 * np.stack([DIR_DX[d], DIR_DY[d]], axis=1)
    brute = np.hypot(*(centre[:, None, :] - blocked[None]).transpose(2, 0, 1)).min(axis=1)
    near = brute < radius + 0.1
    np.testing.assert_allclose(rm.distance[near], brute[near], atol=1e-12)
    assert (rm.distance >= brute - 1e-12).all()


def test_doorway_narrower_than_the_agent_closes():
    hf = make_heightfield([(two_rooms(5), 0.0)])  # 0.5 m door < 2 * 0.3 m
    assert build_regions(hf, params()).region_count == 2


def test_doorway_wider_than_the_agent_stays_open():
    hf = make_heightfield([(two_rooms(8), 0.0)])  # 0.8 m door > 0.6 m
    rm = build_regions(hf, params())
    assert rm.region_count == 1
    assert (rm.region[(hf.x == 30)] == 0).any()


def test_erosion_keeps_exactly_the_spans_at_least_radius_from_walls():
    hf = make_heightfield([(np.ones((30, 30), bool), 0.0)])
    rm = build_regions(hf, params(agent_radius=0.3))
    # Centres at (i + 0.5) * 0.1 >= 0.3 from each wall: i in 3..26.
    inside = (hf.x >= 3) & (hf.x <= 26) & (hf.y >= 3) & (hf.y <= 26)
    np.testing.assert_array_equal(rm.region >= 0, inside)


def test_two_disjoint_rooms_give_two_regions():
    mask = np.zeros((50, 20), bool)
    mask[:20] = True
    mask[30:] = True
    rm = build_regions(make_heightfield([(mask, 0.0)]), params())
    assert rm.region_count == 2
    assert len(rm.region_area) == 2


def test_small_islands_are_dropped():
    mask = np.zeros((60, 20), bool)
    mask[:30] = True  # 3 m x 2 m
    mask[40:48, 5:13] = True  # 0.8 m x 0.8 m, eroded to 0.2 m x 0.2 m
    hf = make_heightfield([(mask, 0.0)])
    rm = build_regions(hf, params(region_min_area=0.5))
    assert rm.region_count == 1
    assert (rm.region[hf.x >= 40] == -1).all()


def test_area_ids_split_regions():
    left = np.zeros((40, 20), bool)
    left[:20] = True
    hf = make_heightfield([(left, 0.0, 1), (~left, 0.0, 2)])
    rm = build_regions(hf, params(agent_radius=0.0))
    assert rm.region_count == 2
    assert sorted(rm.region_area.tolist()) == [1, 2]
    for r in range(2):
        assert len(np.unique(hf.area[rm.region == r])) == 1


def ramp_scene():
    """A ground floor, a ramp beside it (flat, then up to z = 3) and an upper floor that extends
    back over the ground."""
    w, h = 60, 20
    ground = np.zeros((w, h), bool)
    ground[:, :10] = True
    ramp = np.zeros((w, h), bool)
    ramp[:30, 10:] = True
    ramp_z = np.repeat(np.clip((np.arange(w) - 5) * 0.12, 0.0, 3.0)[:, None], h, axis=1)
    upper = np.zeros((w, h), bool)
    upper[30:, :] = True
    return make_heightfield([(ground, 0.0), (ramp, ramp_z), (upper, 3.0)], climb=0.15)


def test_floors_joined_by_a_ramp_split_into_single_storey_regions():
    hf = ramp_scene()
    rm = build_regions(hf, params(agent_radius=0.2))
    assert rm.region_count >= 2
    assert_single_storey(hf, rm.region)
    ground = (hf.z == 0) & (hf.x >= 35) & (hf.y < 8) & (rm.region >= 0)
    upper = (hf.z == 3) & (hf.x >= 35) & (hf.y < 8) & (rm.region >= 0)
    assert ground.any() and upper.any()
    assert np.intersect1d(rm.region[ground], rm.region[upper]).size == 0


def assert_never_borders_itself(hf: Heightfield, region: np.ndarray, climb: float) -> None:
    """No region holds two spans of neighbouring columns that are not linked, nor two spans of
    diagonal columns more than `climb` apart in height that are not joined through either column
    between them."""
    at = {(int(x), int(y), int(r)): k for k, (x, y, r) in enumerate(zip(hf.x, hf.y, region)) if r >= 0}

    def step(k: int, d: int) -> int:
        return -1 if k < 0 else int(hf.links[k, d])

    for (x, y, r), k in at.items():
        for d in range(4):
            other = at.get((x + DIR_DX[d], y + DIR_DY[d], r))
            assert other is None or hf.links[k, d] == other, f"region {r} borders itself at column {(x, y)}"
        for d in range(4):  # the diagonal between direction d and the next one
            e = (d + 1) % 4
            other = at.get((x + DIR_DX[d] + DIR_DX[e], y + DIR_DY[d] + DIR_DY[e], r))
            joined = other in (step(step(k, d), e), step(step(k, e), d))
            apart = other is not None and abs(hf.z[other] - hf.z[k]) > climb
            assert not apart or joined, f"region {r} touches itself at a corner of column {(x, y)}"


def platform_reached_by_a_ramp(width: int = 40) -> Heightfield:
    """A floor all round a platform 1.2 m up (the floor under it is gone), and a ramp from the floor
    to the platform's west side: the floor meets the platform's other three sides without a link."""
    floor = np.ones((width, width), bool)
    platform = np.zeros((width, width), bool)
    platform[15:30, 15:30] = True
    ramp = np.zeros((width, width), bool)
    ramp[3:15, 20:25] = True
    floor &= ~platform & ~ramp
    ramp_z = np.repeat(np.clip((np.arange(width) - 2) * 0.1, 0.0, 1.2)[:, None], width, axis=1)
    return make_heightfield([(floor, 0.0), (ramp, ramp_z), (platform, 1.2)], climb=0.15)


def test_a_region_never_borders_itself():
    """The floor, the ramp and the platform are one connected piece; kept as one region, its
    outline would run along both sides of the platform's edge (seen from above, the same line
    twice), which the polygon stage cannot decompose cleanly."""
    hf = platform_reached_by_a_ramp()
    for radius in (0.0, 0.05):
        rm = build_regions(hf, params(agent_radius=radius))
        assert_single_storey(hf, rm.region)
        assert_never_borders_itself(hf, rm.region, params().agent_max_climb)
        # Split only where it must be: a few large regions, not a patchwork. (Eroded by half a cell,
        # the floor no longer meets the platform, and one region borders nothing of itself.)
        assert rm.region_count == 1 if radius else 2 <= rm.region_count <= 4
    # Without the ramp the platform is an island of its own and the floor one region round it.
    rm = build_regions(
        hf_without_ramp := make_heightfield([(~platform_mask(40), 0.0), (platform_mask(40), 1.2)], climb=0.15),
        params(agent_radius=0.0),
    )
    assert rm.region_count == 2
    assert_never_borders_itself(hf_without_ramp, rm.region, params().agent_max_climb)


def test_a_region_never_touches_itself_at_a_corner():
    """A ramp climbs under a slab's corner to the slab's far side (fuzz case 501108, radius 0): the
    slab and the ramp are one connected piece, and a column of the slab lies diagonal to one of the
    ramp under it with neither column between joining them. Kept as one region, its outline turned
    at that corner from the slab down to the ramp, and a slab polygon's corner lay in that edge (a
    T-junction)."""
    case = json.loads((FIXTURES / "case501108_max_edge_len_t_junction.json").read_text())
    p = BakeParams.from_dict(case["params"])
    soup = prepare_soup(np.array(case["vertices"]), np.array(case["triangles"]), np.array(case["walkable"]))
    hf = build_heightfield(soup, p)
    rm = build_regions(hf, p)
    assert rm.region_count > 0
    assert_single_storey(hf, rm.region)
    assert_never_borders_itself(hf, rm.region, p.agent_max_climb)


def platform_mask(width: int) -> np.ndarray:
    mask = np.zeros((width, width), bool)
    mask[15:30, 15:30] = True
    return mask


def test_empty_heightfield_gives_no_regions():
    hf = make_heightfield([(np.zeros((5, 5), bool), 0.0)])
    rm = build_regions(hf, params())
    assert rm.region_count == 0 and len(rm.region) == 0


@st.composite
def layered_masks(draw):
    w = draw(st.integers(4, 14))
    h = draw(st.integers(4, 14))
    cells = st.lists(st.booleans(), min_size=w * h, max_size=w * h)
    lower = np.array(draw(cells)).reshape(w, h)
    upper = np.array(draw(cells)).reshape(w, h)
    # The upper floor rises from z = 0 to 1 along x in steps below the climb, so it often joins the lower one.
    z = np.repeat((np.arange(w) * 0.12)[:, None], h, axis=1) + draw(st.sampled_from([0.0, 0.3]))
    # A heightfield never holds two floors at one height in a column: those would be one span.
    return lower, upper & (np.abs(z) >= 0.1), z


@settings(max_examples=60, deadline=None)
@given(layered_masks(), st.sampled_from([0.0, 0.1, 0.15, 0.25]))
def test_random_layered_floors(masks, radius):
    lower, upper, z = masks
    hf = make_heightfield([(lower, 0.0), (upper, z)], climb=0.15)
    rm = build_regions(hf, params(agent_radius=radius))
    assert len(rm.region) == hf.span_count
    assert_single_storey(hf, rm.region)
    assert set(np.unique(rm.region[rm.region >= 0]).tolist()) == set(range(rm.region_count))
    assert ((rm.region >= 0) <= (rm.distance >= radius)).all()


def _wall_with_gap(gap: float, angle: float):
    """A 20 m floor crossed by a wall (two 12 m boxes, 0.4 m thick, at `angle` degrees) with one gap
    `gap` wide at the origin: (heightfield, params, the two walls' boxes as (centre, half length))."""
    from blender_navmesh import heightfield
    from blender_navmesh.soup import prepare_soup
    from levels import Scene

    params = BakeParams(cell_size=0.3, agent_radius=0.6, region_min_area=64 * 0.09)
    c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))
    scene = Scene().floor(-10, -10, 10, 10)
    for side in (-1, 1):
        along = side * (gap / 2 + 6.0)
        scene.box((along * c, along * s, 0.0), (12.0, 0.4, 2.5), angle)
    soup = prepare_soup(scene.vertices, scene.triangles, None, None)
    return heightfield.build_heightfield(soup, params), params, soup.origin[:2], (c, s)


def test_bridge_spans_hold_a_passage_half_a_cell_wider_than_the_agent_and_only_there():
    """Across a gap 2r + cs/2 wide, cells whose centre is within r of a wall but holding a point
    farther join the floor on both sides into one region; no cell along the walls' faces is one
    (away from the floor's edge, where a wall and the edge meet in a wedge that may hold some)."""
    for angle in (0.0, 30.0, 45.0, 100.0):
        hf, params, origin, (c, s) = _wall_with_gap(2 * 0.6 + 0.15, angle)
        regions = build_regions(hf, params)
        assert len(regions.bridges), "the gap holds no cell centre farther than r: bridges are needed"
        centre = hf.centers_xy()[regions.bridges] + origin
        inner = np.abs(centre).max(axis=1) < 8.0
        along_wall = np.abs(centre[inner] @ np.array([c, s]))  # from the gap's middle
        assert inner.any() and along_wall.max() < 0.6 + 0.3, "bridges lie in the gap, not along the walls"
        assert (regions.distance[regions.bridges] <= params.agent_radius + 1e-9).all()
        # The bridge points lie farther than r, inside their own cells.
        assert (np.abs(regions.bridge_xy - hf.centers_xy()[regions.bridges]) <= 0.15 + 1e-9).all()
        # One region holds the floor on both sides of the wall, near the gap.
        sides = [np.array([-s, c]) * 1.5, np.array([s, -c]) * 1.5]
        labels = set()
        for point in sides:
            k = int(np.argmin(np.hypot(*(hf.centers_xy() + origin - point).T)))
            labels.add(int(regions.region[k]))
        assert len(labels) == 1 and -1 not in labels


def test_no_bridge_spans_where_the_gap_is_narrower_than_the_agent():
    hf, params, origin, _ = _wall_with_gap(2 * 0.6 - 0.05, 30.0)
    regions = build_regions(hf, params)
    centre = hf.centers_xy()[regions.bridges] + origin
    assert not (np.hypot(*centre.T) < 3.0).any()


def _catwalk(width: float, yaw: float, offset: tuple[float, float], params: BakeParams):
    """A free-standing strip 20 m long and `width` wide centred on the origin at `yaw` degrees, its
    own island (ledges on both sides), with a speck of floor at (-15, -15) + `offset` cells setting
    the grid's origin: (heightfield, soup origin (2,), the strip's direction, across)."""
    from levels import Scene

    c, s = np.cos(np.radians(yaw)), np.sin(np.radians(yaw))
    scene = Scene().floor(-10.0, -width / 2, 10.0, width / 2)
    vertices = scene.vertices.copy()
    vertices[:, :2] = vertices[:, :2] @ np.array([[c, s], [-s, c]])
    corner = np.array([-15.0, -15.0]) + np.array(offset) * params.cell_size
    speck = np.array([[*corner, 0.0], [corner[0] + 0.01, corner[1], 0.0], [corner[0], corner[1] + 0.01, 0.0]])
    vertices = np.vstack([vertices, speck])
    triangles = np.vstack([scene.triangles, [[len(vertices) - 3, len(vertices) - 2, len(vertices) - 1]]])
    soup = prepare_soup(vertices, triangles, None, None)
    return build_heightfield(soup, params), soup.origin[:2], np.array([c, s]), np.array([-s, c])


def test_a_catwalk_half_a_cell_wider_than_the_agent_is_one_region_along_its_length():
    """A catwalk 2r + cs / 2 or 2r + cs wide, an island of its own, at every 15 degrees (and 1) and
    at offsets from the grid: one region holds it (no gap along it longer than a cell's diagonal),
    and only the strip. Where no cell centre lies farther than r from both ledges (2r + cs / 2 on
    and at 45 degrees to the grid, 2r + cs with its edges on cell centres), only bridge spans hold
    it; they were kept only between two pieces of inside spans, and the catwalk had no region at
    all. At 2r + cs it reaches within a cell and a half of the eroded ends; at 2r + cs / 2 an end
    held by bridges past the last inside span (a dead end, touching one piece) is still left out:
    up to 2.3 m of it at 1 degree."""
    params = BakeParams()
    r, cs = params.agent_radius, params.cell_size
    for width in (2 * r + cs / 2, 2 * r + cs):
        short = 1.5 * cs if width == 2 * r + cs else 2.5
        for offset in ((0.0, 0.0), (0.5, 0.5), (0.37, 0.11)):
            for yaw in (0, 1, 15, 30, 45, 60, 75, 90):
                hf, origin, along, across = _catwalk(width, yaw, offset, params)
                regions = build_regions(hf, params)
                kept = np.flatnonzero(regions.region >= 0)
                case = (width, offset, yaw)
                assert len(kept) and len(np.unique(regions.region[kept])) == 1, case
                centre = hf.centers_xy(kept) + origin
                # Within the strip, its cells' centres at most half a cell's diagonal off the free floor.
                assert (np.abs(centre @ across) <= width / 2 - r + cs * np.sqrt(0.5) + 1e-9).all(), case
                ends = np.sort(centre @ along)
                assert ends[0] <= -(10 - r) + short and ends[-1] >= 10 - r - short, case
                assert np.diff(ends).max() <= cs * np.sqrt(2), case
