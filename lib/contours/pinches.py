"""Pinches widened: a point of a region's outline that comes within a fraction of a cell of an
edge not its own is moved away from that edge, as far as the agent's band allows.

The outline is traced from eroded cells and pushed off the walls, so where an obstacle's corner
nears a wall it can leave a passage a centimetre wide that is really a decimetre wide. Any
decomposition of the long strip of floor between such a pinch and the wall is a needle; moving the
pinching point to where the band really is gives the strip the width the level has.
"""

from __future__ import annotations

import numpy as np

from ..boundary import FloorBoundary
from ..geometry import cross_vectors, point_segment_distance, ring_loops, segment_distance, signed_area
from .rings import _points_near_edges

# A point closer than this many cells to an edge that is not its own pinches the outline.
_PINCH = 0.25
# A pinch is widened to this many cells where the band allows, or else as far as it allows: a
# point tries _TRIES ever shorter moves, each _STEP times the last (a needle's fatness is its width
# over its length, so along a long wall every millimetre counts).
_GOAL = 0.5
_TRIES = 12
_STEP = 0.7
# A pinch left narrower than this many cells between a point and an end of the edge it nears is
# closed: the point is put on that end, so the ring touches itself there (one vertex to the polygon
# stage), rather than leaving a gap micrometres wide that any triangulation crosses with needles.
_TOUCH = 1e-3


def widen_pinches(
    rings: list[np.ndarray], neighbours: list[np.ndarray], boundary: FloorBoundary, reach: float
) -> list[np.ndarray]:
    """The region's rings with each pinch widened: the pinching point moved off the edge it nears,
    and if that is not enough, the edge's ends moved off the point. Only points whose two edges are
    walls move (a point on a shared border stays, bit for bit), and only where their moved edges
    keep `reach` from the floor's boundary and come no closer to any other edge of the region, and
    the ring keeps its turning direction (a thin hole's point may not cross its other edge). A point
    left within _TOUCH cells of an end of the edge it nears is put on that end."""
    if not rings:
        return rings
    sizes = [len(ring) for ring in rings]
    starts = np.cumsum([0] + sizes[:-1])
    points = np.concatenate(rings).astype(np.float64, copy=True)
    nb = np.concatenate(neighbours)
    index = np.arange(len(points))
    ring_of = np.repeat(np.arange(len(rings)), sizes)
    first, size = starts[ring_of], np.asarray(sizes)[ring_of]
    nxt = first + (index - first + 1) % size
    prv = first + (index - first - 1) % size
    free = (nb < 0) & (nb[prv] < 0)
    goal = _GOAL * boundary.cs
    areas = [signed_area(ring) for ring in rings]
    for k, e in _pinches(points[:, :2], nxt, prv, free, _PINCH * boundary.cs):
        xy = points[:, :2]
        dist, t = point_segment_distance(xy[[k]], xy[[e]], xy[[nxt[e]]])
        away = (xy[k] - xy[e] - t[0] * (xy[nxt[e]] - xy[e])) / dist[0]
        _move(points, nxt, prv, areas, ring_of[k], k, away, goal - dist[0], boundary, reach)
        for end in (e, nxt[e]):
            dist = point_segment_distance(xy[[k]], xy[[e]], xy[[nxt[e]]])[0]
            if dist[0] < goal and free[end]:
                _move(points, nxt, prv, areas, ring_of[end], end, -away, goal - dist[0], boundary, reach)
    touch = _TOUCH * boundary.cs
    for k, e in _pinches(points[:, :2], nxt, prv, free, touch):
        gaps = np.hypot(*(points[[e, nxt[e]], :2] - points[k, :2]).T)
        if gaps.min() < touch:
            end = (e, nxt[e])[int(np.argmin(gaps))]
            ring = ring_of[k]
            if ring_of[end] == ring and areas[ring] < 0:
                # A hole touching itself may only close off pockets of floor (dropped_pockets):
                # where it would touch itself as two holes, the polygon stage replaced it by its
                # convex hull; the polygon stage closes such a pinch itself.
                closed = points[starts[ring] : starts[ring] + sizes[ring]].copy()
                closed[k - starts[ring]] = points[end]
                if sum(signed_area(closed[loop]) < 0 for loop in _loops(closed)) != 1:
                    continue
            points[k] = points[end]
    return [points[s : s + n] for s, n in zip(starts, sizes)]


