"""The path itself: the shortest line from start to goal that keeps r - r0 from the navmesh edge.

A search over portals picks the corridor; this module draws the path near it exactly. Every
shortest path bends only around reflex wall corners, on a circle of radius d = r - r0 about each
(the corner itself when d = 0). Each such arc is replaced by the few points of a polygon drawn
around it (circumscribed, so its sides keep d from the corner), and the path is the shortest chain
of start, corner points and goal whose segments walk over the mesh and keep d from every wall:
a visibility graph searched by A* (chain.py), each segment tested only when the search reaches it.
"""

from __future__ import annotations

import math

import numpy as np

from ..geometry import point_segment_distance_xy, point_segment_xy, segment_wall_distance_xy
from .chain import ARC, WEDGE
from .graph import FITS_TOL
from .index import PLANAR_TOL

# The arcs around corners are cut into steps of at most this angle (radians); a finer step comes
# closer to the true arc at the cost of more candidate points. The polygon's vertices lie
# 1/cos(step/2) - 1 beyond the arc (1.2% of r - r0), so beside a portal that fits the agent with
# less room to spare than that, the finer TIGHT_ARC_STEP is used (0.1%).
ARC_STEP = math.pi / 10
TIGHT_ARC_STEP = math.pi / 40
# Relative margin on the circumscribed radius, so float noise never brings a corner point inside.
ARC_MARGIN = 1e-7
# A path segment may come this much closer than d to a wall (m): float noise, not geometry.
CLEARANCE_TOL = 1e-7
# A path is given a point where the surface under it is more than this (m) above or below the
# straight line (times the index's height_scale: finer on a mesh baked finer, see index.HEIGHT_TOLS_AT).
DRAPE_TOL = 0.02
# The chord between kept heights may leave the profile by this much (m): a polygon counted as
# planar (index.PLANAR_TOL) gives only its entry height, and its surface may bend either way of the
# line between entries by its tolerance, which the chord must leave room for.
CHORD_TOL = DRAPE_TOL - 2.0 * PLANAR_TOL
# Rings of neighbouring polygons around the corridor whose corners the path may bend at.
CORNER_RINGS = 2
# A segment's end lies on the walk's last polygon within this cross product with its edges (m², see
# index.INSIDE_TOL): looser, as a path's points are computed (arc points, pushes), not given.
ENDS_ON_TOL = 1e-6
# An arc that is a whole number of steps up to rounding is cut into that many.
STEP_ROUNDING = 1e-9


def keeps_clear(index, polys, a: tuple, b: tuple, d: float) -> bool:
    """Does segment a-b (XY), lying on the given polygons, keep d from every wall of its floor?
    Walls within d are found by flooding from those polygons through portals closer than d; edges
    whose boxes are d or more from the segment's box are passed over unmeasured."""
    if d <= 0.0:
        return True
    _, _, ex = index.walk_lists()
    boxes = index.edge_boxes()
    x0, x1 = min(a[0], b[0]) - d, max(a[0], b[0]) + d
    y0, y1 = min(a[1], b[1]) - d, max(a[1], b[1]) + d

    def measure(c: int) -> float:
        lx, ly, hx, hy = boxes[c]
        if lx > x1 or hx < x0 or ly > y1 or hy < y0:
            return math.inf
        return segment_wall_distance_xy(a, b, ex[c])

    limit = d - CLEARANCE_TOL
    return all(dist >= limit for _, dist in _walls_within(index, polys, measure, d))


def nearest_wall(index, poly: int, x: tuple, d: float):
    """The nearest wall point (XY) closer than d to point x on polygon poly, as (distance, point,
    edge slot), or None when every wall of its floor is at least d away."""
    _, _, ex = index.walk_lists()
    found = [
        (dist, c)
        for c, dist in _walls_within(index, [poly], lambda c: point_segment_distance_xy(x[0], x[1], *ex[c]), d)
    ]
    if not found:
        return None
    dist, c = min(found)
    _, wx, wy = point_segment_xy(x[0], x[1], *ex[c])
    return dist, (wx, wy), c


