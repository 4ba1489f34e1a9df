"""Detail stage: the per-polygon triangulated surface follows the floor within max_height_error."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from blender_navmesh.clearance import compute_clearance
from blender_navmesh.contours import RegionOutline
from blender_navmesh.detail import build_detail, surface_height
from blender_navmesh.heightfield import Heightfield
from blender_navmesh.navmesh import NavMesh, PolyMesh
from blender_navmesh.params import BakeParams
from blender_navmesh.polygons import build_polygons


def heightfield(floors, width: int = 40, height: int = 40, cs: float = 0.2) -> Heightfield:
    """A grid heightfield with one span per column per floor function z = f(x, y), each span's
    floor slope recorded as a bake records its floor triangle's."""
    jj, ii = np.mgrid[0:height, 0:width]
    x, y = ii.ravel(), jj.ravel()
    cx, cy = (x + 0.5) * cs, (y + 0.5) * cs
    zs = [np.broadcast_to(f(cx, cy), cx.shape).astype(np.float64) for f in floors]
    h = 1e-6
    slopes = [
        np.column_stack([(f(cx + h, cy) - f(cx - h, cy)) / (2 * h), (f(cx, cy + h) - f(cx, cy - h)) / (2 * h)])
        * np.ones((len(cx), 1))
        for f in floors
    ]
    xs, ys, z = np.tile(x, len(floors)), np.tile(y, len(floors)), np.concatenate(zs)
    order = np.lexsort((z, xs, ys))
    n = len(z)
    return Heightfield(
        cs,
        np.zeros(2),
        width,
        height,
        xs[order].astype(np.int32),
        ys[order].astype(np.int32),
        z[order],
        np.full(n, np.inf),
        np.zeros(n, dtype=np.int32),
        np.full((n, 4), -1, dtype=np.int64),
        floor_triangle=np.arange(n),
        floor_slope=np.concatenate(slopes)[order],
        floor_range=np.tile([-np.inf, np.inf], (n, 1)),
    )


def detailed(polys: PolyMesh, hf: Heightfield, params: BakeParams, span_region=None) -> NavMesh:
    """The navmesh of these polygons with the detail stage's surface, assembled as a bake does."""
    surface = build_detail(polys, hf, params, span_region)
    return NavMesh.assemble(polys, surface, compute_clearance(replace(polys, vertices=surface.corners)))


def square_mesh(f, params: BakeParams, size: float = 8.0):
    ring = np.array([(0, 0), (size, 0), (size, size), (0, size)], dtype=np.float64)
    outline = RegionOutline(0, 0, [np.column_stack([ring, f(ring[:, 0], ring[:, 1])])], [np.full(4, -1)])
    return build_polygons([outline], params)


def max_error(mesh, hf: Heightfield, floor, margin: float = 1e-6) -> float:
    """Largest |surface - floor| over the column centres inside the (single) polygon."""
    c = hf.centers_xy()
    lo, hi = mesh.vertices[:, :2].min(axis=0), mesh.vertices[:, :2].max(axis=0)
    inside = np.all((c > lo + margin) & (c < hi - margin), axis=1)
    pts = np.unique(c[inside], axis=0)
    return max(abs(surface_height(mesh, 0, p) - float(floor(p[0], p[1]))) for p in pts)


def test_flat_floor_adds_no_detail_vertices():
    params = BakeParams(max_height_error=0.05)
    flat = lambda x, y: 0 * x + 1.25  # noqa: E731
    mesh = detailed(square_mesh(flat, params), heightfield([flat]), params)
    assert len(mesh.detail_vertices) == 4 and len(mesh.detail_triangles) == 2
    assert np.all(mesh.detail_polygons == 0)
    assert surface_height(mesh, 0, (3.0, 5.0)) == pytest.approx(1.25)


@pytest.mark.parametrize("tolerance", [0.05, 0.1, 0.2])
def test_sine_floor_is_followed_within_max_height_error(tolerance):
    params = BakeParams(max_height_error=tolerance)
    sine = lambda x, y: 0.4 * np.sin(x) * np.cos(0.7 * y)  # noqa: E731
    hf = heightfield([sine])
    mesh = detailed(square_mesh(sine, params), hf, params)
    assert len(mesh.detail_vertices) > 4
    assert max_error(mesh, hf, sine) <= tolerance
    # Every detail triangle is counter-clockwise with positive area.
    t = mesh.detail_vertices[mesh.detail_triangles]
    cross = (t[:, 1, 0] - t[:, 0, 0]) * (t[:, 2, 1] - t[:, 0, 1]) - (t[:, 1, 1] - t[:, 0, 1]) * (
        t[:, 2, 0] - t[:, 0, 0]
    )
    assert np.all(cross > 0)
    assert 0.5 * cross.sum() == pytest.approx(mesh.area_xy())


