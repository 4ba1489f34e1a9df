"""Ring geometry and repair: crossing and touching edges, splitting a ring into simple loops,
and the containment and meeting tests between rings."""

from __future__ import annotations

import numpy as np

from ..components import run_positions
from ..geometry import (
    cross_many,
    cross_vectors,
    point_segment_distance,
    ring_contains,
    ring_loops,
    ring_next,
    ring_prev,
    segments_meet_matrix,
    signed_area,
)

# Sine of the angle below which two edges count as straight (float noise, not geometry).
_STRAIGHT = 1e-9
# A ring is split at most into this many loops.
_MAX_PIECES = 64
# Two rings are merged only where their edges cross at least this fraction of an edge away from
# the edges' ends (nearer, the crossing is a touch at a corner, and the walk is ambiguous).
_MERGE_EDGE_END = 1e-9


# Outline points of two regions this close (m) are one point (the polygon stage welds closer ones).
_SAME_POINT = 1e-9


def _keys(points: np.ndarray) -> list[tuple]:
    """Per point, its top-view position in units of _SAME_POINT: points of two rings with one key
    are one point."""
    return list(map(tuple, np.round(points[:, :2] / _SAME_POINT).tolist()))


def _dedupe(points: np.ndarray, labels: np.ndarray):
    """Drop points equal in xy to their predecessor (a cell centre exactly at agent_radius, or two
    stacked floors meeting in top view), keeping the one that borders a region if either does."""
    drop = np.zeros(len(points), dtype=bool)
    for i in np.flatnonzero((points[:, :2] == ring_prev(points[:, :2])).all(axis=1)):
        drop[i if labels[i] < 0 or labels[i - 1] >= 0 else i - 1] = True
    if drop.all():
        drop[0] = False
    return points[~drop], labels[~drop]