def _walls_within(index, polys, measure, d: float):
    """(edge slot, distance) for each wall edge measured closer than d, flooding from `polys`
    through portals measured closer than d (the walls of one floor, not of one beneath or above)."""
    offs, nb, _ = index.walk_lists()
    stack = list(polys)
    seen = set(stack)
    while stack:
        p = stack.pop()
        for c in range(offs[p], offs[p + 1]):
            q = nb[c]
            if q >= 0 and q in seen:
                continue
            dist = measure(c)
            if dist >= d:
                continue
            if q < 0:
                yield c, dist
            else:
                seen.add(q)
                stack.append(q)


def clear_point(index, walk, poly: int, x: tuple, d: float, limit: float, toward: tuple | None = None):
    """(polygon, point) nearest x, within `limit` (XY), that keeps d from every wall of x's floor and
    is reached from x in a straight line over the mesh: x itself when it keeps d; else the nearest
    such point of the edge of the space that does. That edge is made of the walls' lines moved d
    out and circles of radius d round the walls' ends, so its nearest point to x is x's foot on one
    of them or a point where two meet; each of those, nearest first, is tested until one keeps d.
    None if none within `limit` does. toward: find the such point nearest this point instead (XY;
    a partial path's end nearest the goal, x being the nearest point of the mesh the agent reaches)."""
    if d <= 0.0 or nearest_wall(index, poly, x, d - CLEARANCE_TOL) is None:
        return poly, x
    px, py = x[0], x[1]
    tx, ty = (px, py) if toward is None else (toward[0], toward[1])
    _, _, ex = index.walk_lists()
    walls = [
        ex[c] for c, _ in _walls_within(index, [poly], lambda c: point_segment_distance_xy(px, py, *ex[c]), limit + d)
    ]
    off = d * (1.0 + ARC_MARGIN)  # a hair beyond d, so rounding never brings a point inside
    lines: list[tuple[float, float, float, float]] = []
    ends: set[tuple[float, float]] = set()
    for ax, ay, ux, uy in walls:
        length = math.hypot(ux, uy)
        if length > 0.0:  # the wall's line moved off to its walkable (left) side
            lines.append((ax - uy / length * off, ay + ux / length * off, ux, uy))
            ends.update(((ax, ay), (ax + ux, ay + uy)))

    def clear(qx: float, qy: float):
        if math.hypot(qx - px, qy - py) > limit:
            return None
        t, _, visited = walk(poly, x, (qx, qy))
        if t != math.inf or nearest_wall(index, visited[-1], (qx, qy), d - CLEARANCE_TOL) is not None:
            return None
        return visited[-1], (qx, qy, index.height(visited[-1], (qx, qy)))

    def first_clear(points, beyond: float):
        for dist, qx, qy in sorted(points):
            if dist >= beyond:
                break
            got = clear(qx, qy)
            if got is not None:
                return dist, got
        return beyond, None

    feet = [point_segment_xy(tx, ty, *line) for line in lines]
    for cx, cy in ends:
        rho = math.hypot(tx - cx, ty - cy)
        if rho > 0.0:
            feet.append((abs(rho - off), cx + (tx - cx) / rho * off, cy + (ty - cy) / rho * off))
    best_dist, best = first_clear(feet, limit * (1.0 + ARC_MARGIN) if toward is None else math.inf)
    # Where two of them meet nearer than that: the nearest clear point is a corner of the edge.
    near_lines = [line for line in lines if point_segment_distance_xy(tx, ty, *line) < best_dist]
    near_ends = [c for c in ends if abs(math.hypot(tx - c[0], ty - c[1]) - off) < best_dist]
    meets = [
        *(q for i, a in enumerate(near_lines) for b in near_lines[i + 1 :] for q in _lines_meet(a, b)),
        *(q for line in near_lines for c in near_ends for q in _line_meets_circle(line, c, off)),
        *(q for i, a in enumerate(near_ends) for b in near_ends[i + 1 :] for q in _circles_meet(a, b, off)),
    ]
    _, corner = first_clear([(math.hypot(qx - tx, qy - ty), qx, qy) for qx, qy in meets], best_dist)
    return corner if corner is not None else best