def test_polygon_vertices_keep_their_heights():
    params = BakeParams(max_height_error=0.05)
    bump = lambda x, y: 0.3 * np.exp(-((x - 4) ** 2 + (y - 4) ** 2))  # noqa: E731
    mesh = detailed(square_mesh(lambda x, y: 0 * x, params), heightfield([bump]), params)
    corners = mesh.vertices[mesh.polygon(0)]
    assert np.array_equal(mesh.detail_vertices[: len(corners)], corners)
    assert surface_height(mesh, 0, (4.0, 4.0)) == pytest.approx(0.3, abs=0.05)


def test_the_floor_above_does_not_leak_into_the_surface():
    params = BakeParams(max_height_error=0.05, agent_height=2.0)
    ground = lambda x, y: 0 * x  # noqa: E731
    balcony = lambda x, y: 0 * x + 3.0  # noqa: E731
    mesh = detailed(square_mesh(ground, params), heightfield([ground, balcony]), params)
    assert len(mesh.detail_vertices) == 4
    assert np.all(mesh.detail_vertices[:, 2] == 0)


def test_empty_mesh_passes_through():
    params = BakeParams()
    mesh = build_polygons([], params)
    surface = build_detail(mesh, heightfield([lambda x, y: 0 * x]), params)
    assert len(surface.corners) == len(surface.vertices) == len(surface.triangles) == len(surface.polygons) == 0


def test_edges_across_rolling_ground_are_tessellated_and_shared():
    """Polygon edges that cross a ridge get points on them, the same for both polygons sharing the
    edge, so the surface along every edge stays within the height error of the floor and
    neighbouring surfaces meet (without edge points, edges across these bumps ran 1.6 m off)."""
    from blender_navmesh import generate
    from levels import Scene

    xs = np.linspace(0.0, 30.0, 61)
    floor = lambda x, y: 1.2 * np.sin(x / 2.5) * np.cos(y / 3.0)  # noqa: E731
    scene = Scene().terrain(xs, xs, floor)
    for cx, cy in ((8.0, 9.0), (21.0, 7.0), (14.0, 20.0), (24.0, 24.0)):  # pillars split the floor
        scene.box((cx, cy, -2.0), (1.5, 1.5, 5.0), 30.0)
    params = BakeParams(cell_size=0.2, agent_radius=0.3, max_edge_error=0.26, max_height_error=0.2)
    mesh = generate(scene.vertices, scene.triangles, params)
    nxt = mesh.edge_next_vertex
    worst_gap = worst_error = 0.0
    for e in range(len(mesh.poly_vertices)):
        p, q = int(mesh.edge_polygon[e]), int(mesh.neighbors[e])
        q = p if q < 0 else q
        u, w = mesh.vertices[mesh.poly_vertices[e]], mesh.vertices[nxt[e]]
        for t in np.linspace(0.05, 0.95, 10):
            xy = u[:2] + t * (w[:2] - u[:2])
            zp, zq = surface_height(mesh, p, xy), surface_height(mesh, q, xy)
            worst_gap = max(worst_gap, abs(zp - zq))
            worst_error = max(worst_error, abs(zp - floor(*xy)))
    assert worst_gap < 1e-6
    # The floor is sampled at column centres: a cell's slope adds to the stated error.
    assert worst_error <= params.max_height_error + 0.1


