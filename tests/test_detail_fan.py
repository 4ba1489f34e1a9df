"""Fan heights (lib.detail.fan): a sample found inside a fan triangle is not measured against the
later ones, and takes the height measuring every triangle gives it."""

from __future__ import annotations

import numpy as np

from blender_navmesh.detail import fan
from blender_navmesh.navmesh import PolyMesh
from blender_navmesh.params import BakeParams


def _hexagons() -> PolyMesh:
    """Convex hexagons (four fan triangles each) at random heights, side by side."""
    rng = np.random.default_rng(3)
    angle = np.radians(np.arange(6) * 60.0 + 7.0)
    ring = np.column_stack([np.cos(angle), np.sin(angle)]) * 2.0
    vertices, polys = [], []
    for k in range(12):
        corner = ring + [5.0 * k, 0.0]
        vertices.extend(np.column_stack([corner, rng.uniform(0.0, 1.0, 6)]))
        polys.append(list(range(6 * k, 6 * k + 6)))
    return PolyMesh.from_polygons(polys, np.zeros(12), np.zeros(12), np.array(vertices), BakeParams())


def test_fan_heights_skip_the_triangles_after_the_one_holding_a_sample(monkeypatch):
    """Samples inside, on the fans' inner edges and corners, and just outside the hexagons: the same
    heights, bit for bit, as measuring each against every triangle of its fan (the skip turned off)."""
    mesh = _hexagons()
    apex = fan.fan_apexes(mesh)
    corner = mesh.vertices[mesh.poly_vertices]
    rng = np.random.default_rng(4)
    poly = np.repeat(np.arange(12), 400)
    centre = np.column_stack([5.0 * poly, np.zeros(len(poly))])
    xy = centre + rng.uniform(-2.1, 2.1, (len(poly), 2))
    # Some exactly on the fan's diagonals (from the apex to each corner) and at the corners.
    on_edge = rng.random(len(poly)) < 0.25
    k = rng.integers(0, 6, len(poly))
    a = corner[mesh.poly_offsets[poly] + apex[poly], :2]
    b = corner[mesh.poly_offsets[poly] + k, :2]
    xy[on_edge] = (a + rng.choice([0.0, 0.5, 1.0], len(poly))[:, None] * (b - a))[on_edge]
    samples = np.column_stack([xy, np.zeros(len(poly))])
    skipping = fan._fan_heights(mesh, corner, apex, poly, samples)
    monkeypatch.setattr(fan, "_INSIDE", np.inf)
    assert np.array_equal(skipping, fan._fan_heights(mesh, corner, apex, poly, samples))