def _lines_meet(a: tuple, b: tuple) -> list[tuple[float, float]]:
    """Where segments a and b (x, y, ux, uy) cross, if they do."""
    ax, ay, ux, uy = a
    bx, by, vx, vy = b
    den = ux * vy - uy * vx
    if den == 0.0:
        return []
    t = ((bx - ax) * vy - (by - ay) * vx) / den
    s = ((bx - ax) * uy - (by - ay) * ux) / den
    return [(ax + t * ux, ay + t * uy)] if 0.0 <= t <= 1.0 and 0.0 <= s <= 1.0 else []


def _line_meets_circle(line: tuple, centre: tuple, radius: float) -> list[tuple[float, float]]:
    """Where segment `line` (x, y, ux, uy) crosses the circle."""
    ax, ay, ux, uy = line
    fx, fy = ax - centre[0], ay - centre[1]
    a2 = ux * ux + uy * uy
    b = fx * ux + fy * uy
    disc = b * b - a2 * (fx * fx + fy * fy - radius * radius)
    if a2 <= 0.0 or disc < 0.0:
        return []
    root = math.sqrt(disc)
    return [(ax + t * ux, ay + t * uy) for t in ((-b - root) / a2, (-b + root) / a2) if 0.0 <= t <= 1.0]


def _circles_meet(a: tuple, b: tuple, radius: float) -> list[tuple[float, float]]:
    """Where two circles of one radius about a and b cross."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    gap = math.hypot(dx, dy)
    if gap <= 0.0 or gap > 2.0 * radius:
        return []
    h = math.sqrt(max(radius * radius - 0.25 * gap * gap, 0.0)) / gap
    mx, my = a[0] + 0.5 * dx, a[1] + 0.5 * dy
    return [(mx - dy * h, my + dx * h), (mx + dy * h, my - dx * h)]


def corner_points(
    index, graph, vertices, corner: int, d: float, walk, step: float
) -> list[tuple[tuple, list[int], tuple | None]]:
    """Where a path may bend around a reflex wall corner for clearance d: the corner itself when d = 0,
    else the vertices of a polygon circumscribed about the arc of radius d beside its walls (a full
    circle where several wall loops meet at the corner). Each comes with the polygon holding it and
    its cone: the directions a taut path may leave it along (see `shortest_chain`)."""
    v = vertices[corner]
    polys = graph.vertex_polys[corner]
    if d <= 0.0:
        cone = None
        if graph.wall_in[corner] >= 0:
            a, b = vertices[graph.wall_in[corner]], vertices[graph.wall_out[corner]]
            cone = (WEDGE, float(a[0] - v[0]), float(a[1] - v[1]), float(b[0] - v[0]), float(b[1] - v[1]))
        return [((float(v[0]), float(v[1]), float(v[2])), polys, cone)]
    start, sweep, steps = _arc(graph, vertices, corner, step)
    half = 0.5 * sweep / steps
    radius = d / math.cos(half) * (1.0 + ARC_MARGIN)
    return _arc_points(index, walk, v, polys, [(start - (j + 0.5) * sweep / steps, radius) for j in range(steps)], half)


def _arc(graph, vertices, corner: int, step: float) -> tuple[float, float, int]:
    """(start, sweep, steps) of a corner's arc: the angle of the incoming wall's left normal, the
    clockwise turn to the outgoing wall's (a full turn where several wall loops meet), and the
    number of polygon sides drawn around it."""
    v = vertices[corner]
    if graph.wall_in[corner] >= 0:
        a, b = vertices[graph.wall_in[corner]], vertices[graph.wall_out[corner]]
        ux, uy = v[0] - a[0], v[1] - a[1]
        wx, wy = b[0] - v[0], b[1] - v[1]
        start = math.atan2(ux, -uy)  # the left normal of the incoming wall
        sweep = -math.atan2(ux * wy - uy * wx, ux * wx + uy * wy)  # clockwise turn to the outgoing wall
        if sweep <= 0.0:
            sweep = math.pi  # the wall doubles back
    else:
        start, sweep = 0.0, 2.0 * math.pi
    return start, sweep, max(1, math.ceil(sweep / step - STEP_ROUNDING))


def _arc_points(index, walk, v, polys, places: list[tuple[float, float]], half: float):
    """The bend points at (angle, distance) about corner point v that lie on the mesh, each with the
    polygon holding it and its arc cone (links within `half` of the tangent there)."""
    out = []
    for phi, radius in places:
        xy = (float(v[0]) + radius * math.cos(phi), float(v[1]) + radius * math.sin(phi))
        # A point too close to another wall is kept: every link from it fails the clearance test.
        for p in polys:
            t, _, visited = walk(p, (float(v[0]), float(v[1])), xy)
            if t == math.inf and index.inside_xy(visited[-1], xy):
                cone = (ARC, math.cos(phi), math.sin(phi), math.cos(half))
                out.append(((xy[0], xy[1], index.height(visited[-1], xy)), [visited[-1]], cone))
                break
    return out


def end_points(index, graph, vertices, corner: int, d: float, walk, step: float, x: tuple) -> list:
    """Bend points that let a path reach (or leave) an end x lying inside the polygon drawn about a
    corner's arc (`corner_points`): the cleared start or goal of a query sits on the arc itself
    when its nearest wall point is the corner. No vertex of that polygon reaches x along a line
    that supports the polygon (cones), and only the one or two within half a step of x see it at
    all. These are the two vertices of the same polygon turned to touch x's circle about the corner
    at x: the lines from them to x are tangent there. Empty when x is not inside the polygon."""
    if d <= 0.0:
        return []
    v = vertices[corner]
    start, sweep, steps = _arc(graph, vertices, corner, step)
    half = 0.5 * sweep / steps
    rho = math.hypot(x[0] - float(v[0]), x[1] - float(v[1]))
    if rho >= d / math.cos(half) * (1.0 + ARC_MARGIN) or rho <= 0.0:
        return []
    theta = math.atan2(x[1] - float(v[1]), x[0] - float(v[0]))
    if (start - theta) % (2.0 * math.pi) > sweep:
        return []  # beside a wall: the polygon's first or last side runs along it, through x
    # On the tangent at x itself, so the link to x leaves along the edge of their cones.
    radius = rho / math.cos(half)
    return _arc_points(
        index, walk, v, graph.vertex_polys[corner], [(theta + half, radius), (theta - half, radius)], half
    )


def arc_reach(d: float) -> float:
    """How far from its corner a bend point for clearance d may lie."""
    return d / math.cos(0.5 * ARC_STEP) * (1.0 + ARC_MARGIN)


def arc_step(graph, corner: int, r: float, d: float) -> float:
    """The arc step for a corner: TIGHT_ARC_STEP beside a portal whose clearance leaves less room
    than the coarse polygon's overshoot, else ARC_STEP."""
    room = (1.0 / math.cos(0.5 * ARC_STEP) - 1.0 + ARC_MARGIN) * d
    offs, nb, clear = graph.offs_l, graph.nb_l, graph.edge_clear_l
    for p in graph.vertex_polys[corner]:
        for e in range(offs[p], offs[p + 1]):
            if nb[e] >= 0 and r - FITS_TOL <= clear[e] < r + room:
                return TIGHT_ARC_STEP
    return ARC_STEP


