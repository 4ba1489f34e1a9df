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
