"""bench.surface, the measure behind the README's surface heights: known answers."""

from __future__ import annotations

import numpy as np

from bench.surface import floor_gaps, measure
from blender_navmesh import BakeParams
from levels import Scene


def test_a_gap_is_the_height_to_the_nearest_floor_within_reach():
    floor = np.array([[(0, 0, 0), (4, 0, 0), (0, 4, 0)], [(10, 0, 1.0), (14, 0, 1.0), (10, 4, 1.0)]], dtype=float)
    points = np.array([(1, 1, 0.3), (3.2, 1.0, 0.05), (7, 1, 0.0), (10.5, 0.5, 0.2)])
    gaps = floor_gaps(points, floor, reach=0.5)
    # Above the first; 0.14 past its slanted side (within reach); out of reach of both; under the second.
    assert np.allclose(gaps[[0, 1, 3]], [0.3, 0.05, 0.8]) and np.isinf(gaps[2])


def test_a_flat_floor_with_crates_is_met_everywhere():
    scene = Scene().floor(0, 0, 12, 12).box((4, 4, 0), (2, 2, 2), walkable=False).box((8, 7, 0), (1, 3, 2), 30.0)
    row = measure("crates", scene.vertices, scene.triangles, scene.walkable, BakeParams(cell_size=0.2))
    for kind in ("vertices", "interior", "wall_edges"):
        assert row[kind]["samples"] > 0 and row[kind]["over"] == 0 and row[kind]["worst"] < 1e-9