def _split_at_touches(points: np.ndarray, labels: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split a ring that visits a point twice (to 1e-9 m) into loops that do not touch themselves.

    A region whose parts meet at a corner or along a line the erosion did not open traces one ring
    through the meeting points; split there, it becomes simple outer rings and holes, instead of a
    non-simple ring that would lose the whole region. Zero-area loops (slits) come out as slivers.
    """
    keys = list(map(tuple, np.round(points[:, :2], 9).tolist()))
    return [(points[loop], labels[loop]) for loop in ring_loops(keys) if len(loop) >= 3]


def _touches_itself(ring: np.ndarray) -> bool:
    """Whether the ring visits one point twice (to 1e-9 m, as _split_at_touches splits)."""
    return len(np.unique(np.round(ring[:, :2], 9), axis=0)) < len(ring)


def _split_at_crossings(points: np.ndarray, labels: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split a ring whose edges cross (two cells meeting only at a corner, where the squared-off
    corner points of the two passes overlap) at each crossing into loops that do not, both
    through the crossing point. Overlapping straight edges, which have no single crossing point,
    are left as they are."""
    pieces: list[tuple[np.ndarray, np.ndarray]] = []
    pending = [(points, labels)]
    while pending:
        p, lab = pending.pop()
        first, second = _crossing_pairs(p[:, :2])
        at = _segment_intersection(p, int(first[0]), int(second[0])) if len(first) else None
        if at is None or len(pieces) + len(pending) >= _MAX_PIECES:
            pieces.append((p, lab))
            continue
        i, j = int(first[0]), int(second[0])
        wall = np.array([-1], dtype=labels.dtype)
        pending.append((np.vstack([at, p[i + 1 : j + 1]]), np.concatenate([wall, lab[i + 1 : j + 1]])))
        pending.append((np.vstack([at, p[j + 1 :], p[: i + 1]]), np.concatenate([wall, lab[j + 1 :], lab[: i + 1]])))
    return [(p, lab) for p, lab in pieces if len(p) >= 3]


def _segment_intersection(p: np.ndarray, i: int, j: int) -> np.ndarray | None:
    """The point (3,) where ring edges i and j cross, height taken along edge i; None if parallel."""
    n = len(p)
    a, b, c, d = p[i], p[(i + 1) % n], p[j], p[(j + 1) % n]
    u, v, w = b[:2] - a[:2], d[:2] - c[:2], c[:2] - a[:2]
    den = u[0] * v[1] - u[1] * v[0]
    if abs(den) <= _STRAIGHT * float(np.hypot(*u) * np.hypot(*v)):
        return None
    t = float(np.clip((w[0] * v[1] - w[1] * v[0]) / den, 0.0, 1.0))
    return a + t * (b - a)


def _hole_inside(outer: np.ndarray, hole: np.ndarray) -> bool:
    """Whether a hole lies inside an outer ring, judged at a hole point that is not on the outer
    ring: a loop split off where the ring pinched starts at the pinch point, which is on both."""
    if _boxes_apart(outer, hole):
        return False
    on_outer = {tuple(q) for q in np.round(outer[:, :2], 9).tolist()}
    for point in hole:
        if tuple(np.round(point[:2], 9).tolist()) not in on_outer:
            return ring_contains(outer, point)
    return ring_contains(outer, 0.5 * (hole[0] + hole[1]))


def _crossing_edges(p: np.ndarray) -> np.ndarray:
    """Indices of ring edges (i -> i+1) that cross or touch a non-adjacent edge, or fold back
    onto the next edge (a zero-width spike), with straightness judged to float noise."""
    n = len(p)
    if n < 3:
        return np.zeros(0, dtype=np.int64)
    edge = ring_next(p) - p
    after = ring_next(edge)
    turn = cross_vectors(edge, after)
    scale = np.hypot(*edge.T) * np.hypot(*after.T)
    folds = np.flatnonzero((np.abs(turn) <= _STRAIGHT * scale) & (np.einsum("ij,ij->i", edge, after) < 0))
    i, j = _crossing_pairs(p)
    return np.unique(np.concatenate([i, j, folds, (folds + 1) % n]))


def _crossing_pairs(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i, j), i < j, sorted: the pairs of non-adjacent ring edges that cross or touch, with
    straightness judged to float noise."""
    n = len(p)
    if n < 4:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    a, b = p[:, :2], ring_next(p[:, :2])
    i, j = _overlapping_boxes(np.minimum(a, b), np.maximum(a, b))
    i, j = np.minimum(i, j), np.maximum(i, j)
    apart = (j - i > 1) & (j - i != n - 1)
    i, j = i[apart], j[apart]

    def orient(o, u, v):
        cross = cross_many(o, u, v)
        size = np.hypot(*(u - o).T) * np.hypot(*(v - o).T)
        return np.where(np.abs(cross) <= _STRAIGHT * size, 0.0, np.sign(cross))

    o1, o2 = orient(a[i], b[i], a[j]), orient(a[i], b[i], b[j])
    o3, o4 = orient(a[j], b[j], a[i]), orient(a[j], b[j], b[i])
    # Collinear, non-overlapping pairs pass the sign test too; the boxes of the pairs overlap.
    hit = np.flatnonzero((o1 * o2 <= 0) & (o3 * o4 <= 0))
    hit = hit[np.lexsort((j[hit], i[hit]))]  # in ring order, as callers split at the first
    return i[hit], j[hit]


def _overlapping_boxes(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i, j): every pair of boxes (lo, hi: (N, 2)) that overlap or touch, each pair once. A sweep
    along x: each box meets only the boxes that start before it ends, not all N² pairs."""
    order = np.argsort(lo[:, 0], kind="stable")
    start = lo[order, 0]
    count = np.searchsorted(start, hi[order, 0], side="right") - np.arange(1, len(order) + 1)
    count = np.maximum(count, 0)
    first = np.repeat(np.arange(len(order)), count)
    second = first + 1 + run_positions(count)
    i, j = order[first], order[second]
    keep = (lo[i, 1] <= hi[j, 1]) & (lo[j, 1] <= hi[i, 1])
    return i[keep], j[keep]


def _points_near_edges(xy: np.ndarray, nxt: np.ndarray, reach: float, apart_only: bool = False):
    """(point k, edge k' -> nxt[k'], distance) for ring points near edges that do not end at them:
    each pair of edges whose boxes, grown by `reach`, meet gives its ends against the other edge
    (a sweep, not all pairs; a pair may come twice). apart_only: skip pairs of consecutive edges.
    xy: the points of one or more rings; nxt: each point's successor on its ring."""
    a, b = xy, xy[nxt]
    i, j = _overlapping_boxes(np.minimum(a, b) - reach, np.maximum(a, b) + reach)
    if apart_only:
        keep = (nxt[i] != j) & (nxt[j] != i)
        i, j = i[keep], j[keep]
    k = np.concatenate([j, nxt[j], i, nxt[i]])
    e = np.concatenate([i, i, j, j])
    own = (k != e) & (k != nxt[e])
    k, e = k[own], e[own]
    return k, e, point_segment_distance(a[k], a[e], b[e])[0]


def _boxes_apart(ring: np.ndarray, other: np.ndarray) -> bool:
    """Whether two rings' top-view bounding boxes do not even touch (so their edges cannot meet)."""
    lo1, hi1 = ring[:, :2].min(axis=0), ring[:, :2].max(axis=0)
    lo2, hi2 = other[:, :2].min(axis=0), other[:, :2].max(axis=0)
    return bool((lo1 > hi2).any() or (lo2 > hi1).any())


def _crossing_rings(ring: np.ndarray, other: np.ndarray) -> bool:
    """Whether an edge of ring meets an edge of other."""
    if _boxes_apart(ring, other):
        return False
    a, b = ring[:, :2], ring_next(ring[:, :2])
    c, d = other[:, :2], ring_next(other[:, :2])
    return bool(segments_meet_matrix(a, b, c, d).any())


def _box(ring: np.ndarray) -> np.ndarray:
    """Top-view bounding box (min x, min y, max x, max y)."""
    return np.concatenate([ring[:, :2].min(axis=0), ring[:, :2].max(axis=0)])


def _merge_rings(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The outline of the floor left of both of two crossing rings (the walkable side of each):
    two clockwise holes give the outline of their union, a counter-clockwise outer ring and a hole
    give the outer ring with the hole cut out of it. Walked along a from a point on b's walkable
    side, switching rings at every crossing. Floor the two enclose together apart from that outline
    (a pocket between two holes) is left out, which is conservative; an outer ring the hole splits
    in pieces gives None, as do rings that only touch, overlap along a line or do not cross."""
    n, m = len(a), len(b)
    p, q = a[:, :2], ring_next(a[:, :2])
    r, s = b[:, :2], ring_next(b[:, :2])
    u, v = q - p, s - r
    den = u[:, None, 0] * v[None, :, 1] - u[:, None, 1] * v[None, :, 0]
    w = r[None] - p[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[..., 0] * v[None, :, 1] - w[..., 1] * v[None, :, 0]) / den
        k = (w[..., 0] * u[:, None, 1] - w[..., 1] * u[:, None, 0]) / den
    meet = segments_meet_matrix(p, q, r, s)
    inner = (t > _MERGE_EDGE_END) & (t < 1 - _MERGE_EDGE_END) & (k > _MERGE_EDGE_END) & (k < 1 - _MERGE_EDGE_END)
    if not (meet & inner).any() or (meet & ~inner).any():
        return None
    i, j = np.nonzero(meet)
    crossings = [a[e] + f * (a[(e + 1) % n] - a[e]) for e, f in zip(i.tolist(), t[i, j].tolist())]
    # Each ring's walk: its corners and crossings in order, as (position along the ring, crossing
    # number or -1), and where in the other ring's walk each crossing is.
    walks = (
        sorted([(float(e), -1) for e in range(n)] + [(e + f, c) for c, (e, f) in enumerate(zip(i, t[i, j]))]),
        sorted([(float(e), -1) for e in range(m)] + [(e + f, c) for c, (e, f) in enumerate(zip(j, k[i, j]))]),
    )
    rings = (a, b)
    slot = [{c: x for x, (_, c) in enumerate(walk) if c >= 0} for walk in walks]
    outer = signed_area(a) > 0 or signed_area(b) > 0
    b_walkable_inside = signed_area(b) > 0
    for start, (pos, c) in enumerate(walks[0]):
        if c >= 0 or ring_contains(b, a[int(pos)]) != b_walkable_inside:
            continue
        out, seen, side, x = [], set(), 0, start
        for _ in range(n + m + 2 * len(crossings)):
            pos, c = walks[side][x]
            out.append(crossings[c] if c >= 0 else rings[side][int(pos)])
            if c >= 0:
                seen.add(c)
                side = 1 - side
                x = slot[side][c]
            x = (x + 1) % len(walks[side])
            if side == 0 and x == start:
                break
        else:
            return None
        loop = np.array(out)
        if (signed_area(loop) > 0) != outer:
            continue  # a pocket between two holes: the union's outline passes elsewhere
        return loop if not outer or len(seen) == len(crossings) else None
    return None


def _cut_necks(
    ring: np.ndarray, nb: np.ndarray, neck: float, min_area: float, others: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """(ring, neighbours) without the lobes of floor it holds by a neck narrower than `neck`: where
    a point comes that close to a wall edge of the ring that is not its own, the ring splits there
    into two loops, and a loop of floor (counter-clockwise) bounded by walls only, smaller than
    min_area (and than the rest, in the outer ring) and clear of the region's other rings
    (`others`) is dropped, if the rest is a simple ring: floor given up, as a region under min_area
    is. Polygons across such a neck would be needles or slivers. Two larger parts stay joined: the
    neck can be a passage the outline keeps open, narrowed by the push off the walls."""
    for _ in range(len(ring)):
        rest = _first_neck(ring, nb, neck, min_area, others)
        if rest is None:
            break
        ring, nb = rest
    return ring, nb


def _first_neck(ring: np.ndarray, nb: np.ndarray, neck: float, min_area: float, others: list[np.ndarray]):
    """(ring, neighbours) with the first lobe _cut_necks drops cut off, or None."""
    n = len(ring)
    if n < 6:
        return None
    nxt = (np.arange(n) + 1) % n
    k, e, dist = _points_near_edges(ring[:, :2], nxt, neck, apart_only=True)
    close = (nb[e] < 0) & (dist < neck)
    if not close.any():
        return None
    outer = signed_area(ring) > 0
    for point, edge in sorted(set(zip(k[close].tolist(), e[close].tolist()))):
        # Loop one runs from the edge's end to the point, loop two from the point to the edge's start;
        # the edge closing each runs along the cut wall edge.
        loops = (
            np.arange(edge + 1, edge + 1 + (point - edge - 1) % n + 1) % n,
            np.arange(point, point + (edge - point) % n + 1) % n,
        )
        if min(len(loop) for loop in loops) < 3:
            continue
        pieces = [(ring[loop], np.r_[nb[loop[:-1]], -1]) for loop in loops]
        areas = [signed_area(piece) for piece, _ in pieces]
        for lobe, rest in ((0, 1), (1, 0)):
            if (
                0 < areas[lobe] < min_area
                and (nb[loops[lobe][:-1]] < 0).all()
                and (not outer or areas[lobe] <= areas[rest])
                and all(_boxes_apart(pieces[lobe][0], other) for other in others if len(other))
                and not _crossing_edges(pieces[rest][0][:, :2]).size
            ):
                return pieces[rest]
    return None