def corner_pull(graph, vertices, corner: int, d: float) -> tuple[float, float] | None:
    """A point (XY) a shortest path bending at this corner's points turns toward: the corner itself
    for d > 0 (the centre of the arc), a point inside its obstacle for d = 0 (the path bends at the
    corner itself); None where several wall loops meet at the corner."""
    v = vertices[corner]
    if d > 0.0:
        return float(v[0]), float(v[1])
    if graph.wall_in[corner] < 0:
        return None
    a, b = vertices[graph.wall_in[corner]], vertices[graph.wall_out[corner]]
    (ux, uy), (wx, wy) = _unit(v[0] - a[0], v[1] - a[1]), _unit(b[0] - v[0], b[1] - v[1])
    # The obstacle lies right of the walls (the walkable side is left of every boundary edge).
    return float(v[0]) + uy + wy, float(v[1]) - ux - wx


def _unit(x: float, y: float) -> tuple[float, float]:
    n = math.hypot(x, y)
    return (x / n, y / n) if n > 0.0 else (0.0, 0.0)


def _ends_on(index, p: int, pt: tuple, climb: float) -> bool:
    """The walk's last polygon holds pt (XY inside, surface within a climb step): same floor."""
    return index.inside_xy(p, pt, ENDS_ON_TOL) and abs(index.height(p, pt) - pt[2]) <= climb


