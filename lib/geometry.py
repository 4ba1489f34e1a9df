"""Plane geometry shared by the stages and the queries: top view (x, y), counter-clockwise positive.

Orientation is `turn` (collinear within COLLINEAR, relative to the edge lengths) or, where exact
signs of float input are wanted (outline crossings), the plain sign of `cross`. Distances come in
numpy form for the stages and in plain-float form for the query's inner loops, where numpy's
per-call cost dominates; the query modules also inline their 2D cross products in hot loops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .components import box_cells, run_positions

# A point seen from above: an array or a tuple whose first two entries are x and y.
Point = np.ndarray | Sequence[float]

# Relative tolerance of orientation tests: |cross| below this times the edge lengths is collinear
# (float noise on coordinates up to a few km, far below any cell).
COLLINEAR = 1e-10
# A vertex is straight when its two edges turn by less than this angle (radians, seen from above):
# it then only costs vertex budget (Detour's 6 per polygon), unless a neighbour needs it.
STRAIGHT_ANGLE = 1e-6
# In-circle tests count a point on the circle as outside, within this fraction of the squared
# distances, so Delaunay flips never loop on four cocircular points.
IN_CIRCLE = 1e-12
# Squared lengths (m², or the products of two) below this count as zero: a segment a nanometre long
# has no direction to project onto.
ZERO_LENGTH_SQ = 1e-18
# Divisors that may be exactly zero (a repeated point, an edge of no length) are floored at this:
# it never changes a real quotient, it only keeps a degenerate one finite.
NONZERO_DIVISOR = 1e-300
# A triangle or polygon whose unit normal has a z at most this stands upright: its height is no
# function of x and y (it has none per column, and no plane to carry a point along).
UPRIGHT_NZ = 1e-9
# Heights computed from modelled coordinates (moved to the level's origin) are off the exact value
# by rounding: a headroom within this (m) of its limit meets it (steps and risers: STEP_NOISE). A
# ceiling exactly agent_height over the floor hid it depending on the slab's thickness.
HEIGHT_NOISE = 1e-9
# A step or riser (m) within this of agent_max_climb is climbed: it is rounding of the level's
# coordinates, not a step. Blender stores vertex coordinates in float32 (relative rounding 6e-8), so
# two pieces of floor modelled at one height come out up to 2 * 6e-8 * |coordinate| apart, about
# 1.2e-5 m 100 m from the origin: 0.1 mm covers that out to some 800 m. With no such tolerance at
# agent_max_climb 0 a seam like that split the floor into islands with a ledge eroded along it
# (Recast snaps heights to its cell_height, a tenth of a metre or so, and joins it). The rounding of
# float64 arithmetic is within it too (a riser of 0.9 m at agent_max_climb 0.9 measured
# 0.9000000000000001 and cut a stair; at agent_max_climb 0 the cells of one ramp met with steps of
# 1e-16). 0.1 mm is far below anything an agent could notice: a real 1 cm riser, a hundred times
# more, still stops an agent that climbs no step.
STEP_NOISE = 1e-4
# Polygons up to this many vertices are measured with plain floats rather than numpy.
SMALL_POLYGON = 32


# --- Rings -------------------------------------------------------------------------------------------
def ring_next(a) -> np.ndarray:
    """Each ring point's successor: the rows of `a` moved up by one, the first last. As
    np.roll(a, -1, axis=0), which costs several times as much on the short rings the stages walk."""
    a = np.asarray(a)
    return np.concatenate((a[1:], a[:1]))


def ring_prev(a) -> np.ndarray:
    """Each ring point's predecessor: the rows of `a` moved down by one, the last first."""
    a = np.asarray(a)
    return np.concatenate((a[-1:], a[:-1]))


def ring_loops(keys: list) -> list[list[int]]:
    """A ring that passes a point more than once (equal keys: vertex ids, rounded coordinates) split
    there into loops that pass each point once, in the ring's direction: each loop as the positions
    of its points in the ring. One pass, closing a loop wherever the ring comes back to a point
    still on the path walked so far."""
    loops: list[list[int]] = []
    stack: list[int] = []
    at: dict = {}
    for i, key in enumerate(keys):
        k = at.get(key)
        if k is None:
            at[key] = len(stack)
            stack.append(i)
            continue
        loops.append(stack[k:])
        for j in stack[k + 1 :]:
            del at[keys[j]]
        del stack[k + 1 :]
    loops.append(stack)
    return loops