@pytest.mark.parametrize("radius, cs", [(0.5, 0.25), (0.0, 0.22)])
def test_a_long_wall_edge_over_a_hump_follows_the_floor(radius, cs):
    """A strip of ground 24 m long with a hump 3 m high in its middle is one polygon, its long wall
    edges straight lines from low end to low end, 3 m under the hump's top. At radius 0.5 the
    columns under those edges hold only the floor eroded off the region (no region): that floor is
    the edge's, however far from the straight line (1.05 m off when floor farther than a storey's
    height from it was refused). At radius 0 the edges run along the strip's real sides, past the
    last columns whose centres are on it: those columns hold nothing, and the floor is the nearest
    column's beside them (3 m off, under the hump's top, when none was taken). Either way a height
    is taken where the edge runs, not at a column's centre, and the surface along the edges stays
    within max_height_error of the floor."""
    from blender_navmesh import generate
    from levels import Scene

    floor = lambda x, y: 3.0 * np.exp(-(((x - 12.0) / 4.0) ** 2)) + 0 * y  # noqa: E731
    scene = Scene().terrain(np.linspace(0.0, 24.0, 97), np.linspace(0.0, 8.0, 33), floor)
    params = BakeParams(cell_size=cs, agent_radius=radius, agent_height=2.0, max_height_error=0.1)
    mesh = generate(scene.vertices, scene.triangles, params)
    assert mesh.polygon_count == 1
    for e in np.flatnonzero(mesh.neighbors < 0):
        u, w = mesh.vertices[mesh.poly_vertices[e]], mesh.vertices[mesh.edge_next_vertex[e]]
        for t in np.linspace(0.0, 1.0, 101):
            xy = u[:2] + t * (w[:2] - u[:2])
            assert abs(surface_height(mesh, 0, xy) - floor(*xy)) <= params.max_height_error, (e, xy)


def _own_floor_regions(hf: Heightfield, ground) -> np.ndarray:
    """Region 0 for the ground's spans, 1 for the floor above (what the region stage gives)."""
    c = hf.centers_xy()
    return np.where(np.isclose(hf.z, ground(c[:, 0], c[:, 1])), 0, 1).astype(np.int64)


@pytest.mark.parametrize("tolerance", [0.05, 0.2])
def test_with_the_region_map_a_polygon_samples_its_own_floor_under_another_close_above(tolerance):
    """The path the pipeline takes (span_region given): steep rolling ground with a second floor
    1.2 m above it, well inside half the agent's height of the ground's plane. The surface follows
    the ground within the tolerance and never the floor above."""
    params = BakeParams(max_height_error=tolerance, agent_height=2.0)
    ground = lambda x, y: 0.8 * np.sin(0.9 * x) * np.cos(0.6 * y)  # noqa: E731
    above = lambda x, y: ground(x, y) + 1.2  # noqa: E731
    hf = heightfield([ground, above])
    mesh = detailed(square_mesh(ground, params), hf, params, _own_floor_regions(hf, ground))
    assert len(mesh.detail_vertices) > 4
    assert max_error(mesh, hf, ground) <= tolerance
    # Without the region map, the span nearest the polygon's plane is taken, which here is at times
    # the floor above: why the pipeline passes it.
    fallback = detailed(square_mesh(ground, params), hf, params)
    assert max_error(fallback, hf, ground) > tolerance


def test_a_wall_edge_along_a_shelf_too_small_for_a_region_keeps_to_the_floor():
    """Fuzz case 601749: a shelf 15 cm over the floor (more than a climb, less than two, too low to
    stand under) is too small to be a region, and its spans have none. The floor's outline runs
    along its sides, and the columns under those edges hold the shelf alone: it is not the floor
    the edge runs on, and the surface along the edge stays on the floor, not on the shelf."""
    from blender_navmesh import generate

    floor = [(0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0)]
    shelf = [(0.6, 0.45, 0.15), (0.66, 0.45, 0.15), (0.66, 0.65, 0.15), (0.6, 0.65, 0.15)]
    vertices = np.array(floor + shelf, dtype=float)
    triangles = np.array([(0, 1, 2), (0, 2, 3), (4, 5, 6), (4, 6, 7)])
    params = BakeParams(
        cell_size=0.04,
        agent_radius=0.0,
        agent_height=0.4,
        agent_max_climb=0.08,
        region_min_area=0.03,
        max_height_error=0.035,
    )
    mesh = generate(vertices, triangles, params)
    assert np.abs(mesh.detail_vertices[:, 2]).max() <= params.max_height_error


