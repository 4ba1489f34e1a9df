"""The distance primitives against shapely's exact answers on random segments."""

from __future__ import annotations

import numpy as np
from shapely.geometry import LineString, Point

from blender_navmesh.geometry import point_segment_distance, segment_distance


def _random_segments(seed: int, n: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    p, q, a, b = (rng.normal(scale=3.0, size=(n, 2)) for _ in range(4))
    # Degenerate and touching cases: a point segment, shared ends, collinear overlap.
    a[0] = b[0]
    a[1] = p[1]
    a[2], b[2] = p[2] + 0.25 * (q[2] - p[2]), p[2] + 1.5 * (q[2] - p[2])
    return p, q, a, b


def test_point_segment_distance_is_the_exact_distance_at_the_closest_point():
    p, _, a, b = _random_segments(1, 300)
    dist, t = point_segment_distance(p, a, b)
    exact = [Point(x).distance(LineString([u, v])) for x, u, v in zip(p, a, b)]
    assert np.allclose(dist, exact, rtol=0, atol=1e-12)
    closest = a + t[:, None] * (b - a)
    assert np.allclose(np.hypot(*(p - closest).T), dist, rtol=0, atol=1e-12)


def test_segment_distance_is_the_exact_distance_and_where_along_it_is_reached():
    p, q, a, b = _random_segments(2, 300)
    dist, t = segment_distance(p, q, a, b)
    exact = [LineString([u, v]).distance(LineString([x, y])) for u, v, x, y in zip(p, q, a, b)]
    assert np.allclose(dist, exact, rtol=0, atol=1e-12)
    at = p + t[:, None] * (q - p)
    reached = [Point(x).distance(LineString([u, v])) for x, u, v in zip(at, a, b)]
    assert np.allclose(reached, dist, rtol=0, atol=1e-9)
    assert dist[1] == 0.0 and dist[2] < 1e-12  # a shared end; collinear overlap (float noise)
