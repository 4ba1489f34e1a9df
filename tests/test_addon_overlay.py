"""Overlay batches are plain arrays: check their geometry and colours without a GPU."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, strategies as st

from navmesh_addon import overlay
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


def test_clearance_heat_map_is_red_when_narrow_and_green_when_wide():
    mesh = navmeshes.l_corridor()  # portal (8,0)-(8,2) has clearance 0.75, portal (8,2)-(10,2) is unlimited
    coords, colors = overlay.clearance_lines(mesh, scale=1.5)
    by_segment = {tuple(sorted(map(tuple, np.round(coords[i : i + 2, :2], 6)))): colors[i] for i in (0, 2)}
    np.testing.assert_allclose(by_segment[((8.0, 0.0), (8.0, 2.0))], [1.0, 1.0, 0.0, 1.0])
    np.testing.assert_allclose(by_segment[((8.0, 2.0), (10.0, 2.0))], [0.0, 1.0, 0.0, 1.0])


@given(st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=20), st.floats(0.1, 10))
def test_heat_is_monotone_from_red_to_green(values, scale):
    colors = overlay.heat(np.sort(values), scale)
    assert np.all(np.diff(colors[:, 0]) <= 1e-12) and np.all(np.diff(colors[:, 1]) >= -1e-12)
    assert np.all((colors >= 0) & (colors <= 1))


def test_path_lines_join_consecutive_points():
    coords, colors = overlay.path_lines([(0, 0, 0), (1, 0, 0), (1, 2, 0)])
    assert coords.shape == (4, 3)
    np.testing.assert_allclose(coords[:, :2], [(0, 0), (1, 0), (1, 0), (1, 2)])
    assert overlay.path_lines([(0, 0, 0)])[0].shape == (0, 3)


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
    path = SimpleNamespace(points=np.array([(1, 1, 0.5), (8, 2, 0.5), (9, 9, 0.5)]), polygons=[0, 1, 2], corridor=[0, 1, 2])
    assert overlay.scene_lines([mesh], False, False)[0].shape == (0, 3)
    assert overlay.scene_lines([mesh], True, False)[0].shape == (4, 3)
    clearance = overlay.scene_lines([mesh], True, True)
    np.testing.assert_array_equal(clearance[1], overlay.clearance_lines(mesh)[1])
    with_path = overlay.scene_lines([mesh], False, False, path, mesh, 0.4, show_path_portals=True)
    assert with_path[0].shape == (4 + 4, 3)
