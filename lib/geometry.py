"""Plane geometry shared by the stages and the queries (XY, counter-clockwise is positive)."""

from __future__ import annotations

import numpy as np


def cross(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> float:
    """Twice the signed area of triangle a, b, c: positive when c lies left of a -> b."""
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def convex_hull(xy: np.ndarray) -> np.ndarray:
    """Indices of the convex hull, counter-clockwise, without collinear points (monotone chain)."""
    order = np.lexsort((xy[:, 1], xy[:, 0]))
    pts = xy.tolist()

    def chain(seq):
        out = []
        for i in seq:
            while len(out) >= 2 and cross(*pts[out[-2]], *pts[out[-1]], *pts[i]) <= 0:
                out.pop()
            out.append(i)
        return out

    lower, upper = chain(order.tolist()), chain(order[::-1].tolist())
    return np.array(lower[:-1] + upper[:-1], dtype=np.int64)


def point_segment_distance(x: np.ndarray, a: np.ndarray, b: np.ndarray):
    """Distance of points x (N, 2) to segments a-b (N, 2), and the parameter (0..1) of the closest point."""
    ab = b - a
    den = np.einsum("ij,ij->i", ab, ab)
    t = np.clip(np.einsum("ij,ij->i", x - a, ab) / np.where(den > 0, den, 1.0), 0.0, 1.0)
    return np.hypot(*(x - a - t[:, None] * ab).T), t


def segment_distance(p, q, a, b):
    """Distance between segments p-q and a-b (N, 2 each), and where along p-q (0..1) it is reached."""
    cands = [point_segment_distance(a, p, q), point_segment_distance(b, p, q)]
    for end, t_end in ((p, 0.0), (q, 1.0)):
        cands.append((point_segment_distance(end, a, b)[0], np.full(len(p), t_end)))
    dist = np.stack([c[0] for c in cands])
    t = np.stack([c[1] for c in cands])
    k = np.argmin(dist, axis=0)
    cols = np.arange(len(p))
    best, at = dist[k, cols], t[k, cols]
    # Segments that cross are 0 apart, at the crossing.
    u, v, w = q - p, b - a, a - p
    den = u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (w[:, 0] * v[:, 1] - w[:, 1] * v[:, 0]) / den
        r = (w[:, 0] * u[:, 1] - w[:, 1] * u[:, 0]) / den
    cross = (den != 0) & (s >= 0) & (s <= 1) & (r >= 0) & (r <= 1)
    return np.where(cross, 0.0, best), np.where(cross, s, at)
