"""Hole outlines: a wall-only hole (a pillar, a crate) enclosed by as few corners as the
simplification tolerance allows."""

from __future__ import annotations

from functools import cache
from itertools import combinations

import numpy as np

from ..geometry import convex_hull, point_segment_distance_matrix, ring_next
from .push import _fits_among

# Rings farther than this many tolerances from a traced hole cannot meet its fewer-corner outline.
_HOLE_REACH = 2.0
# Hole hull edges considered as sides of a fewer-corner hole outline (the longest ones), and the
# most corners such an outline may have: both bound the combinations tried.
_HOLE_SIDE_CANDIDATES = 12
_HOLE_MAX_CORNERS = 5
_HOLE_SIFT_POINTS = 24


def _enclosing_hole(traced: np.ndarray, corners: int, tolerance: float, others: list[np.ndarray]) -> np.ndarray | None:
    """A wall-only hole (clockwise, traced points (n, 3)) as a convex outline with fewer than
    `corners` vertices that encloses every traced point, stays within `tolerance` of the traced
    outline both ways and keeps clear of the region's other rings; None if there is none.

    Every hole corner is a notch of the region around it and costs polygons, so a pillar is better
    a triangle than a square when the tolerance allows. Enclosing keeps the obstacle out of the
    navmesh; sides lie on hull edges of the traced points, so only corners stick out.
    """
    xy = traced[:, :2]
    hull = xy[convex_hull(xy)]
    if len(hull) < 3 or corners <= 3:
        return None
    side = ring_next(hull) - hull
    length = np.hypot(side[:, 0], side[:, 1])
    sides = np.sort(np.argsort(-length)[:_HOLE_SIDE_CANDIDATES])
    normal = np.stack([side[sides, 1], -side[sides, 0]], axis=1) / length[sides, None]
    offset = np.einsum("ij,ij->i", normal, hull[sides])
    # Inside a convex outline a point's distance to it is the least distance to a side's line; a
    # few dozen traced points sift the combinations, all of them confirm the survivors.
    depth = offset[:, None] - normal @ xy.T  # (sides, points), >= 0: every side supports the hull
    sample = depth[:, np.linspace(0, len(xy) - 1, min(len(xy), _HOLE_SIFT_POINTS)).astype(np.int64)]
    a, b = xy, ring_next(xy)
    for k in range(3, min(corners, _HOLE_MAX_CORNERS + 1)):
        combos = _combinations(len(sides), k)
        n1, n2 = normal[combos], normal[np.roll(combos, -1, axis=1)]
        c1, c2 = offset[combos], offset[np.roll(combos, -1, axis=1)]
        det = n1[..., 0] * n2[..., 1] - n1[..., 1] * n2[..., 0]
        ok = (det > 1e-9).all(axis=1)  # every turn between consecutive sides is under pi: bounded
        ok[ok] &= sample[combos[ok]].min(axis=1).max(axis=1) <= tolerance
        ok[ok] &= depth[combos[ok]].min(axis=1).max(axis=1) <= tolerance
        if not ok.any():
            continue
        combos, n1, n2, c1, c2, det = combos[ok], n1[ok], n2[ok], c1[ok], c2[ok], det[ok]
        corner = np.stack(
            [(c1 * n2[..., 1] - c2 * n1[..., 1]) / det, (n1[..., 0] * c2 - n2[..., 0] * c1) / det], axis=-1
        )
        reach = point_segment_distance_matrix(corner.reshape(-1, 2), a, b).min(axis=1).reshape(len(combos), k)
        fits = np.flatnonzero(reach.max(axis=1) <= tolerance)
        start, end = corner[fits], np.roll(corner[fits], -1, axis=1)
        area = 0.5 * np.abs(np.sum(start[..., 0] * end[..., 1] - end[..., 0] * start[..., 1], axis=1))
        for best in fits[np.argsort(area)]:
            nearest = point_segment_distance_matrix(corner[best], xy, xy).argmin(axis=1)
            ring = np.column_stack([corner[best], traced[nearest, 2]])[::-1]
            if _fits_among(ring, others):
                return ring
    return None


@cache
def _combinations(n: int, k: int) -> np.ndarray:
    """(C(n, k), k) index combinations in lexicographic order."""
    return np.array(list(combinations(range(n), k)), dtype=np.int64).reshape(-1, k)
