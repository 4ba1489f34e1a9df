"""The navmesh boundary is conservative: it keeps the bake radius off the real geometry.

Judged exactly (shapely) on seeded random levels from tests/oracle.py: the floor navmesh's boundary
never reaches more than 2 cm into the band of width r0 around the obstacles and the floor's edge,
and the navmesh still covers at least 98% of the exact free space (floor shrunk by r0 minus
obstacles grown by r0).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import shapely

from blender_navmesh import AreaVolume, BakeParams, generate
from blender_navmesh.boundary import FloorBoundary
from blender_navmesh.geometry import point_segment_distance
from blender_navmesh.heightfield import build_heightfield
from blender_navmesh.query import NavMeshQuery
from blender_navmesh.soup import prepare_soup
from levels import Scene, multi_storey
from tests.navmesh_checks import assert_valid_navmesh
from tests.oracle import PARAMS, Level, _prism, floor_polygons, painted_areas, pillar_rows, random_level

# How far (m) the boundary may reach into the band, and the least share of the free space covered.
MAX_INTRUSION = 0.02
MIN_COVERAGE = 0.98
# Boundary sample spacing (m) for the intrusion depth.
SAMPLE_STEP = 0.02


def baked_level(name: str, seed: int, make_level=random_level):
    """(level, navmesh): the level make_level(seed) (or make_level(seed, r0) when it takes the
    radius) baked with PARAMS[name]."""
    kw = PARAMS[name]
    level = make_level(seed) if make_level is random_level else make_level(seed, kw["agent_radius"])
    return level, generate(level.scene.vertices, level.scene.triangles, BakeParams(**kw))


def boundary_figures(name: str, seed: int, make_level=random_level) -> tuple[float, float, float]:
    """(max intrusion depth into the band, navmesh area inside the band less 2 cm, coverage) on the
    level make_level(seed) baked with PARAMS[name]."""
    level, mesh = baked_level(name, seed, make_level)
    return figures(level, mesh, PARAMS[name]["agent_radius"])


def figures(level, mesh, r0: float) -> tuple[float, float, float]:
    """boundary_figures of a baked level."""
    nav = floor_polygons(mesh, level)
    geometry = level.geometry()
    samples = shapely.get_coordinates(shapely.segmentize(nav.boundary, SAMPLE_STEP))
    depth = float((r0 - shapely.distance(geometry, shapely.points(samples))).max())
    band = nav.intersection(geometry.buffer(r0 - MAX_INTRUSION, quad_segs=32)).area
    free = level.free_space(r0)
    return depth, band, nav.intersection(free).area / free.area


# Levels where the bands of two obstacles, or of an obstacle and the floor's edge, pinch the floor
# to a strip a few millimetres wide, narrower than an outline can follow: pushed off the walls, the
# rings on its two sides cross, and are merged into one (seed 10: two holes; 215: the outer ring and
# holes). On seed 200 a spike of floor between two obstacles must retreat along its length.
PINCHED = [("r0.6", 10), ("r0.6", 200), ("r0.6", 215), ("r0.6", 253)]


@pytest.mark.parametrize("name, seed", [(name, seed) for seed in range(20) for name in sorted(PARAMS)] + PINCHED)
def test_boundary_keeps_the_bake_radius_off_the_geometry(name, seed):
    depth, band, coverage = boundary_figures(name, seed)
    assert depth <= MAX_INTRUSION, f"the boundary reaches {depth:.3f} m into the band"
    assert band < 1e-4
    assert coverage >= MIN_COVERAGE


def test_an_area_border_beside_a_wall_s_end_keeps_the_bake_radius_off_the_wall():
    """An area volume whose edge passes 8 mm from the end corner of a thin wall: the volume's region
    meets the wall's band only between the two ends of its border with the floor around it, and
    its wall edge there, between two shared points, was never pushed (the push dropped the traced
    points between them): a chord across the band's arc round the corner, 0.243 m from the wall,
    and a path at the bake radius clipped the corner by 5.7 cm (by as much at any wider radius).
    Without the volume the navmesh keeps 0.300 m."""
    r0 = PARAMS["r0.3"]["agent_radius"]
    ring = [(20.808992, 11.940083), (23.579175, 15.462677), (23.343359, 15.648124), (20.573175, 12.125531)]
    wall = shapely.Polygon(ring)  # 0.3 m thin, 3 m tall
    scene = Scene().floor(0, 0, 30, 30)
    scene.add(
        [(x, y, 0.0) for x, y in ring] + [(x, y, 3.0) for x, y in ring],
        [(0, 2, 1), (0, 3, 2), (4, 5, 6), (4, 6, 7)]
        + [t for k in range(4) for t in ((k, (k + 1) % 4, 4 + (k + 1) % 4), (k, 4 + (k + 1) % 4, 4 + k))],
    )
    shell = Scene().box((22.145873, 8.260905, -1.0), (4.689810, 6.388614, 2.0), 55.488075)
    mud = AreaVolume(shell.vertices, shell.triangles, 4, "mud")
    mesh = generate(scene.vertices, scene.triangles, BakeParams(**PARAMS["r0.3"]), volumes=[mud])
    assert_valid_navmesh(mesh)  # the two regions' outlines still weld along their border
    assert 4 in mesh.areas.tolist()
    navmesh = shapely.union_all(
        [shapely.Polygon(mesh.vertices[mesh.polygon(p), :2]) for p in range(mesh.polygon_count)]
    )
    assert navmesh.distance(wall) >= r0 - MAX_INTRUSION
    query = NavMeshQuery(mesh)
    for radius in (r0, 3 * r0):
        path = query.find_path((23.0, 12.5, 0.0), (20.5, 14.5, 0.0), radius=radius)
        assert path.status == "found"
        assert shapely.LineString(path.points[:, :2]).distance(wall) >= radius - MAX_INTRUSION


def test_a_wall_whose_end_pokes_through_another_keeps_the_bake_radius_off_its_end():
    """Two crossing thin walls (random_level 116's): the end corner of one pokes 8 cm through the
    other's face, in a column diagonal to the floor beside it, which no link of that floor looked
    into. The poking piece was missing from the floor's boundary, and the navmesh reached 6.1 cm
    into its band (r0.6)."""
    crossed = [(19.958, 8.622), (15.003, 13.639), (14.79, 13.428), (19.744, 8.411)]
    end = np.array([19.039, 9.030])
    along = np.array([21.811, 8.535]) - end
    along /= np.hypot(*along)
    across = 0.3 * np.array([-along[1], along[0]])
    poking = [end, end + 2.8 * along, end + 2.8 * along + across, end + across]
    scene = Scene().floor(0.0, 0.0, 30.0, 30.0)
    walls = []
    for ring in (crossed, [tuple(p) for p in poking]):
        ring = ring if shapely.Polygon(ring).exterior.is_ccw else ring[::-1]
        _prism(scene, ring, 3.0)
        walls.append(shapely.Polygon(ring))
    assert walls[1].difference(walls[0]).geoms[0].area > 0  # the end beyond the crossed wall
    level = Level(scene, shapely.box(0.0, 0.0, 30.0, 30.0), walls, 3.0)
    for name in sorted(PARAMS):
        r0 = PARAMS[name]["agent_radius"]
        navmesh = floor_polygons(generate(scene.vertices, scene.triangles, BakeParams(**PARAMS[name])), level)
        for wall in walls:
            assert navmesh.distance(wall) >= r0 - MAX_INTRUSION, name


# Random levels with area volumes painted over them (oracle.painted_areas): regions' borders meet
# the obstacles' bands, and the wall edge between a border's two ends was not pushed off the walls.
# Before, seed 35 reached 5.4 cm into the band (r0.3), seeds 42, 65, 84 and 110 4, 15, 10 and 10 cm
# (r0.6).
PAINTED = [(name, seed) for seed in range(6) for name in sorted(PARAMS)] + [
    ("r0.3", 35),
    ("r0.6", 42),
    ("r0.6", 65),
    ("r0.6", 84),
    ("r0.6", 110),
]


@pytest.mark.parametrize("name, seed", PAINTED)
def test_area_volumes_keep_the_bake_radius_off_the_geometry(name, seed):
    level = random_level(seed)
    mesh = generate(
        level.scene.vertices, level.scene.triangles, BakeParams(**PARAMS[name]), volumes=painted_areas(seed)
    )
    depth, band, coverage = figures(level, mesh, PARAMS[name]["agent_radius"])
    assert depth <= MAX_INTRUSION, f"the boundary reaches {depth:.3f} m into the band"
    assert band < 1e-4
    assert coverage >= MIN_COVERAGE


# Colonnades (oracle.pillar_rows) where the bands of neighbouring pillars nearly touch. A tip of
# floor reaching into the pinch between two pillars faces a wall on both sides, so no parallel push
# clears it: its outline is settled onto the band's edge instead (split at the deepest point of
# each chord, points moved off the walls). Before that, seed 2 reached 27 cm into the band, 67
# 13 cm, 84 6 cm (r0.6), and 31, 94, 113 and 137 4 cm (r0.3).
COLONNADES = [(name, seed) for seed in range(30) for name in sorted(PARAMS)] + [
    ("r0.3", 31),
    ("r0.6", 67),
    ("r0.6", 84),
    ("r0.3", 94),
    ("r0.3", 113),
    ("r0.3", 137),
]


@pytest.mark.parametrize("name, seed", COLONNADES)
def test_a_colonnade_whose_pillar_bands_nearly_touch_keeps_the_bake_radius_off_them(name, seed):
    depth, band, _ = boundary_figures(name, seed, pillar_rows)
    assert depth <= MAX_INTRUSION, f"the boundary reaches {depth:.3f} m into the band"
    assert band < 1e-4


# Colonnades with area volumes painted over them (oracle.painted_areas on the 16 m floor): the
# pieces of a volume's floor cut apart by the pillars' bands were dropped as islands under
# region_min_area though they border the floor around them (seeds 5, 18, 30 and 43 covered 0.895 to
# 0.897 of the free space, 0.98 to 0.99 without the volumes; now 0.980 to 0.984).
@pytest.mark.parametrize("seed", [5, 18, 30, 43])
def test_a_painted_colonnade_keeps_the_pieces_of_floor_its_areas_are_cut_into(seed):
    r0 = PARAMS["r0.6"]["agent_radius"]
    level = pillar_rows(seed, r0)
    volumes = painted_areas(seed, 16.0, 4)
    mesh = generate(level.scene.vertices, level.scene.triangles, BakeParams(**PARAMS["r0.6"]), volumes=volumes)
    depth, band, coverage = figures(level, mesh, r0)
    assert depth <= MAX_INTRUSION and band < 1e-4
    assert coverage >= MIN_COVERAGE


# Where the holes of a colonnade merge across its pinches, pushing the merged ring could cut a wide
# swathe of floor away (seeds 63 and 136 lost about 20% of the free space, the floor between the two
# rows): such a push is refused and the ring settled instead. (A few colonnades still cover 97.5 to
# 98%: the strips left in the pinches are narrower than the cells.)
@pytest.mark.parametrize("seed", [63, 136])
def test_a_colonnade_keeps_the_floor_between_its_rows(seed):
    assert boundary_figures("r0.6", seed, pillar_rows)[2] >= MIN_COVERAGE


# Where the bands of a colonnade's pillars merge, the outline settled onto the band's edge follows
# its arcs with a corner every 20-30 degrees of turn, and each corner, a notch of the floor, costs
# the polygon stage a portal. A short wall edge between two such corners is dropped where its
# neighbours, extended, meet within max_edge_error of it and of the band's edge, and no wall lies
# in front of it (seed 2: 68 -> 40 polygons, seed 3: 73 -> 31).
@pytest.mark.parametrize("seed", [2, 3])
def test_a_colonnade_s_merged_bands_are_outlined_with_few_corners(seed):
    kw = PARAMS["r0.6"]
    level, mesh = baked_level("r0.6", seed, pillar_rows)
    assert mesh.polygon_count <= 45
    corners = shapely.points(shapely.get_coordinates(floor_polygons(mesh, level).boundary))
    stand_off = shapely.distance(level.geometry(), corners) - kw["agent_radius"]
    assert stand_off.max() <= kw["max_edge_error"]
    depth, band, coverage = figures(level, mesh, kw["agent_radius"])
    assert depth <= MAX_INTRUSION and band < 1e-4 and coverage >= MIN_COVERAGE


def test_settling_adds_no_point_the_band_holds(monkeypatch):
    """Where the bands of walls on both sides of a ring overlap (three storeys of a fuzz level), a
    point splitting a deep edge cannot be moved out of the band: settling keeps only the new points
    that leave it. Kept, they were split again round after round (31 points grew to 14,291)."""
    import json

    import numpy as np

    from blender_navmesh.contours import push

    level = json.loads((Path(__file__).parent / "fixtures" / "levels" / "squeezed_storeys.json").read_text())
    settled, original = [], push._settle

    def settle(ring, nb, fixed, boundary):
        out, out_nb = original(ring, nb, fixed, boundary)
        new = ~(out[:, None, :2] == ring[None, :, :2]).all(axis=2).any(axis=1)  # added or moved
        reach = boundary.radius - push._SETTLE_DEPTH * boundary.cs
        settled.append(boundary.point_distance(out[new, :2], out[new, 2], boundary.radius) >= reach)
        return out, out_nb

    monkeypatch.setattr(push, "_settle", settle)
    params = BakeParams.from_dict(level["params"])
    mesh = generate(np.array(level["vertices"]), np.array(level["triangles"]), params, np.array(level["walkable"]))
    assert settled and all(ok.all() for ok in settled)
    assert mesh.polygon_count > 0


# Fuzz levels whose outlines are settled onto the band's edge: 112418, a thin strip of ramp rising
# through a slab, where settling once moved an outline point straight away from the nearest wall
# round after round, 0.8 m down the ramp and off its region (0.58 m above the floor there); and
# levels that settle on the current code (112418 no longer does: since a ramp blocks only where it
# has risen a climb above the floor, the band no longer closes along its strip).
SETTLING_LEVELS = [
    "case112418_off_surface",
    "case432264_nvp3_path_off_surface",
    "case50027_hole_ignored",
    "case5799_t_junction",
    "case61065_needle",
]


def test_settling_moves_no_point_farther_than_the_radius(monkeypatch):
    """No settled point lies farther than agent_radius and the band's tolerance (MAX_INTRUSION)
    from the outline it was settled from, or from a wall that crosses that outline (the outline
    then goes round the wall's end: in 50027 boundary segments crossed the settled outlines by up
    to 36 cm, and reached up to 6 cm into polygons on their floor)."""
    import numpy as np

    from blender_navmesh.contours import push
    from tests.test_soup_fuzz import load_reproducer

    moved, crossed, original = [], [], push._settle

    def settle(ring, nb, fixed, boundary):
        out, out_nb = original(ring, nb, fixed, boundary)
        before = shapely.LinearRing(ring[:, :2])
        walls = shapely.linestrings(boundary.seg[:, :4].reshape(-1, 2, 2))
        across = walls[shapely.intersects(walls, before)]
        crossed.append(len(across))
        from_either = np.minimum(
            shapely.distance(before, shapely.points(out[:, :2])),
            shapely.distance(shapely.multilinestrings(across), shapely.points(out[:, :2])) if len(across) else np.inf,
        )
        moved.append(float(from_either.max()) - boundary.radius)
        return out, out_nb

    monkeypatch.setattr(push, "_settle", settle)
    for name in SETTLING_LEVELS:
        case, _ = load_reproducer(Path(__file__).parent / "fixtures" / "fuzz" / f"{name}.json")
        generate(np.asarray(case.scene.vertices), case.scene.triangles, case.params, case.scene.walkable)
    assert len(moved) >= len(SETTLING_LEVELS) and max(moved) <= MAX_INTRUSION
    assert max(crossed) > 0


@pytest.mark.parametrize("level", ["random", "multi_storey"])
def test_point_distance_is_the_least_distance_to_a_boundary_segment_of_the_storey_up_to_the_limit(level):
    """FloorBoundary.point_distance, which measures only the (point, segment) pairs that can come
    within the limit, gives bit for bit the least geometry.point_segment_distance of the point to a
    boundary segment of its storey, capped at the limit."""
    scene = random_level(3).scene if level == "random" else multi_storey()
    params = BakeParams(**PARAMS["r0.6"])
    hf = build_heightfield(prepare_soup(scene.vertices, scene.triangles), params)
    boundary = FloorBoundary(hf, params)
    rng = np.random.default_rng(0)
    spans = rng.choice(hf.span_count, 300)
    xy = hf.centers_xy(spans) + rng.uniform(-0.5, 0.5, (len(spans), 2)) * hf.cell_size
    z = hf.z[spans]
    limit = 1.5 * params.agent_radius
    seg = boundary.seg
    every = np.arange(len(spans)).repeat(len(seg))
    each = np.tile(np.arange(len(seg)), len(spans))
    dist = point_segment_distance(xy[every], seg[each, :2], seg[each, 2:4])[0].reshape(len(spans), len(seg))
    same_storey = np.abs(z[:, None] - seg[None, :, 4]) < boundary.storey
    expected = np.minimum(np.where(same_storey, dist, np.inf).min(axis=1), limit)
    assert (expected < limit).any() and (expected == limit).any()
    assert np.array_equal(boundary.point_distance(xy, z, limit), expected)