def test_a_corner_off_a_thin_steep_triangle_takes_the_floor_at_its_nearest_point():
    """Fuzz case 605321: one thin triangle sloping 40 degrees, mostly across its width, baked at radius 0
    with an edge error of 0.64 m: the simplified outline strays off it, and a corner 9 cm off its
    side took its slope carried past that side (clamped to its lowest point), 7 cm off the floor
    where the floor is nearest. Every corner lies within max_height_error of the floor there."""
    from shapely.geometry import Point, Polygon

    from blender_navmesh import generate

    corners = np.array([(1.9264, 1.2630, 0.3471), (4.7995, 2.2236, 0.1850), (0.3063, 1.1846, 0.0608)])
    params = BakeParams(
        cell_size=0.3418,
        agent_radius=0.0,
        agent_height=1.5543,
        agent_max_climb=0.4585,
        agent_max_slope=52.58,
        region_min_area=0.0027,
        max_edge_error=0.638,
        max_height_error=0.0649,
    )
    mesh = generate(corners, np.array([(0, 1, 2)]), params)
    a, b, c = corners
    normal = np.cross(b - a, c - a)
    shape = Polygon(corners[:, :2])
    for x, y, z in mesh.vertices:
        nearest = shape.exterior.interpolate(shape.exterior.project(Point(x, y)))
        if shape.contains(Point(x, y)):
            nearest = Point(x, y)
        floor = a[2] - (normal[0] * (nearest.x - a[0]) + normal[1] * (nearest.y - a[1])) / normal[2]
        assert abs(z - floor) <= params.max_height_error


_RELIEF_PARAMS = BakeParams(cell_size=0.25, agent_radius=0.0, agent_max_slope=45.0, max_height_error=0.08)


def _relief(x, y):
    return 1.5 * np.sin(x / 4.0) * np.cos(y / 5.0)


def _relief_terrain(cells: int = 40, size: float = 40.0):
    """Open rolling ground, size m square, its grid points `_relief` high."""
    from levels import Scene

    xs = np.linspace(0.0, size, cells + 1)
    return Scene().terrain(xs, xs, _relief)


def test_a_polygon_too_large_for_its_floors_relief_is_cut_until_its_surface_fits():
    """Open rolling ground 40 m across baked at radius 0 is one polygon, and Detour's byte-numbered
    detail triangles (255 at most) cannot follow its relief within max_height_error: its surface was
    0.16 m off the floor (twice the error). Such a polygon is cut in two until every surface fits:
    at every column centre the surface is within the error of the floor (the terrain's own
    triangles, which the heightfield samples)."""
    from blender_navmesh import generate
    from tests.navmesh_checks import assert_valid_navmesh, polygons_at

    scene = _relief_terrain()

    def floor(x: float, y: float) -> float:
        """The terrain's triangles between its 1 m grid points (each square split along x = y)."""
        i, j = np.floor(x), np.floor(y)
        u, v = x - i, y - j
        z00, z10, z11, z01 = _relief(i, j), _relief(i + 1, j), _relief(i + 1, j + 1), _relief(i, j + 1)
        return z00 + u * (z10 - z00) + v * (z11 - z10) if u >= v else z00 + v * (z01 - z00) + u * (z11 - z01)

    mesh = generate(scene.vertices, scene.triangles, _RELIEF_PARAMS)
    params = _RELIEF_PARAMS
    assert_valid_navmesh(mesh)
    assert mesh.polygon_count > 1
    centres = (np.floor(np.random.default_rng(0).uniform(0.5, 39.5, size=(400, 2)) / 0.25) + 0.5) * 0.25
    for x, y in centres:
        (p, *_) = polygons_at(mesh, x, y)
        assert abs(surface_height(mesh, p, (x, y)) - floor(x, y)) <= params.max_height_error, (x, y)


def test_surfaces_kept_through_a_cut_are_those_a_full_rebuild_gives(monkeypatch):
    """After cutting rough polygons the pipeline rebuilds only the surfaces round the cuts, keeping
    the others (rebuilding every surface took 8 s of a 22 s bake on undulating tiled 4 x 4). On
    ground flat for its first 20 m, where a crate makes several polygons, and rolling beyond, where
    one large polygon is cut, the navmesh is the one rebuilding every surface gives."""
    from blender_navmesh import detail, generate
    from blender_navmesh import pipeline as pipeline_module

    scene = _relief_terrain(cells=60, size=60.0)
    scene.vertices[:, 2] *= scene.vertices[:, 0] >= 20.0
    scene.box((10.0, 30.0, -5.0), (4.0, 4.0, 12.0), walkable=False)
    build, kept = detail.build_detail, []

    def keeping(*args, **kwargs):
        kept.append(len(args[5]) if len(args) > 5 else 0)
        return build(*args, **kwargs)

    monkeypatch.setattr(pipeline_module.detail, "build_detail", keeping)
    incremental = generate(scene.vertices, scene.triangles, _RELIEF_PARAMS, walkable=scene.walkable)
    assert len(kept) > 1 and kept[-1] > 0, "a cut was made and some surfaces were kept"
    # Every surface built again from the floor sampled again.
    monkeypatch.setattr(pipeline_module.detail, "build_detail", lambda *args, **kwargs: build(*args[:5]))
    full = generate(scene.vertices, scene.triangles, _RELIEF_PARAMS, walkable=scene.walkable)
    for name in ("vertices", "poly_vertices", "detail_vertices", "detail_triangles", "detail_polygons"):
        assert np.array_equal(getattr(incremental, name), getattr(full, name)), name