def dropped_pockets(ring: np.ndarray, nb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ring, neighbours): a hole that touches itself (widen_pinches closing the mouth of a pocket of
    floor in it) as its one loop that turns its way, the pockets dropped: the polygon stage takes
    no hole touching itself (steep hills: it replaced two such holes by their convex hulls). Other
    rings as they are."""
    if len(ring) < 4 or signed_area(ring) >= 0:
        return ring, nb
    loops = _loops(ring)
    kept = [loop for loop in loops if len(loop) >= 3 and signed_area(ring[loop]) < 0]
    if len(loops) == 1 or len(kept) != 1:
        return ring, nb
    loop = np.asarray(kept[0])
    # The edge leaving a loop's point is the ring's edge leaving it, or, where the loop jumps past
    # a pocket, the edge into its next point (the pocket's mouth, one point visited twice).
    after = np.roll(loop, -1)
    same = (ring[(loop + 1) % len(ring), :2] == ring[after, :2]).all(axis=1)
    return ring[loop], nb[np.where(same, loop, (after - 1) % len(ring))]


def _loops(ring: np.ndarray) -> list[list[int]]:
    """The ring split into loops where it passes one point twice (to 1e-9 m)."""
    return ring_loops(list(map(tuple, np.round(ring[:, :2], 9).tolist())))


def _pinches(xy: np.ndarray, nxt: np.ndarray, prv: np.ndarray, free: np.ndarray, pinch: float):
    """(point, edge) pairs, closest first, one per free point: the point within `pinch` (and not on)
    the edge across floor, which is not one of its own (a neighbour's next edge counts: a sharp
    corner pinches the floor as well)."""
    k, e, dist = _points_near_edges(xy, nxt, pinch)
    keep = free[k]
    k, e, dist = k[keep], e[keep], dist[keep]
    a, b = xy, xy[nxt]
    # Floor lies left of every ring edge: a point on the edge's right faces it across a notch of
    # no floor (two sides of a thin obstacle's band), which moving the point would only widen.
    ab, ak = b[e] - a[e], a[k] - a[e]
    floor_between = cross_vectors(ab, ak) > 0
    close = (dist < pinch) & (dist > 0) & floor_between
    k, e, dist = k[close], e[close], dist[close]
    order = np.lexsort((e, k, dist))
    seen: set[int] = set()
    pairs = []
    for point, edge in zip(k[order].tolist(), e[order].tolist()):
        if point not in seen:
            seen.add(point)
            pairs.append((point, edge))
    return pairs


def _move(
    points,
    nxt,
    prv,
    areas: list[float],
    ring: int,
    k: int,
    direction: np.ndarray,
    shift: float,
    boundary: FloorBoundary,
    reach: float,
):
    """Move point k (in place) along `direction` by `shift`, or by the largest of _TRIES shorter
    steps (each _STEP times the last) that keeps its two edges `reach` from the floor's boundary
    and no closer to the region's other edges than they were, and leaves the signed area of its
    ring (areas[ring], kept up to date) of the same sign."""
    xy = points[:, :2]
    p = xy[k].copy()
    ends = np.array([prv[k], nxt[k]])
    others = np.flatnonzero((np.arange(len(xy)) != prv[k]) & (np.arange(len(xy)) != k))
    before = _clearance(xy, nxt, others, ends, p)
    # Every try's two edges in one measure, from the moved point: into it (reversed) and out of it.
    moved = p + (shift * _STEP ** np.arange(_TRIES))[:, None] * direction
    starts = np.repeat(moved, 2, axis=0)
    clear = boundary.distance(
        starts, xy[np.tile(ends, _TRIES)], np.full(2 * _TRIES, points[k, 2]), points[np.tile(ends, _TRIES), 2]
    )[0]
    # Moving k by d changes its ring's area by cross(d, next - previous) / 2.
    after = areas[ring] + 0.5 * cross_vectors(moved - p, xy[nxt[k]] - xy[prv[k]])
    for at, ok, area in zip(moved, (clear >= reach).reshape(-1, 2).all(axis=1), after.tolist()):
        if ok and area * areas[ring] > 0 and _clearance(xy, nxt, others, ends, at) >= before:
            areas[ring] = area
            points[k, :2] = at
            return


def _clearance(xy: np.ndarray, nxt: np.ndarray, others: np.ndarray, ends: np.ndarray, p: np.ndarray) -> float:
    """Least distance from the two edges p-ends[0] and p-ends[1] to the region's edges `others`
    that share no point with them (0 when one crosses)."""
    least = np.inf
    for end in ends:
        mine = others[(others != end) & (nxt[others] != end)]
        if len(mine):
            a = np.repeat(p[None], len(mine), 0)
            b = np.repeat(xy[end][None], len(mine), 0)
            least = min(least, float(segment_distance(a, b, xy[mine], xy[nxt[mine]])[0].min()))
    return least
