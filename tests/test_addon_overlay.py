"""Overlay batches are plain arrays: check their geometry and colours without a GPU."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st

from navmesh_addon import mesh_write, overlay, properties  # imports bpy, which provides mathutils

from mathutils import Euler, Matrix, Vector  # noqa: E402  (isort: skip)
from tests.fixtures.io import navmeshes


def segment_set(coords: np.ndarray) -> set:
    pairs = np.round(coords[:, :2], 6).reshape(-1, 2, 2)
    return {tuple(sorted(map(tuple, p))) for p in pairs}


def test_each_portal_is_drawn_once_above_the_floor():
    mesh = navmeshes.l_corridor()
    coords, colors = overlay.portal_lines(mesh)
    assert coords.shape == (4, 3) and colors.shape == (4, 4)
    assert segment_set(coords) == {((8.0, 0.0), (8.0, 2.0)), ((8.0, 2.0), (10.0, 2.0))}
    np.testing.assert_allclose(coords[:, 2], 0.5 + overlay.LIFT)


def test_clearance_heat_map_spans_the_bake_radius_to_three_times_it():
    mesh = navmeshes.l_corridor()  # r0 = 0.4; portal (8,0)-(8,2) has clearance 0.75, portal (8,2)-(10,2) is unlimited
    assert overlay.clearance_range(0.4) == pytest.approx((0.4, 1.2))
    coords, colors = overlay.clearance_lines(mesh)
    by_segment = {tuple(sorted(map(tuple, np.round(coords[i : i + 2, :2], 6)))): colors[i] for i in (0, 2)}
    t = (0.75 - 0.4) / 0.8
    np.testing.assert_allclose(by_segment[((8.0, 0.0), (8.0, 2.0))], [1.0, 2 * t, 0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(by_segment[((8.0, 2.0), (10.0, 2.0))], [0.0, 1.0, 0.0, 1.0])
    np.testing.assert_allclose(overlay.heat([0.4, 1.2, 5.0], 0.4, 1.2)[:, :3], [[1, 0, 0], [0, 1, 0], [0, 1, 0]])


def test_no_overlay_colour_is_near_the_path_colour():
    ids = np.arange(500)
    others = np.vstack(
        [
            overlay.distinct_colors(ids),
            overlay.heat(np.linspace(0, 2, 50), 0.4, 1.2),
            [overlay.PORTAL_COLOR, overlay.SHRUNK_PORTAL_COLOR, overlay.LINK_COLOR, overlay.mesh_write.NAVMESH_COLOR],
        ]
    )
    distance = np.linalg.norm(others[:, :3] - np.array(overlay.PATH_COLOR[:3]), axis=1)
    assert distance.min() > 0.5


@pytest.mark.parametrize("mode", [key for key, _, _ in properties.COLOR_BY])
def test_surface_fill_covers_every_polygon_in_its_mode_colour(mode):
    mesh = navmeshes.mixed()
    triangles, owner = overlay.surface_triangles(mesh)
    assert set(owner.tolist()) == set(range(mesh.polygon_count))
    coords, colors = overlay.surface_fill(mesh, mode)
    assert coords.shape == (3 * len(triangles), 3) and colors.shape == (3 * len(triangles), 4)
    np.testing.assert_allclose(colors[:, 3], overlay.SURFACE_ALPHA)
    expected = overlay.polygon_colors(mesh, mode)[np.repeat(owner, 3)]
    np.testing.assert_allclose(colors[:, :3], expected[:, :3], atol=1e-6)
    if mode == "NAVMESH":
        np.testing.assert_allclose(
            colors[:, :3], np.tile(overlay.mesh_write.NAVMESH_COLOR[:3], (len(colors), 1)), atol=1e-6
        )


def test_polygon_fans_stand_in_when_there_is_no_detail_mesh():
    mesh = replace(
        navmeshes.l_corridor(),
        detail_vertices=np.zeros((0, 3)),
        detail_triangles=np.zeros((0, 3), dtype=np.int64),
        detail_polygons=np.zeros(0, dtype=np.int64),
    )
    triangles, owner = overlay.surface_triangles(mesh)
    assert len(triangles) == int(np.sum(mesh.polygon_sizes - 2))
    area = (
        0.5
        * np.abs(np.cross(triangles[:, 1, :2] - triangles[:, 0, :2], triangles[:, 2, :2] - triangles[:, 0, :2])).sum()
    )
    assert area == pytest.approx(mesh.area_xy())


@given(st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=20), st.floats(0.1, 10))
def test_heat_is_monotone_from_red_to_green(values, scale):
    colors = overlay.heat(np.sort(values), 0.0, scale)
    assert np.all(np.diff(colors[:, 0]) <= 1e-12) and np.all(np.diff(colors[:, 1]) >= -1e-12)
    assert np.all((colors >= 0) & (colors <= 1))


def test_path_lines_join_consecutive_points():
    coords, colors = overlay.path_lines([(0, 0, 0), (1, 0, 0), (1, 2, 0)])
    assert coords.shape == (4, 3)
    np.testing.assert_allclose(coords[:, :2], [(0, 0), (1, 0), (1, 0), (1, 2)])
    assert overlay.path_lines([(0, 0, 0)])[0].shape == (0, 3)


def _random_path(seed: int, radius: float) -> np.ndarray:
    """A path as queries make them: segments at least 3 radii long, turns up to 75 degrees and not
    turning back on itself (150 degrees in all), so no part of it comes within 2 radii of another."""
    rng = np.random.default_rng(seed)
    start = rng.uniform(0, 2 * np.pi)
    heading, points = start, [np.zeros(3)]
    for _ in range(rng.integers(1, 7)):
        step = rng.uniform(3.0, 10.0) * radius
        points.append(points[-1] + (step * np.cos(heading), step * np.sin(heading), rng.uniform(-0.3, 0.3)))
        heading = start + np.clip(heading + rng.uniform(-1.3, 1.3) - start, -2.6, 2.6)
    return np.array(points)


@pytest.mark.parametrize("seed", range(12))
def test_the_path_band_outlines_the_ground_the_agent_sweeps(seed):
    """Against shapely: the band is the outline of the path buffered by the radius, to the arc's
    chord error, and every point of it is the radius away from the path."""
    radius = 0.4
    points = _random_path(seed, radius)
    coords, colors = overlay.path_band(points, radius)
    np.testing.assert_allclose(colors, [overlay.PATH_BAND_COLOR] * len(colors))
    ring = coords[0::2, :2]
    path = shapely.LineString(points[:, :2])
    distances = shapely.distance(shapely.points(ring), path)
    np.testing.assert_allclose(distances, radius, atol=1e-5)  # float32 coordinates, as the GPU takes them
    exact = path.buffer(radius, quad_segs=256).exterior
    chord_error = radius * (1.0 - np.cos(overlay.BAND_ARC_STEP / 2))
    assert shapely.hausdorff_distance(shapely.LinearRing(ring), exact) < chord_error + 1e-6
    gaps = np.abs(coords[:, 2, None] - overlay.LIFT - points[None, :, 2]).min(axis=1)
    assert gaps.max() < 1e-6, "every outline point has the height of a path point"


def test_a_path_of_one_point_is_a_circle_and_no_radius_no_band():
    coords, _ = overlay.path_band([(1.0, 2.0, 0.5), (1.0, 2.0, 0.5)], 0.5)
    np.testing.assert_allclose(np.hypot(coords[:, 0] - 1.0, coords[:, 1] - 2.0), 0.5, atol=1e-6)
    assert overlay.path_band([(0, 0, 0), (1, 0, 0)], 0.0)[0].shape == (0, 3)


@pytest.mark.parametrize("radius, expected", [(0.4, 2.0), (0.9, 1.0), (5.0, 0.0)])
def test_shrunk_portals_lose_the_extra_radius_at_both_ends(radius, expected):
    mesh = navmeshes.l_corridor()  # baked with radius 0.4; both portals are 2 m wide
    coords, _ = overlay.shrunk_portal_lines(mesh, [0, 0, 1, 2], radius)
    lengths = np.linalg.norm(coords[1::2] - coords[0::2], axis=1)
    np.testing.assert_allclose(lengths, [expected, expected], atol=1e-6)
    midpoints = 0.5 * (coords[0::2] + coords[1::2])
    np.testing.assert_allclose(midpoints[:, :2], [(8.0, 1.0), (9.0, 2.0)], atol=1e-6)


def test_scene_lines_follow_the_toggles():
    mesh = navmeshes.l_corridor()
    path = SimpleNamespace(
        points=np.array([(1, 1, 0.5), (8, 2, 0.5), (9, 9, 0.5)]), polygons=[0, 1, 2], corridor=[0, 1, 2]
    )
    assert overlay.scene_lines([mesh], False, False)[0].shape == (0, 3)
    assert overlay.scene_lines([mesh], True, False)[0].shape == (4, 3)
    clearance = overlay.scene_lines([mesh], True, True)
    np.testing.assert_array_equal(clearance[1], overlay.clearance_lines(mesh)[1])
    with_path = overlay.scene_lines([mesh], False, False, path, mesh, 0.4, show_path_portals=True)
    assert with_path[0].shape == (4, 3)  # the shrunk portals; the path itself is drawn apart, on top
    with_boundary = overlay.scene_lines([mesh], False, False, show_boundary=True)
    np.testing.assert_array_equal(with_boundary[0], overlay.boundary_lines(mesh)[0])


@pytest.mark.parametrize("make", [navmeshes.l_corridor, navmeshes.mixed])
def test_boundary_lines_trace_the_navmesh_outline_exactly(make):
    """Against shapely: the boundary segments cover the outline of the union of the polygons, no
    more (no portal among them) and no less."""
    mesh = make()
    coords, colors = overlay.boundary_lines(mesh)
    np.testing.assert_allclose(colors, [overlay.BOUNDARY_COLOR] * len(colors))
    np.testing.assert_allclose(coords[:, 2], np.repeat(mesh.vertices[:, 2].min(), len(coords)) + overlay.LIFT, atol=10)
    floor = shapely.union_all([shapely.Polygon(mesh.vertices[mesh.polygon(p), :2]) for p in range(mesh.polygon_count)])
    segments = shapely.MultiLineString([coords[k : k + 2, :2] for k in range(0, len(coords), 2)])
    assert segments.length == pytest.approx(floor.boundary.length, rel=1e-9)
    assert segments.buffer(1e-6).covers(floor.boundary)


@pytest.mark.parametrize(
    "projection",
    [
        Matrix(((1.5, 0, 0, 0), (0, 2.0, 0, 0), (0, 0, -1.002, -0.2002), (0, 0, -1, 0))),  # perspective
        Matrix(((0.1, 0, 0, 0), (0, 0.1, 0, 0), (0, 0, -0.01, -1.0), (0, 0, 0, 1))),  # orthographic
    ],
    ids=["perspective", "orthographic"],
)
def test_eye_pull_brings_geometry_closer_without_moving_it_on_screen(projection):
    eye = Vector((3.0, -8.0, 6.0))
    view = (Matrix.Translation(eye) @ Euler((1.0, 0.0, 0.3)).to_matrix().to_4x4()).inverted()
    pull = overlay.eye_pull(view, projection, 0.02)
    for point in (Vector((0.0, 0.0, 0.0)), Vector((4.0, 5.0, 1.2))):
        before, after = projection @ view @ point.to_4d(), projection @ view @ (pull @ point.to_4d())
        assert (after.xy / after.w - before.xy / before.w).length < 1e-5
        assert (view @ (pull @ point)).z > (view @ point).z + 0.1  # nearer: the camera looks down -Z


def test_off_mesh_links_are_drawn_as_lines_whatever_the_toggles():
    from dataclasses import replace

    from blender_navmesh.navmesh import OffMeshLink

    link = OffMeshLink((1.0, 1.0, 0.5), (9.0, 6.0, 0.5), 0, 1, 0.4)
    mesh = replace(navmeshes.l_corridor(), links=(link,))
    coords, colors = overlay.scene_lines([mesh], show_portals=False, show_clearance=False)
    np.testing.assert_allclose(coords[:, :2], [[1.0, 1.0], [9.0, 6.0]])
    np.testing.assert_allclose(colors, [overlay.LINK_COLOR] * 2)


def test_color_by_area_uses_the_area_types_colours():
    mesh = navmeshes.mixed()
    area = int(mesh.areas.max())
    colors = overlay.polygon_colors(mesh, "AREA", {area: (0.1, 0.2, 0.3)})
    np.testing.assert_allclose(colors[mesh.areas == area], [[0.1, 0.2, 0.3, 1.0]] * int((mesh.areas == area).sum()))


@pytest.mark.parametrize("batch", [1, 97, 1 << 20])
def test_points_near_walls_match_a_brute_force_search(batch):
    """The grid-binned search of the reach view finds exactly the points closer than the margin to
    some segment, whatever the batch size and however long the segments."""
    rng = np.random.default_rng(7)
    a = rng.uniform(0.0, 20.0, (60, 3))
    b = a + rng.uniform(-6.0, 6.0, (60, 3))
    points = rng.uniform(-1.0, 21.0, (4000, 3))
    ab = b - a
    t = np.clip(np.einsum("nkd,kd->nk", points[:, None] - a, ab) / np.einsum("kd,kd->k", ab, ab), 0.0, 1.0)
    distance = np.linalg.norm(points[:, None] - (a + t[..., None] * ab), axis=2).min(axis=1)
    near = overlay._near_segments(points, a, b, 1.3, 0.9, batch=batch)
    np.testing.assert_array_equal(near, distance < 1.3)


def test_reach_keeps_the_whole_surface_at_the_bake_radius_and_less_for_a_wider_agent():
    mesh = navmeshes.l_corridor()
    r0 = mesh.params.agent_radius
    pieces, usable = overlay.reach(mesh, r0)
    assert usable.all() and overlay.reach_area(mesh, r0) == pytest.approx(mesh.area_xy())
    coords, colors = overlay.reach_fill(mesh, r0 + 0.3)
    assert len(coords) == 3 * len(pieces) and 0 < overlay.reach_area(mesh, r0 + 0.3) < 0.9 * mesh.area_xy()
    blocked = np.all(np.isclose(colors, overlay.BLOCKED_COLOR), axis=1)
    assert blocked.any() and len(np.unique(colors[~blocked], axis=0)) == 1  # the navmesh colour elsewhere


def test_the_navmesh_colour_and_its_alpha_colour_the_fill():
    mesh = navmeshes.l_corridor()  # areas 0, 0, 3
    color = (1.0, 0.2, 0.1, 0.4)
    _, colors = overlay.surface_fill(mesh, "NAVMESH", color=color)
    np.testing.assert_allclose(colors, np.tile(color, (len(colors), 1)), atol=1e-6)
    _, colors = overlay.surface_fill(mesh, "AREA", color=color)
    assert np.all(colors[:, 3] == np.float32(0.4))
    ground = overlay.polygon_colors(mesh, "AREA", color=color)
    assert ground[:2].tolist() == [[1.0, 0.2, 0.1, 1.0]] * 2 and ground[2].tolist() != ground[0].tolist()
    _, colors = overlay.reach_fill(mesh, mesh.params.agent_radius, color)
    np.testing.assert_allclose(colors, np.tile(color, (len(colors), 1)), atol=1e-6)
    assert overlay.SURFACE_COLOR == (*mesh_write.NAVMESH_COLOR[:3], overlay.SURFACE_ALPHA)  # the default, as before
