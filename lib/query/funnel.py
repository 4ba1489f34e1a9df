"""String pulling (Simple Stupid Funnel) through a portal corridor, keeping a clearance from corners."""
from __future__ import annotations

import math

import numpy as np


def _cross(o, a, b) -> float:
    """z of (a - o) x (b - o): > 0 when b is left of the ray o->a."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _same(a, b) -> bool:
    return abs(a[0] - b[0]) <= 1e-9 and abs(a[1] - b[1]) <= 1e-9


def string_pull(start: np.ndarray, goal: np.ndarray, lefts: list, rights: list) -> tuple[list, list, list]:
    """Taut path from start to goal through portals (left, right seen walking forward).

    Returns points, the portal index each point came from (-1 start, len(lefts) goal) and which side
    ('L'/'R'/'') it bends around. The tests run on float tuples: numpy's per-call overhead would
    dominate this sequential loop.
    """
    lefts = list(lefts) + [goal]
    rights = list(rights) + [goal]
    lxy = [(float(q[0]), float(q[1])) for q in lefts]
    rxy = [(float(q[0]), float(q[1])) for q in rights]
    n = len(lefts)
    pts, idx, side = [start], [-1], [""]
    apex = pl = pr = (float(start[0]), float(start[1]))
    pl_obj = pr_obj = start
    ai = li = ri = -1
    i = 0
    while i < n:
        left, right = lxy[i], rxy[i]
        if _cross(apex, pr, right) >= 0:  # right side tightens
            if _same(apex, pr) or _cross(apex, pl, right) < 0:
                pr, pr_obj, ri = right, rights[i], i
            else:
                pts.append(pl_obj), idx.append(li), side.append("L" if li < n - 1 else "")
                apex, ai = pl, li
                pr, pr_obj, ri = pl, pl_obj, li
                i = ai + 1
                continue
        if _cross(apex, pl, left) <= 0:  # left side tightens
            if _same(apex, pl) or _cross(apex, pr, left) > 0:
                pl, pl_obj, li = left, lefts[i], i
            else:
                pts.append(pr_obj), idx.append(ri), side.append("R" if ri < n - 1 else "")
                apex, ai = pr, ri
                pl, pl_obj, li = pr, pr_obj, ri
                i = ai + 1
                continue
        i += 1
    if max(abs(float(a) - float(b)) for a, b in zip(pts[-1], goal)) > 1e-9:
        pts.append(goal), idx.append(n - 1), side.append("")
    return pts, idx, side


def _tangent_dir(p: np.ndarray, c: np.ndarray, d: float, circle_left: bool) -> np.ndarray | None:
    """Unit XY direction from p of the line tangent to circle (c, d) with the circle on the given side."""
    v = c[:2] - p[:2]
    dist = float(np.linalg.norm(v))
    if dist <= d + 1e-12:
        return None
    ang = math.asin(d / dist) * (-1.0 if circle_left else 1.0)
    u = v / dist
    ca, sa = math.cos(ang), math.sin(ang)
    return np.array([u[0] * ca - u[1] * sa, u[0] * sa + u[1] * ca])


def round_corners(points: list, corners: list, sides: list, d: float, passes: int = 3) -> tuple[list, list]:
    """Move each bend so both of its segments are tangent to a circle of radius d around its wall corner.

    Returns the points and the indices (into the input) of those kept."""
    if d <= 0 or len(points) < 3:
        return points, list(range(len(points)))
    # Bends on several portals around one corner become a single bend.
    keep = [k for k in range(len(points)) if k == 0 or corners[k] is None or corners[k - 1] is None or not np.allclose(corners[k], corners[k - 1], atol=1e-6)]
    pts = [np.array(points[k], dtype=np.float64) for k in keep]
    corners = [corners[k] for k in keep]
    sides = [sides[k] for k in keep]
    for _ in range(passes):
        for k in range(1, len(pts) - 1):
            c = corners[k]
            if c is None:
                continue
            left = sides[k] == "L"
            d1 = _tangent_dir(pts[k - 1], c, d, left)
            d2 = _tangent_dir(pts[k + 1], c, d, not left)
            if d1 is None or d2 is None:
                continue
            den = d1[0] * d2[1] - d1[1] * d2[0]
            if abs(den) < 1e-12:
                continue
            w = pts[k + 1][:2] - pts[k - 1][:2]
            t = (w[0] * d2[1] - w[1] * d2[0]) / den
            if t <= 0:
                continue
            xy = pts[k - 1][:2] + t * d1
            pts[k] = np.array([xy[0], xy[1], pts[k][2]])
    return pts, keep