def segment_ok(index, walk, polys: list[int], a: tuple, b: tuple, d: float, climb: float) -> bool:
    """Does a straight segment from a (on one of polys) to b walk over the mesh, staying on its floor,
    and keep d from the walls?"""
    for p in polys:
        t, _, visited = walk(p, a, b)
        if t == math.inf and _ends_on(index, visited[-1], b, climb):
            return keeps_clear(index, visited, a, b, d)
    return False


def corridor_corners(graph, corridor: list[int], allowed: Allowed, border, rings: int = CORNER_RINGS):
    """Reflex wall corners, and vertices marked in `border` (a bool per vertex, or None), of the
    corridor's polygons and of `rings` rings of their allowed neighbours."""
    ring = set(corridor)
    region = set(ring)
    offs, nb = graph.offs_l, graph.nb_l
    for _ in range(rings):
        ring = {q for p in ring for q in nb[offs[p] : offs[p + 1]] if q >= 0 and q not in region and allowed[q]}
        region |= ring
    pv, reflex = graph.poly_vertices_l, graph.reflex_l
    found = {v for p in region for v in pv[offs[p] : offs[p + 1]]}
    corners = sorted(v for v in found if reflex[v])
    extra = [] if border is None else sorted(v for v in found if border[v] and not reflex[v])
    return corners, extra


def border_mask(mesh, graph, allowed: list[bool]) -> np.ndarray:
    """A bool per vertex: does it end an edge between an allowed polygon and an excluded one?"""
    ok = np.asarray(allowed, dtype=bool)
    nb = mesh.neighbors
    cut = np.flatnonzero((nb >= 0) & ok[graph.owner] & ~ok[np.maximum(nb, 0)])
    mask = np.zeros(len(mesh.vertices), dtype=bool)
    mask[mesh.poly_vertices[cut]] = True
    mask[graph.nxt[cut]] = True
    return mask


class Admitted:
    """A bool per polygon, computed when read: `test(p)`. The chains with area costs admit a set of
    polygons of their own per query and read only those near the corridor, so a list of every
    polygon would cost time in proportion to the mesh."""

    def __init__(self, test):
        self._test = test

    def __getitem__(self, p: int) -> bool:
        return self._test(p)


# What a chain may cross: a bool per polygon, listed or computed when read.
Allowed = list[bool] | Admitted


class BorderVertices:
    """A bool per vertex, computed when read, as `border_mask` gives for `allowed`: does the vertex
    end an edge between an allowed polygon and an excluded one? Only the polygons around the vertex
    are read."""

    def __init__(self, graph, allowed):
        self.graph, self.allowed = graph, allowed

    def __getitem__(self, v: int) -> bool:
        g, allowed = self.graph, self.allowed
        offs, nb, pv, nxt = g.offs_l, g.nb_l, g.poly_vertices_l, g.nxt_l
        for p in g.vertex_polys[v]:
            if not allowed[p]:
                continue
            for e in range(offs[p], offs[p + 1]):
                q = nb[e]
                if q >= 0 and (pv[e] == v or nxt[e] == v) and not allowed[q]:
                    return True
        return False


def ellipse_vertices(ids: np.ndarray, xy: np.ndarray, a: tuple, b: tuple, length: float, reach: float) -> list[int]:
    """The ids whose points (XY) a chain a -> point -> b could pass within `reach` of and still be
    shorter than `length`: every one a shorter path could bend at."""
    far = np.hypot(xy[:, 0] - a[0], xy[:, 1] - a[1]) + np.hypot(xy[:, 0] - b[0], xy[:, 1] - b[1])
    return ids[far < length + 2.0 * reach].tolist()


