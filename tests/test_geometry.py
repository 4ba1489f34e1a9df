"""The distance primitives against shapely's exact answers on random segments; the box join against
every pair; the fast left-turn test against turn."""

from __future__ import annotations

import numpy as np
from shapely.geometry import LineString, Point, Polygon

from blender_navmesh.geometry import (
    closest_on_triangles,
    distance_to_triangles,
    meeting_boxes,
    point_segment_distance,
    ring_edges_split,
    ring_loops,
    segment_distance,
    turn,
    turns_left,
)


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


def test_closest_on_triangles_is_shapelys_nearest_point_and_the_point_itself_inside():
    rng = np.random.default_rng(3)
    tri = rng.normal(scale=2.0, size=(300, 3, 2))
    x = rng.normal(scale=2.0, size=(300, 2))
    nearest = closest_on_triangles(x, tri)
    for point, corners, got in zip(x, tri, nearest):
        shape = Polygon(corners)
        if shape.contains(Point(point)):
            assert got.tolist() == point.tolist()
        else:
            assert Point(got).distance(shape) < 1e-12, "on the triangle"
            assert abs(np.hypot(*(got - point)) - shape.distance(Point(point))) < 1e-12, "and nearest"
    assert np.allclose(distance_to_triangles(x, tri), np.hypot(*(nearest - x).T), rtol=0, atol=0)


def _random_boxes(rng: np.random.Generator, n: int, size: float) -> np.ndarray:
    lo = rng.uniform(0.0, 100.0, size=(n, 2))
    return np.hstack([lo, lo + rng.exponential(size, size=(n, 2))])


def test_meeting_boxes_finds_every_meeting_pair_once():
    rng = np.random.default_rng(3)
    for size_a, size_b in ((0.5, 0.5), (20.0, 1.0), (1.0, 60.0), (0.0, 3.0)):
        a, b = _random_boxes(rng, 300, size_a), _random_boxes(rng, 200, size_b)
        # Boxes that only touch: one shares a corner, one an edge with a box of the other set.
        a[0] = [*b[0, 2:], *(b[0, 2:] + 1.0)]
        a[1] = [b[1, 2], b[1, 1], b[1, 2] + 1.0, b[1, 1] + 1.0]
        i, j = meeting_boxes(a, b)
        expected = {
            (x, y)
            for x in range(len(a))
            for y in range(len(b))
            if a[x, 0] <= b[y, 2] and b[y, 0] <= a[x, 2] and a[x, 1] <= b[y, 3] and b[y, 1] <= a[x, 3]
        }
        assert len(i) == len(expected) == len(set(zip(i.tolist(), j.tolist())))
        assert set(zip(i.tolist(), j.tolist())) == expected
        assert {(0, 0), (1, 1)} <= expected


def test_meeting_boxes_of_points_at_one_place_and_of_empty_sets():
    points = np.zeros((4, 4))
    i, j = meeting_boxes(points, points[:3])
    assert sorted(zip(i.tolist(), j.tolist())) == [(x, y) for x in range(4) for y in range(3)]
    assert [len(x) for x in meeting_boxes(points[:0], points)] == [0, 0]


def test_ring_edges_split_cuts_each_edge_into_equal_parts_and_keeps_the_ring_points():
    ring = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 2.0], [4.0, 3.0, 2.0]])
    points, edge = ring_edges_split(ring, np.array([4, 1, 2]))
    assert edge.tolist() == [0, 0, 0, 0, 1, 2, 2]
    assert np.allclose(points[:4], [[0, 0, 0], [1, 0, 0.5], [2, 0, 1], [3, 0, 1.5]])
    assert np.allclose(points[4], ring[1]) and np.allclose(points[5], ring[2])
    assert np.allclose(points[6], [2.0, 1.5, 1.0])


def test_ring_loops_split_a_ring_where_it_passes_a_point_again():
    """The polygon stage (vertex ids) and the contour stage (rounded coordinates) both split rings
    that touch themselves with this: each loop passes each of its points once, in the ring's order,
    and every point of the ring lies on a loop."""
    assert ring_loops(["a", "b", "c"]) == [[0, 1, 2]]
    # A figure eight through a: two loops.
    assert ring_loops(["a", "b", "c", "a", "d", "e"]) == [[0, 1, 2], [0, 4, 5]]
    # Touching at a, then at d inside the second part: three loops.
    ring = ["a", "b", "c", "a", "d", "g", "e", "d", "f"]
    loops = ring_loops(ring)
    assert sorted(sorted(ring[i] for i in loop) for loop in loops) == [
        ["a", "b", "c"],
        ["a", "d", "f"],
        ["d", "e", "g"],
    ]
    for loop in loops:
        assert len({ring[i] for i in loop}) == len(loop) and loop == sorted(loop)
    assert {ring[i] for loop in loops for i in loop} == set(ring)


def test_turns_left_is_a_left_turn_of_turn_on_random_and_collinear_points():
    rng = np.random.default_rng(5)
    points = rng.uniform(-3, 3, (2000, 3, 2))
    # Every third triple nearly collinear (within the tolerance or just beyond it), every fifth exact.
    line = points[::3, 0] + rng.uniform(-2, 2, (len(points[::3]), 1)) * (points[::3, 1] - points[::3, 0])
    points[::3, 2] = line + rng.normal(0, 1e-10, line.shape)
    points[::5, 2] = points[::5, 0]
    for o, a, b in points.tolist():
        assert turns_left(o, a, b) == (turn(o, a, b) > 0)
