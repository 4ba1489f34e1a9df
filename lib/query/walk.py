"""Walking a segment across the polygon graph, seen from above (Detour's raycast walk)."""

from __future__ import annotations

import math

from .index import MeshIndex

# A point this close (m) to an edge's line lies on it; a segment whose end lies within this of an
# edge's line, beyond it, runs along the edge and does not leave by it.
WALK_TOL = 1e-9
# A walk from a point on a polygon's edge that turns out of it by less than this (sine of the angle)
# runs along it.
HEADING_TOL = 1e-12
# An exit point this many WALK_TOL from both ends of its edge lies inside the edge's span.
SPAN_MARGIN = 4.0


def _exit(edges, sx: float, sy: float, ex: float, ey: float, t0: float) -> tuple[float, int]:
    """(t, i): where the segment s->e, inside the convex polygon with these edges at fraction t0,
    leaves it (inf if it does not before e), and by which of its edges (index in `edges`, -1 for
    none). An edge whose line passes through the point at t0 is left at t0 if the segment heads out
    across it (an exit through a corner or from a point on the edge), and is not left by at all if
    the segment runs along it. An edge the point lies beyond (a start a rounding error outside its
    polygon) is passed over."""
    dx, dy = ex - sx, ey - sy
    norm = math.hypot(dx, dy)
    best, arg = math.inf, -1
    for i, (ax, ay, ux, uy) in enumerate(edges):
        length = math.hypot(ux, uy)
        band = WALK_TOL * length  # WALK_TOL as a cross product with the edge
        off_e = ux * (ey - ay) - uy * (ex - ax)  # > 0: the end lies inside the edge's line
        if off_e >= -band:
            continue  # the end is inside or on the line: the segment never leaves by this edge
        off_s = ux * (sy - ay) - uy * (sx - ax)
        den = off_s - off_e
        off_t = off_s - t0 * den
        if off_t > band:
            t = off_s / den  # a clean crossing ahead
        elif off_t >= -band:
            # The point lies on the edge's line: it heads out across it now, or runs along it and
            # leaves where it is more than WALK_TOL out (a very long, almost parallel segment).
            if den > HEADING_TOL * length * norm:
                return t0, i
            t = (off_s + band) / den
        else:
            continue
        if t < best:
            best, arg = t, i
    return best, arg


def _holds(edge, x: float, y: float) -> bool:
    """Does the edge (ax, ay, ux, uy) hold the point (x, y), within WALK_TOL?"""
    ax, ay, ux, uy = edge
    length2 = ux * ux + uy * uy
    length = math.sqrt(length2)
    if abs(ux * (y - ay) - uy * (x - ax)) > 2.0 * WALK_TOL * length:
        return False
    slack = WALK_TOL / max(length, WALK_TOL)
    return -slack <= ((x - ax) * ux + (y - ay) * uy) / max(length2, WALK_TOL * WALK_TOL) <= 1.0 + slack


def _within_span(edge, length: float, x: float, y: float) -> bool:
    """Does the point (x, y), on the edge's line, lie inside its span, more than SPAN_MARGIN times
    WALK_TOL from both ends? No other edge of a conforming mesh then holds it (`_holds`) but the
    twin of this one across a portal."""
    if length <= 0.0:
        return False
    ax, ay, ux, uy = edge
    margin = SPAN_MARGIN * WALK_TOL / length
    return margin < ((x - ax) * ux + (y - ay) * uy) / (length * length) < 1.0 - margin


def walk_segment(index: MeshIndex, p: int, s, e, passable=None, crossings: list | None = None):
    """Walk s->e (XY) through the polygon graph from polygon p, which holds s.

    Returns (t, edge, visited): t = inf and edge = -1 when the walk reaches e, else the fraction where
    it leaves the polygons it can walk (walls, polygons the filter excludes) and the edge slot of the
    last polygon it leaves by: a wall or an edge into an impassable or already visited polygon where
    one holds the exit point, else the edge the segment crosses. Where the segment leaves a polygon
    at a point (on an edge, along an edge to its end, through a vertex), every polygon holding that
    point and joined to this one through portals that hold it is a candidate to go on in: the walk
    goes on in the one (passable, not visited) it stays in the longest, passing over those it only
    touches there (a corner shared by several polygons). visited: the polygons it walks, in order.
    crossings, when given, gets the fraction at which the walk enters each polygon after the first.
    Plain Python floats over lists cached on the index: a walk touches few edges, so numpy's per-call
    overhead would dominate.
    """
    offs, nb, ex = index.walk_lists()
    lengths = index.edge_lengths()
    sx, sy = float(s[0]), float(s[1])
    exx, eyy = float(e[0]), float(e[1])
    tie = WALK_TOL / max(math.hypot(exx - sx, eyy - sy), WALK_TOL)
    visited = [p]
    seen = {p}
    t, arg = _exit(ex[offs[p] : offs[p + 1]], sx, sy, exx, eyy, 0.0)
    while True:
        if t >= 1.0 - tie:  # an end on the polygon's edge is on the polygon
            return math.inf, -1, visited
        x, y = sx + t * (exx - sx), sy + t * (eyy - sy)
        # The polygons that hold the exit point, through portals that hold it: go on in the one the
        # segment stays in the longest.
        best_q, best_t, best_arg = -1, t + tie, -1
        k = offs[p] + arg
        if _within_span(ex[k], lengths[k], x, y):
            # Inside one edge's span, only the polygon across it holds the point (most exits).
            q = nb[k]
            if q >= 0 and q not in seen and (passable is None or passable(q)):
                tq, aq = _exit(ex[offs[q] : offs[q + 1]], sx, sy, exx, eyy, t)
                if tq > best_t:
                    best_q, best_t, best_arg = q, tq, aq
        else:
            explored = {p}
            stack = [p]
            while stack:
                c = stack.pop()
                for k in range(offs[c], offs[c + 1]):
                    q = nb[k]
                    if q < 0 or q in explored or (passable is not None and not passable(q)) or not _holds(ex[k], x, y):
                        continue
                    explored.add(q)
                    stack.append(q)
                    if q in seen:
                        continue
                    tq, aq = _exit(ex[offs[q] : offs[q + 1]], sx, sy, exx, eyy, t)
                    if tq > best_t:
                        best_q, best_t, best_arg = q, tq, aq
        if best_q < 0:
            return t, _wall(index, p, x, y, exx - sx, eyy - sy, seen, passable, offs[p] + arg), visited
        if crossings is not None:
            crossings.append(t)
        p, t, arg = best_q, best_t, best_arg
        visited.append(p)
        seen.add(p)


def _wall(index: MeshIndex, p: int, x: float, y: float, dx: float, dy: float, seen, passable, fallback: int) -> int:
    """The edge slot of polygon p a walk leaving it at (x, y) along (dx, dy) stops at: one holding
    the point that the segment heads out across and that leads nowhere it may go (a wall, an
    impassable or visited polygon), else one holding the point it heads out across, else fallback."""
    offs, nb, ex = index.walk_lists()
    out = -1
    for k in range(offs[p], offs[p + 1]):
        ax, ay, ux, uy = ex[k]
        if uy * dx - ux * dy <= 0.0 or not _holds(ex[k], x, y):
            continue
        q = nb[k]
        if q < 0 or q in seen or (passable is not None and not passable(q)):
            return k
        if out < 0:
            out = k
    return out if out >= 0 else fallback