def drape(index, walk, points: list[tuple], polys: list[list[int]], climb: float, strict: bool = False):
    """(points, polygon of each) of the chain with points added where the surface under a segment
    leaves the straight line between its ends by more than DRAPE_TOL, so a path follows floors that
    change slope (onto a ramp, over a ridge) instead of cutting through them or hanging in the air.
    The surface under a segment is found exactly: its height where the segment enters each polygon
    and where it crosses into another detail triangle, linear in between. polys: the candidate
    polygons of each point (several where a point is a vertex); each segment walks from the one
    that reaches its end on the same floor; where that floor overlaps the end's own and the two
    differ there by more than DRAPE_TOL, the segment ends on the floor walked and a riser (a point
    above or below the end) joins it to the end. strict: None when a segment does not walk over the
    mesh to its end (else such a segment is drawn as walked)."""
    out_pts, out_polys = [points[0]], [polys[0][0]]
    drape_tol = DRAPE_TOL * index.height_scale
    for k in range(len(points) - 1):
        a, b = points[k], points[k + 1]
        for p in polys[k]:
            crossings: list[float] = []
            t, _, visited = walk(p, a, b, crossings)
            if t == math.inf and _ends_on(index, visited[-1], b, climb):
                break
        else:
            if strict:
                return None
        out_polys[-1] = visited[0]
        # Where two floors overlap seen from above (a ramp's edge over the floor beside it, each
        # outline simplified within the edge error), b may lie on the other one, a climb step from
        # the floor the walk ends on: the segment runs on this floor and a riser steps up or down.
        end_z = b[2] if visited[-1] in polys[k + 1] else index.height(visited[-1], b)
        riser = abs(end_z - b[2]) > drape_tol
        boxes = [index.box_l[p] for p in visited]
        if max(bx[5] for bx in boxes) - min(bx[2] for bx in boxes) > drape_tol:
            (ax, ay), (dx, dy) = a[:2], (b[0] - a[0], b[1] - a[1])
            ts, zs, owner = [0.0], [a[2]], [visited[0]]
            for p, t0, t1 in zip(visited, [0.0, *crossings], [*crossings, 1.0]):
                if t0 >= 1.0:
                    continue
                if index.planar_l[p]:
                    here, heights = [t0], [index.height(p, (ax + t0 * dx, ay + t0 * dy))]
                else:
                    here, heights = index.surface_profile(p, ax, ay, dx, dy, t0, t1)
                if t0 <= 0.0:  # the segment's start is its own height
                    here, heights = here[1:], heights[1:]
                ts += here
                zs += heights
                owner += [p] * len(here)
            ts.append(1.0)
            zs.append(end_z)
            for i in _drape_indices(ts, zs, CHORD_TOL * index.height_scale):
                t = ts[i]
                out_pts.append((a[0] + t * dx, a[1] + t * dy, zs[i]))
                out_polys.append(owner[i])
        if riser:
            out_pts.append((b[0], b[1], end_z))
            out_polys.append(visited[-1])
        out_pts.append(b)
        out_polys.append(_holder(index, polys[k + 1], b) if riser else visited[-1])
    return out_pts, out_polys


def _holder(index, candidates: list[int], b: tuple) -> int:
    """The candidate polygon whose surface at b lies nearest b's height."""
    return min(candidates, key=lambda p: abs(index.height(p, b) - b[2]))


def _drape_indices(t: list[float], z: list[float], tol: float) -> list[int]:
    """Indices (in order, ends excluded) of the height samples (t, z) to keep so the polyline
    through them and both ends stays within tol of every sample (Douglas-Peucker)."""
    keep = []
    stack = [(0, len(t) - 1)]
    while stack:
        i, j = stack.pop()
        if j - i < 2:
            continue  # no sample between them (most spans once the samples are mostly kept)
        worst, m = tol, -1
        ti, zi = t[i], z[i]
        span = t[j] - ti
        slope = (z[j] - zi) / span if span > 0.0 else 0.0
        for k in range(i + 1, j):
            gap = abs(z[k] - zi - (t[k] - ti) * slope)
            if gap > worst:
                worst, m = gap, k
        if m >= 0:
            keep.append(m)
            stack += [(i, m), (m, j)]
    return sorted(keep)
