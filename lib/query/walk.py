"""Walking a segment across the polygon graph, seen from above (Detour's raycast walk)."""

from __future__ import annotations

import math

from ..geometry import NONZERO_DIVISOR
from .index import MeshIndex

# Exit points this close (m) count as the same point when a walk leaves through a vertex.
WALK_TOL = 1e-9
# A walk along a polygon's edge that turns out of it by less than this (sine of the angle) runs along it.
HEADING_TOL = 1e-12
# An edge whose cross product with the walk's direction is at most this (m^2) is parallel to the
# walk or faces away from it: the walk cannot leave through it.
PARALLEL_TOL = 1e-15


def _heads_inside(edges, x: float, y: float, dx: float, dy: float) -> bool:
    """Does direction (dx, dy) from boundary point (x, y) of a convex polygon run into it or along
    its edge? Only the edges whose lines pass through the point decide."""
    norm = math.hypot(dx, dy)
    for ax, ay, ux, uy in edges:
        length = math.hypot(ux, uy)
        if length <= 0.0 or abs(ux * (y - ay) - uy * (x - ax)) > WALK_TOL * length:
            continue
        if ux * dy - uy * dx < -HEADING_TOL * length * norm:
            return False
    return True


def walk_segment(index: MeshIndex, p: int, s, e, passable=None, crossings: list | None = None):
    """Walk s->e (XY) through the polygon graph from polygon p, which holds s.

    Returns (t, edge, visited): t = inf and edge = -1 when the walk reaches e, else the fraction where
    it leaves through a wall edge slot (or an edge into an impassable or already visited polygon).
    The exit edge is one that holds the exit point, so where two edges of a polygon are collinear the
    walk leaves by the one the line really crosses; through a vertex it takes an edge that leads on.
    crossings, when given, gets the fraction at which the walk enters each polygon after the first.
    Plain Python floats over lists cached on the index: a walk touches few edges, so numpy's per-call
    overhead would dominate.
    """
    offs, nb, ex = index.walk_lists()
    sx, sy = float(s[0]), float(s[1])
    dx, dy = float(e[0]) - sx, float(e[1]) - sy
    tie = WALK_TOL / max(math.hypot(dx, dy), WALK_TOL)
    visited = [p]
    seen = {p}
    t_enter = 0.0
    while True:
        a0, a1 = offs[p], offs[p + 1]
        ts = []
        for ax, ay, ux, uy in ex[a0:a1]:
            den = uy * dx - ux * dy
            t = (uy * (ax - sx) - ux * (ay - sy)) / den if den > PARALLEL_TOL else math.inf
            if t < 1.0 and (den * (1.0 - t)) ** 2 <= WALK_TOL * WALK_TOL * (ux * ux + uy * uy):
                # The end lies within WALK_TOL of the edge's line: the segment runs along the edge
                # (a noisy crossing of a line it is parallel to), it does not leave by it.
                t = math.inf
            ts.append(t if t >= t_enter - tie else math.inf)
        best = min(ts)
        if best <= t_enter + tie and _heads_inside(ex[a0:a1], sx + best * dx, sy + best * dy, dx, dy):
            # The line only touches this polygon's corner from inside or runs along its edge: no exit yet.
            ts = [t if t > t_enter + tie else math.inf for t in ts]
            best = min(ts)
        if best >= 1.0 - tie:  # an end on the polygon's edge is on the polygon
            return math.inf, -1, visited
        x, y = sx + best * dx, sy + best * dy
        exit_edge, wall = -1, -1
        for c in range(a0, a1):
            if ts[c - a0] > best + tie:
                continue
            ax, ay, ux, uy = ex[c]
            length2 = ux * ux + uy * uy
            along = ((x - ax) * ux + (y - ay) * uy) / max(length2, NONZERO_DIVISOR)
            slack = WALK_TOL / max(math.sqrt(length2), WALK_TOL)
            if not -slack <= along <= 1.0 + slack:
                continue  # collinear with the exit edge but not holding the exit point
            q = nb[c]
            if q >= 0 and q not in seen and (passable is None or passable(q)):
                exit_edge = c
                break
            if wall < 0:
                wall = c
        if exit_edge < 0:
            return best, (wall if wall >= 0 else a0 + ts.index(best)), visited
        p = nb[exit_edge]
        visited.append(p)
        seen.add(p)
        t_enter = best
        if crossings is not None:
            crossings.append(best)
