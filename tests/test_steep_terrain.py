"""Steep rolling terrain at small agent radii: every walkable slope is on the navmesh, no region is
dropped, no hole is replaced by its convex hull."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import shapely

from blender_navmesh import BakeParams, generate
from levels import Scene
from tests.navmesh_checks import as_shapely, assert_valid_navmesh


def hills(x: np.ndarray, y: np.ndarray, seed: int, amp: float, extent: float) -> np.ndarray:
    """Twelve Gaussian hills and valleys over [0, extent]² and two small ripples (steep where amp
    is large)."""
    rng = np.random.default_rng(seed)
    z = np.zeros_like(x)
    for _ in range(12):
        cx, cy = rng.uniform(0, extent), rng.uniform(0, extent)
        s, a = rng.uniform(8, 30), rng.uniform(-8, 12)
        z += a * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * s * s))
    z += 0.3 * np.sin(x / 2.3) * np.cos(y / 3.1) + 0.15 * np.sin(x * 1.7 + y * 0.9)
    return amp * z


def terrain(seed: int, amp: float, extent: float, window: tuple[float, float, float, float]):
    """(scene, per-triangle top views (T, 3, 2), per-triangle slope in degrees) of the hills over
    [0, extent]² on a 1 m grid, cut to window (x0, x1, y0, y1)."""
    x0, x1, y0, y1 = window
    xs = np.arange(x0, x1 + 1e-9, 1.0)
    ys = np.arange(y0, y1 + 1e-9, 1.0)
    scene = Scene().terrain(xs, ys, lambda x, y: hills(x, y, seed, amp, extent))
    corners = scene.vertices[scene.triangles]
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    slope = np.degrees(np.arccos(np.abs(normal[:, 2]) / np.linalg.norm(normal, axis=1)))
    return scene, corners[:, :, :2], slope


def missing_floor(mesh, triangles: np.ndarray, slope: np.ndarray, max_slope: float, band: float):
    """The floor of triangles at least a degree under max_slope, farther than `band` from every
    triangle over it and from the scene's edge, that the navmesh does not cover."""
    polygons = shapely.polygons(triangles)
    steep = shapely.union_all(polygons[slope > max_slope])
    edge = shapely.union_all(polygons).exterior
    walkable = shapely.union_all(polygons[slope < max_slope - 1.0])
    must = walkable.difference(steep.union(edge).buffer(band))
    return must.difference(as_shapely(mesh))


@pytest.mark.parametrize(
    "seed, amplitude, size, window, cell, radius, most_missing",
    [
        # At radius 0 a shared border between two regions bent in an L was simplified to the chord
        # between its ends, which crossed a steep patch's hole of one of them: the region's outline
        # crossed itself, and the polygon stage dropped the whole region (26 m² here).
        (5, 4.0, 120.0, (0.0, 24.0, 80.0, 104.0), 0.5, 0.0, 0.5),
        # At radius 0.1 (under half a cell) the outline of a steep patch closed the mouth of a pocket
        # of floor in it (contours.pinches), so the hole touched itself, and the polygon stage
        # replaced it by its convex hull: the pocket and the floor in the hole's dents were lost.
        (8, 2.5, 80.0, (38.0, 48.0, 49.0, 59.0), 0.25, 0.1, 0.03),
    ],
    ids=["region_kept_at_radius_0", "holes_kept_at_radius_0.1"],
)
def test_steep_hills_keep_every_region_and_hole(caplog, seed, amplitude, size, window, cell, radius, most_missing):
    scene, triangles, slope = terrain(seed, amplitude, size, window)
    params = BakeParams(cell_size=cell, agent_radius=radius, agent_max_slope=45.0)
    with caplog.at_level(logging.WARNING, logger="blender_navmesh"):
        mesh = generate(scene.vertices, scene.triangles, params)
    assert "dropped" not in caplog.text
    assert "convex hull" not in caplog.text
    missing = missing_floor(mesh, triangles, slope, 45.0, radius + 1.5 * cell)
    assert missing.area < most_missing, missing.area
    assert_valid_navmesh(mesh)