def ring_edges_split(ring: np.ndarray, pieces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(points, edge): the ring with its edge k (point k to the next) cut into pieces[k] equal
    parts, and for each point the edge it starts a part of (a point starting an edge's first part
    is the ring's own point k)."""
    edge = np.repeat(np.arange(len(ring)), pieces)
    step = run_positions(pieces)
    t = (step / np.repeat(pieces, pieces))[:, None]
    return ring[edge] * (1 - t) + ring_next(ring)[edge] * t, edge


# --- Orientation -------------------------------------------------------------------------------------
def cross(o: Point, a: Point, b: Point) -> float:
    """(a - o) x (b - o): positive when o -> a -> b turns left."""
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def cross_xy(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> float:
    """Twice the signed area of triangle a, b, c: positive when c lies left of a -> b."""
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def cross_many(o: np.ndarray, a: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Cross products (a - o) x (q - o) of arrays of points (..., 2), broadcast: positive where
    o -> a -> q turns left."""
    return (a[..., 0] - o[..., 0]) * (q[..., 1] - o[..., 1]) - (a[..., 1] - o[..., 1]) * (q[..., 0] - o[..., 0])


def cross_vectors(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Cross products u x v of arrays of vectors (..., 2), broadcast: positive where v is left of u."""
    return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]


def turn(o: Point, a: Point, b: Point) -> int:
    """+1 left turn o->a->b, -1 right turn, 0 collinear (relative tolerance)."""
    c = cross(o, a, b)
    scale = math.hypot(a[0] - o[0], a[1] - o[1]) * math.hypot(b[0] - a[0], b[1] - a[1])
    if abs(c) <= COLLINEAR * scale:
        return 0
    return 1 if c > 0 else -1


def turns_left(o: Point, a: Point, b: Point) -> bool:
    """turn(o, a, b) > 0 with the same arithmetic, cheaper: the lengths are measured only when the
    cross product is positive (hot loops of float tuples)."""
    c = (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    return c > 0 and c > COLLINEAR * (math.hypot(a[0] - o[0], a[1] - o[1]) * math.hypot(b[0] - a[0], b[1] - a[1]))


def is_straight(a, v, b) -> bool:
    """Whether a -> v -> b goes straight on at v (within STRAIGHT_ANGLE), not back."""
    d1x, d1y, d2x, d2y = v[0] - a[0], v[1] - a[1], b[0] - v[0], b[1] - v[1]
    return (
        abs(d1x * d2y - d1y * d2x) <= STRAIGHT_ANGLE * math.hypot(d1x, d1y) * math.hypot(d2x, d2y)
        and d1x * d2x + d1y * d2y > 0
    )


def in_circle(a, b, c, d) -> bool:
    """Is d strictly inside the circumcircle of the CCW triangle abc?"""
    dx, dy = d[0], d[1]
    ax, ay, bx, by, cx, cy = a[0] - dx, a[1] - dy, b[0] - dx, b[1] - dy, c[0] - dx, c[1] - dy
    aw, bw, cw = ax * ax + ay * ay, bx * bx + by * by, cx * cx + cy * cy
    det = ax * (by * cw - bw * cy) - ay * (bx * cw - bw * cx) + aw * (bx * cy - by * cx)
    scale = max(aw, bw, cw) ** 2
    return det > IN_CIRCLE * scale


# --- Areas and widths --------------------------------------------------------------------------------
def ring_contains(ring: np.ndarray, point) -> bool:
    """Even-odd test: whether the xy of point lies inside the ring (rows of x, y, ...; top view)."""
    x, y = float(point[0]), float(point[1])
    a, b = ring[:, :2], ring_next(ring[:, :2])
    straddles = (a[:, 1] > y) != (b[:, 1] > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        cross_x = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
    return bool(np.count_nonzero(straddles & (x < cross_x)) % 2)


def signed_area(pts: np.ndarray) -> float:
    """Area of a polygon (N, 2+) seen from above, positive when counter-clockwise."""
    if len(pts) <= SMALL_POLYGON:  # plain floats beat numpy's per-call cost on small polygons
        p = pts[:, :2].tolist()
        return 0.5 * sum(p[k - 1][0] * p[k][1] - p[k][0] * p[k - 1][1] for k in range(len(p)))
    x, y = pts[:, 0], pts[:, 1]
    return 0.5 * float(np.sum(x * ring_next(y) - ring_next(x) * y))


def min_width(pts) -> float:
    """Least width of a convex polygon: over its edges, the farthest vertex from the edge's line."""
    p = np.asarray(pts, dtype=np.float64)[:, :2].tolist()
    best = math.inf
    for k in range(len(p)):
        (ax, ay), (bx, by) = p[k - 1], p[k]
        length = math.hypot(bx - ax, by - ay)
        if length > 0:
            best = min(best, max(abs((bx - ax) * (y - ay) - (by - ay) * (x - ax)) for x, y in p) / length)
    return best if math.isfinite(best) else 0.0


def narrower_than(pts, width: float) -> bool:
    """min_width(pts) < width, found without measuring every vertex from every edge: an edge is
    dropped at its first vertex `width` or more from its line, and the scan starts across the
    polygon from the edge, where that vertex usually is (O(n) instead of O(n²) for most polygons)."""
    p = np.asarray(pts, dtype=np.float64)[:, :2].tolist()
    n = len(p)
    measured = False
    for k in range(n):
        (ax, ay), (bx, by) = p[k - 1], p[k]
        dx, dy = bx - ax, by - ay
        length = math.hypot(dx, dy)
        if length > 0:
            measured = True
            across = (p[(k + n // 2 + i) % n] for i in range(n))
            if all(abs(dx * (y - ay) - dy * (x - ax)) / length < width for x, y in across):
                return True
    return not measured and 0.0 < width


def convex_hull(xy: np.ndarray) -> np.ndarray:
    """Indices of the convex hull, counter-clockwise, without collinear points (monotone chain)."""
    order = np.lexsort((xy[:, 1], xy[:, 0]))
    pts = xy.tolist()

    def chain(seq):
        out = []
        for i in seq:
            while len(out) >= 2 and cross_xy(*pts[out[-2]], *pts[out[-1]], *pts[i]) <= 0:
                out.pop()
            out.append(i)
        return out

    lower, upper = chain(order.tolist()), chain(order[::-1].tolist())
    return np.array(lower[:-1] + upper[:-1], dtype=np.int64)


# --- Distances ---------------------------------------------------------------------------------------
def distances_to_segment(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Top-view distances of points p (N, 2) to the segment a-b."""
    ab = b - a
    den = float(ab @ ab)
    t = np.clip(((p - a) @ ab) / den, 0.0, 1.0) if den > 0 else np.zeros(len(p))
    return np.hypot(*(p - (a + t[:, None] * ab)).T)


def point_segment_distance(x: np.ndarray, a: np.ndarray, b: np.ndarray):
    """Distance of points x (N, 2) to segments a-b (N, 2), and the parameter (0..1) of the closest point."""
    # By components: the pair arrays of the contours' wall searches make this a hot path.
    abx, aby = b[:, 0] - a[:, 0], b[:, 1] - a[:, 1]
    rx, ry = x[:, 0] - a[:, 0], x[:, 1] - a[:, 1]
    den = abx * abx + aby * aby
    t = np.clip((rx * abx + ry * aby) / np.where(den > 0, den, 1.0), 0.0, 1.0)
    return np.hypot(rx - t * abx, ry - t * aby), t


def in_triangle(a, b, c, q: np.ndarray) -> np.ndarray:
    """(N,) bool: does triangle a, b, c (either winding; points, or (N, 2) one per point) hold each
    point q (N, 2), its sides included?"""
    sides = np.array([cross_many(a, b, q), cross_many(b, c, q), cross_many(c, a, q)])
    return (sides >= 0).all(axis=0) | (sides <= 0).all(axis=0)


def closest_on_triangles(x: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """(N, 2) the point of each triangle tri (N, 3, 2, either winding) nearest to x (N, 2), seen
    from above: x itself inside."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    best, nearest = np.full(len(x), np.inf), np.array(x, dtype=np.float64)
    for u, v in ((a, b), (b, c), (c, a)):
        dist, t = point_segment_distance(x, u, v)
        closer = dist < best
        best[closer], nearest[closer] = dist[closer], (u + t[:, None] * (v - u))[closer]
    return np.where(in_triangle(a, b, c, x)[:, None], x, nearest)


def distance_to_triangles(x: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Top-view distance of points x (N, 2) to triangles tri (N, 3, 2) of either winding: 0 inside.
    The sides are measured for the points outside only (the floor samples asked about lie nearly
    all inside their own floor triangle), a chunk at a time (bounded copies and temporaries)."""
    dist = np.zeros(len(x))
    out = np.flatnonzero(~in_triangle(tri[:, 0], tri[:, 1], tri[:, 2], x))
    for start in range(0, len(out), _OUTSIDE_CHUNK):
        part = out[start : start + _OUTSIDE_CHUNK]
        dist[part] = np.hypot(*(x[part] - closest_on_triangles(x[part], tri[part])).T)
    return dist


# Points outside their triangle distance_to_triangles measures at once.
_OUTSIDE_CHUNK = 1 << 14


def point_line_distance(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance of points x (N, 2) to the lines through a-b (N, 2): how far each bulges from the
    chord a-b, wherever along it; a line with no length has distance 0."""
    ab = b - a
    return np.abs(cross_vectors(ab, x - a)) / np.maximum(np.hypot(*ab.T), NONZERO_DIVISOR)


def point_segment_distance_matrix(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(P, S) 2D distances of points p (P, 2) to segments a-b (S, 2)."""
    ab = b - a
    den = np.maximum(np.einsum("ij,ij->i", ab, ab), NONZERO_DIVISOR)
    rel = p[:, None, :] - a[None, :, :]
    t = np.clip(np.einsum("psk,sk->ps", rel, ab) / den, 0.0, 1.0)
    closest = a[None] + t[..., None] * ab[None]
    return np.hypot(*(p[:, None, :] - closest).transpose(2, 0, 1))


def segment_distance(p, q, a, b):
    """Distance between segments p-q and a-b (N, 2 each), and where along p-q (0..1) it is reached."""
    # The least of the four end-to-segment distances (the first where they tie).
    best, at = point_segment_distance(a, p, q)
    for dist, t in (
        point_segment_distance(b, p, q),
        (point_segment_distance(p, a, b)[0], 0.0),
        (point_segment_distance(q, a, b)[0], 1.0),
    ):
        closer = dist < best
        best, at = np.where(closer, dist, best), np.where(closer, t, at)
    # Segments that cross are 0 apart, at the crossing.
    u, v, w = q - p, b - a, a - p
    den = u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (w[:, 0] * v[:, 1] - w[:, 1] * v[:, 0]) / den
        r = (w[:, 0] * u[:, 1] - w[:, 1] * u[:, 0]) / den
    cross = (den != 0) & (s >= 0) & (s <= 1) & (r >= 0) & (r <= 1)
    return np.where(cross, 0.0, best), np.where(cross, s, at)


def points_to_own_segment_3d(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, S) distances from points[n, s] to the one segment a[n]->b[n]."""
    ab = b - a
    denom = np.maximum(np.einsum("ij,ij->i", ab, ab), ZERO_LENGTH_SQ)
    px, py, pz = (points[..., c] - a[:, c, None] for c in range(3))
    bx, by, bz = (ab[:, c, None] for c in range(3))
    t = np.clip((px * bx + py * by + pz * bz) / denom[:, None], 0.0, 1.0)
    px -= t * bx
    py -= t * by
    pz -= t * bz
    return np.sqrt(px * px + py * py + pz * pz)


def segment_segment_distance_3d(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """(N,) distances between 3D segments a0[n]-a1[n] and b0[n]-b1[n] (endpoint + interior checks)."""
    d = np.minimum.reduce(
        [
            points_to_own_segment_3d(a0[:, None], b0, b1)[:, 0],
            points_to_own_segment_3d(a1[:, None], b0, b1)[:, 0],
            points_to_own_segment_3d(b0[:, None], a0, a1)[:, 0],
            points_to_own_segment_3d(b1[:, None], a0, a1)[:, 0],
        ]
    )
    # Interior-interior closest pair (segments crossing in projection or skew).
    u, v, w = a1 - a0, b1 - b0, a0 - b0
    A, B, C = (u * u).sum(axis=1), (u * v).sum(axis=1), (v * v).sum(axis=1)
    D, E = (u * w).sum(axis=1), (v * w).sum(axis=1)
    den = A * C - B * B
    ok = den > ZERO_LENGTH_SQ
    den = np.where(ok, den, 1.0)
    s, t = (B * E - C * D) / den, (A * E - B * D) / den
    ok &= (s >= 0) & (s <= 1) & (t >= 0) & (t <= 1)
    inner = np.linalg.norm(w + s[:, None] * u - t[:, None] * v, axis=1)
    return np.where(ok, np.minimum(d, inner), d)


def three_points_to_segment_3d(ends: tuple[tuple, tuple, tuple], s: tuple) -> tuple[float, float, float]:
    """3D distances from the three points `ends` to segment s = (ax, ay, az, bx, by, bz), in plain floats."""
    ax, ay, az, bx, by, bz = s
    ux, uy, uz = bx - ax, by - ay, bz - az
    inv = 1.0 / max(ux * ux + uy * uy + uz * uz, ZERO_LENGTH_SQ)
    out = []
    for x, y, z in ends:
        px, py, pz = x - ax, y - ay, z - az
        t = (px * ux + py * uy + pz * uz) * inv
        t = 0.0 if t < 0.0 else 1.0 if t > 1.0 else t
        px, py, pz = px - t * ux, py - t * uy, pz - t * uz
        out.append(math.sqrt(px * px + py * py + pz * pz))
    return out[0], out[1], out[2]


# Plain-float versions for the query's inner loops, where numpy's per-call cost dominates.


def point_segment_xy(px: float, py: float, ax: float, ay: float, ux: float, uy: float) -> tuple[float, float, float]:
    """Distance from (px, py) to the segment from (ax, ay) along (ux, uy), and its nearest point."""
    length2 = ux * ux + uy * uy
    t = 0.0 if length2 <= 0.0 else min(max(((px - ax) * ux + (py - ay) * uy) / length2, 0.0), 1.0)
    qx, qy = ax + t * ux, ay + t * uy
    return math.hypot(px - qx, py - qy), qx, qy


def point_segment_distance_xy(px: float, py: float, ax: float, ay: float, ux: float, uy: float) -> float:
    """point_segment_xy's distance alone, for inner loops where the tuple costs."""
    length2 = ux * ux + uy * uy
    t = 0.0 if length2 <= 0.0 else min(max(((px - ax) * ux + (py - ay) * uy) / length2, 0.0), 1.0)
    return math.hypot(px - ax - t * ux, py - ay - t * uy)


def segment_wall_distance_xy(a: tuple, b: tuple, wall: tuple) -> float:
    """XY distance between segment a-b and a wall (ax, ay, ux, uy) that it does not cross: the least
    of the four end-to-segment distances."""
    ax, ay, ux, uy = wall
    sx, sy = b[0] - a[0], b[1] - a[1]
    return min(
        point_segment_distance_xy(a[0], a[1], ax, ay, ux, uy),
        point_segment_distance_xy(b[0], b[1], ax, ay, ux, uy),
        point_segment_distance_xy(ax, ay, a[0], a[1], sx, sy),
        point_segment_distance_xy(ax + ux, ay + uy, a[0], a[1], sx, sy),
    )


# --- Crossings ---------------------------------------------------------------------------------------
def segments_meet(p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per k: does segment p_k-q_k meet segment a_k-b_k (proper crossing or touching)? Arrays of
    points (K, 2), or one start p (2,) for every k."""
    e, u = b - a, q - p
    d1, d2 = cross_vectors(e, p - a), cross_vectors(e, q - a)
    d3, d4 = cross_vectors(u, a - p), cross_vectors(u, b - p)
    proper = (((d1 > 0) & (d2 < 0)) | ((d1 < 0) & (d2 > 0))) & (((d3 > 0) & (d4 < 0)) | ((d3 < 0) & (d4 > 0)))

    def on(s, t, r, d):
        return (d == 0) & np.all((np.minimum(s, t) <= r) & (r <= np.maximum(s, t)), axis=-1)

    return proper | on(a, b, p, d1) | on(a, b, q, d2) | on(p, q, a, d3) | on(p, q, b, d4)


def segments_meet_matrix(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(A, C): does segment a_i-b_i meet segment c_j-d_j (crossing or touching)?"""

    A, B, C, D = a[:, None], b[:, None], c[None], d[None]
    hit = (np.sign(cross_many(A, B, C)) * np.sign(cross_many(A, B, D)) <= 0) & (
        np.sign(cross_many(C, D, A)) * np.sign(cross_many(C, D, B)) <= 0
    )
    lo1, hi1 = np.minimum(A, B), np.maximum(A, B)
    lo2, hi2 = np.minimum(C, D), np.maximum(C, D)
    return hit & (lo1 <= hi2).all(axis=-1) & (lo2 <= hi1).all(axis=-1)


# --- Box joins ---------------------------------------------------------------------------------------
# A box over more grid cells than this is paired with every box of the other set (a few long walls)
# rather than listed under each cell it covers.
_WIDE_BOX_CELLS = 64
# meeting_boxes' grid has at most this many cells along a side.
_MAX_GRID_SIDE = 4096


def meeting_boxes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i, j): every pair of boxes a_i and b_j (rows of min x, min y, max x, max y) that meet or
    touch, each pair once. Found on a grid: the boxes of b are listed under the cells they cover,
    each box of a looks in its own, and a pair counts in the first cell both cover; so the cost
    follows the pairs that are near each other, not len(a) * len(b). The cell is the geometric mean
    of the two sets' typical box sizes (few cells per box of either set)."""
    empty = np.zeros(0, dtype=np.int64)
    if not len(a) or not len(b):
        return empty, empty
    lo = np.minimum(a[:, :2].min(axis=0), b[:, :2].min(axis=0))
    span = float((np.maximum(a[:, 2:].max(axis=0), b[:, 2:].max(axis=0)) - lo).max())
    typical_a = float(np.median(np.maximum(a[:, 2] - a[:, 0], a[:, 3] - a[:, 1])))
    typical_b = float(np.median(np.maximum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1])))
    cell = max(math.sqrt(typical_a * typical_b), span / _MAX_GRID_SIDE)
    if cell <= 0.0:
        cell = 1.0  # every box a point at one place
    origin = np.tile(lo, 2)
    cells_a = np.floor((a - origin) / cell).astype(np.int64)
    cells_b = np.floor((b - origin) / cell).astype(np.int64)
    columns = int(max(cells_a[:, 2].max(), cells_b[:, 2].max())) + 1
    row_a, key_a, wide_a = _covered_cells(cells_a, columns)
    row_b, key_b, wide_b = _covered_cells(cells_b, columns)
    order = np.argsort(key_b, kind="stable")
    row_b, key_b = row_b[order], key_b[order]
    first = np.searchsorted(key_b, key_a, side="left")
    count = np.searchsorted(key_b, key_a, side="right") - first
    i = np.repeat(row_a, count)
    j = row_b[np.repeat(first, count) + run_positions(count)]
    key = np.repeat(key_a, count)
    first_common = np.maximum(cells_a[i, 1], cells_b[j, 1]) * columns + np.maximum(cells_a[i, 0], cells_b[j, 0])
    i, j = i[key == first_common], j[key == first_common]
    # Wide boxes against every box of the other set (a pair of two wide ones once).
    narrow_a = np.setdiff1d(np.arange(len(a)), wide_a)
    i = np.concatenate([i, np.repeat(wide_a, len(b)), np.tile(narrow_a, len(wide_b))])
    j = np.concatenate([j, np.tile(np.arange(len(b)), len(wide_a)), np.repeat(wide_b, len(narrow_a))])
    meet = (a[i, 0] <= b[j, 2]) & (b[j, 0] <= a[i, 2]) & (a[i, 1] <= b[j, 3]) & (b[j, 1] <= a[i, 3])
    return i[meet], j[meet]


def _covered_cells(cells: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(box, cell key) for every grid cell each box (its cell range, min i, min j, max i, max j)
    covers, and the boxes over _WIDE_BOX_CELLS cells, which are left out of the first two."""
    covered = (cells[:, 2] - cells[:, 0] + 1) * (cells[:, 3] - cells[:, 1] + 1)
    boxes = np.flatnonzero(covered <= _WIDE_BOX_CELLS)
    box, x, y = box_cells(cells[boxes, :2], cells[boxes, 2:])
    return boxes[box], y * columns + x, np.flatnonzero(covered > _WIDE_BOX_CELLS)