def test_a_rebuild_measures_the_floor_at_the_samples_of_the_polygons_it_builds_only(monkeypatch):
    """The rebuild after a cut keeps most surfaces; the floor at their samples (sample_heights, a
    floor_at per sample) was measured again though only the rebuilt polygons' samples are used."""
    from blender_navmesh import detail, generate
    from blender_navmesh import pipeline as pipeline_module

    scene = _relief_terrain(cells=60, size=60.0)
    scene.vertices[:, 2] *= scene.vertices[:, 0] >= 20.0
    scene.box((10.0, 30.0, -5.0), (4.0, 4.0, 12.0), walkable=False)
    build, heights, measured, built = detail.build_detail, detail.sample_heights, [], []

    def recording(*args, **kwargs):
        kept, samples = (args[5], args[6]) if len(args) > 6 else (None, None)
        if kept:
            built.append(int(np.count_nonzero(~np.isin(samples.polygon, list(kept)))))
        return build(*args, **kwargs)

    def counting(hf, span):
        measured.append(len(span))
        return heights(hf, span)

    monkeypatch.setattr(pipeline_module.detail, "build_detail", recording)
    monkeypatch.setattr(detail, "sample_heights", counting)
    generate(scene.vertices, scene.triangles, _RELIEF_PARAMS, walkable=scene.walkable)
    assert built, "a cut was made and some surfaces were kept"
    assert measured[-1] == built[-1]


def test_edge_and_inside_samples_over_a_ramp_below_a_slabs_edge_take_the_ramps_height():
    """RecastDemo settings (cell 0.3, climb 0.9): a ramp rises from a floor at 3.5 m through a
    stairwell in a 0.1 m slab to its top at 7 m. Near the top, the ramp's side is within a climb of
    the slab's edge, and one region (and polygon) spans that edge. A column along the edge takes the
    slab's floor (its triangle touches the column's square), and that floor was carried past the
    slab's edge: a detail vertex 0.26 m inside the hole stood at 7.0, 0.455 m over the ramp, and a
    column centre inside it too. A point over the ramp's triangle takes the ramp's floor: every
    detail vertex, and the surface over the hole, is within max_height_error of the floor under it."""
    from blender_navmesh import generate
    from levels import Scene
    from tests.navmesh_checks import polygons_at

    scene = Scene().box((10.0, 6.0, 3.2), (19.4, 11.4, 0.3))  # the floor below, top 3.5
    # The slab above, top 7.0, with a stairwell x in [3, 11], y in [9, 11.7].
    scene.box((10.0, 4.65, 6.9), (19.4, 8.7, 0.1)).box((1.65, 10.35, 6.9), (2.7, 2.7, 0.1))
    scene.box((15.35, 10.35, 6.9), (8.7, 2.7, 0.1))
    # The ramp, a closed wedge rising along +x from 3.5 at x = 3 to 7.0 at x = 11.
    wedge = [(3, 9, 3.5), (11, 9, 3.5), (11, 11.7, 3.5), (3, 11.7, 3.5), (11, 9, 7.0), (11, 11.7, 7.0)]
    scene.add(wedge, [(0, 3, 2), (0, 2, 1), (0, 4, 5), (0, 5, 3), (0, 1, 4), (3, 5, 2), (1, 2, 5), (1, 5, 4)])
    params = BakeParams(cell_size=0.3, agent_radius=0.6, agent_height=2.0, agent_max_climb=0.9, max_edge_error=0.39)

    def ramp(x):
        return 3.5 + 3.5 * (x - 3.0) / 8.0

    def floors(x, y):
        """Heights of the real floors at (x, y)."""
        hole = 3.0 < x < 11.0 and 9.0 < y < 11.7
        return [3.5, ramp(x)] if hole else [3.5, 7.0] + ([ramp(x)] if 3.0 <= x <= 11.0 and y >= 9.0 else [])

    mesh = generate(scene.vertices, scene.triangles, params)
    for x, y, z in mesh.detail_vertices:
        if 0.3 <= x <= 19.7 and 0.3 <= y <= 11.7:
            assert min(abs(z - h) for h in floors(x, y)) <= params.max_height_error, (x, y, z)
    # Over the hole, a cell and more from the slab's edge, the surface is on the ramp wherever the
    # navmesh is (it was 0.41 m off). It meets the floor within the error at its samples a cell
    # apart; between them, on a triangle reaching across the step down from the slab's edge, by a
    # few centimetres more.
    for x in np.arange(3.0, 11.0, 0.1):
        for y in np.arange(9.3, 11.7, 0.1):
            heights = [surface_height(mesh, p, (x, y)) for p in polygons_at(mesh, x, y)]
            assert not heights or min(abs(h - ramp(x)) for h in heights) <= params.max_height_error + 0.05, (x, y)


def _detail_errors(mesh, floor, rng, per_triangle: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """(|z - floor| at the polygon corners, at the detail vertices and random points inside and
    along the edges of every detail triangle)."""
    dv, dt = mesh.detail_vertices, mesh.detail_triangles
    w = rng.dirichlet([1.0, 1.0, 1.0], size=(len(dt), per_triangle))
    inside = np.einsum("tkj,tjd->tkd", w, dv[dt]).reshape(-1, 3)
    s = np.linspace(0.0, 1.0, 7)[1:-1, None, None]
    edges = [(dv[dt[:, a]] + s * (dv[dt[:, b]] - dv[dt[:, a]])).reshape(-1, 3) for a, b in ((0, 1), (1, 2), (2, 0))]
    points = np.concatenate([dv, inside, *edges])
    corners = mesh.vertices
    return np.abs(corners[:, 2] - floor(corners[:, 0], corners[:, 1])), np.abs(
        points[:, 2] - floor(points[:, 0], points[:, 1])
    )


@pytest.mark.parametrize("slope, azimuth", [(20.0, 0.0), (35.0, 117.0), (43.0, 251.0)])
def test_on_a_tilted_plane_finer_than_the_cells_every_corner_and_the_surface_are_on_it(slope, azimuth):
    """A plane made of 0.1 m triangles baked at cells 0.3 m: a polygon corner lies triangles away
    from the nearest sample's, and the slope of that triangle carried to it and cut at the
    triangle's heights put a corner of a plane tilted 20 degrees 3.6 cm off it (1.8 times
    max_height_error) and 10.8% of the surface past the error. The floor is followed across the
    triangles to the corner: on one plane every corner and the whole surface lie on it."""
    from blender_navmesh import generate
    from levels import Scene

    g, a = np.tan(np.radians(slope)), np.radians(azimuth)
    floor = lambda x, y: 0.7 + g * ((x + 0.37) * np.cos(a) + (y - 0.21) * np.sin(a))  # noqa: E731
    xs = np.linspace(0.0, 20.0, 201)
    scene = Scene().terrain(xs, xs, floor)
    params = BakeParams(cell_size=0.3, max_height_error=0.02, agent_radius=0.3)
    mesh = generate(scene.vertices, scene.triangles, params)
    corners, surface = _detail_errors(mesh, floor, np.random.default_rng(0))
    assert corners.max() < 1e-9
    assert surface.max() < 1e-9


@pytest.mark.parametrize("cs", [0.3, 0.1])
def test_on_rolling_ground_the_surface_between_the_samples_stays_near_the_floor(cs):
    """Rolling ground 1.2 sin(x / 2) cos(y / 2.5) at max_height_error 0.02: a surface within the
    error of every sample (one per column centre, points a cell apart along polygon edges) left the
    floor between them, 2.9 times the error at cell 0.3 (1.9 at cell 0.1) inside long thin triangles
    between two rows of samples and along edges between two of their samples. The surface is now
    measured between them too (probes half a cell apart along its edges and inside its triangles):
    what is left lies between probes, a few per cent past the error."""
    from blender_navmesh import generate
    from levels import Scene

    floor = lambda x, y: 1.2 * np.sin(x / 2.0) * np.cos(y / 2.5)  # noqa: E731
    xs = np.linspace(0.0, 20.0, 201)
    scene = Scene().terrain(xs, xs, floor)
    params = BakeParams(cell_size=cs, max_height_error=0.02, agent_radius=0.3)
    mesh = generate(scene.vertices, scene.triangles, params)
    corners, surface = _detail_errors(mesh, floor, np.random.default_rng(0))
    assert corners.max() <= 0.1 * params.max_height_error
    assert surface.max() <= 1.1 * params.max_height_error
    assert np.mean(surface > params.max_height_error) < 1e-3
