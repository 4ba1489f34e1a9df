"""Polygons and detail triangles clipped at tile borders, in Detour's Y-up frame (x, z), and the
labels their edges carry while the tiles are built."""

from __future__ import annotations

import math

import numpy as np

from ..components import run_positions
from ..geometry import NONZERO_DIVISOR, signed_area
from .format import VERTS_PER_POLYGON

# Points closer than this (m) are one point; detail edges this close to a polygon edge lie on it.
WELD = 1e-6


ON_EDGE = 1e-4


# A piece's corner turning by less than this (sine of the angle) is flat: `_split_at_flat_corners`.
MIN_TURN = 1e-3


# Clipped pieces with less area than this (m²) are dropped: a polygon only touching a tile.
MIN_PIECE_AREA = 1e-8


# Detail triangle fragments with less area than this (m²) are slivers of a clip: left out.
MIN_FRAGMENT_AREA = 1e-11
# A detail triangle whose top-view determinant is below this (m²) stands upright: it gives no
# height at a point seen from above.
_UPRIGHT_DET = 1e-15


# Edge labels while tiles are built: >= 0 an original edge slot, _BORDER - side an edge cut along a
# tile border, _SPLIT - k the diagonal that split clipped piece k in two, _NO_EDGE padding.
_NO_EDGE = -(1 << 40)


_BORDER = -1


_SPLIT = -100


# After resolving: >= 0 a neighbour (index in the tile), _WALL, or _PORTAL - side.
_WALL = -1


_PORTAL = -10


def _clip_to_plane(points: list, labels: list, axis: int, value: float, keep_below: bool, cut_label: int):
    """Sutherland-Hodgman: the convex polygon's part on one side of the plane coordinate[axis] = value.
    Points are (x, y, z) tuples; edge k runs from point k with labels[k]; the new edge along the plane
    gets cut_label."""

    def inside(q):
        return q[axis] <= value if keep_below else q[axis] >= value

    out_points: list = []
    out_labels: list = []
    n = len(points)
    for k in range(n):
        a, b = points[k], points[(k + 1) % n]
        a_in, b_in = inside(a), inside(b)
        if a_in:
            _append(out_points, out_labels, a, labels[k])
        if a_in != b_in:
            _append(out_points, out_labels, _crossing(a, b, axis, value), cut_label if a_in else labels[k])
    if len(out_points) > 1 and math.dist(out_points[-1], out_points[0]) < WELD:
        out_points.pop()
        out_labels.pop()
    return out_points, out_labels


def clip_to_boxes(
    points: np.ndarray, counts: np.ndarray, labels: np.ndarray, boxes: np.ndarray, sides: np.ndarray
) -> list[tuple[np.ndarray, list[int]] | None]:
    """`_clip_to_plane` at the four sides of a box, for many convex polygons at once: polygon r
    (points[r][: counts[r]] (R, M, 3), edge labels labels[r] (R, M)) cut to boxes[r] = (x0, z0, x1,
    z1), the new edges along its sides labelled sides[r] (R, 4: x0, x1, z0, z1). Per polygon its
    corners (n, 3) and edge labels, or None when fewer than three corners are left. A polygon with
    two corners within 2 WELD of each other at some step is cut by `_clip_to_plane` itself, which
    merges such corners one at a time as it adds them."""
    cut, cut_labels, cut_counts = points, labels, counts
    one_by_one = np.zeros(len(points), dtype=bool)
    for side, (axis, keep_below, column) in enumerate(((0, False, 0), (0, True, 2), (2, False, 1), (2, True, 3))):
        cut, cut_labels, cut_counts, near = _box_side(
            cut, cut_labels, cut_counts, axis, boxes[:, column], keep_below, sides[:, side]
        )
        one_by_one |= near & (cut_counts >= 3)
        cut_counts = np.where(cut_counts < 3, 0, cut_counts)
    out: list[tuple[np.ndarray, list[int]] | None] = []
    for r, n in enumerate(cut_counts.tolist()):
        if one_by_one[r]:
            out.append(_clip_to_box(points[r, : counts[r]], labels[r, : counts[r]], boxes[r], sides[r]))
        else:
            out.append((cut[r, :n], cut_labels[r, :n].tolist()) if n >= 3 else None)
    return out


def cuts_along_own_edges(
    points: np.ndarray, counts: np.ndarray, labels: np.ndarray, cut: list[tuple[np.ndarray, list[int]] | None]
) -> None:
    """Give back to each edge `clip_to_boxes` cut along a box side its polygon's own edge lying
    there: a cut edge of cut[r] (its label negative) whose two ends lie within WELD of edge k of
    polygon r (points[r][: counts[r]], labels[r]) seen from above is that edge and gets labels[r][k],
    in place. A box side through a polygon's edge (to rounding: a wall 1e-15 m outside the box) cuts
    off nothing but that edge, so there is nothing across it the cut's label would link to (a tile
    border cut is a portal, an inner cut the neighbour of the polygon's piece beyond)."""
    rows, slots, ends = [], [], []
    for r, one in enumerate(cut):
        if one is None:
            continue
        corners, edge_labels = one
        for k, label in enumerate(edge_labels):
            if label < 0:
                rows.append(r)
                slots.append(k)
                ends.append((corners[k], corners[(k + 1) % len(corners)]))
    if not rows:
        return
    row = np.array(rows)
    ab = np.array(ends)[..., [0, 2]]  # (E, 2 ends, 2)
    ring = points[row][..., [0, 2]]
    used, edge, _ = ring_edges(ring, counts[row])
    rel = ab[:, :, None, :] - ring[:, None, :, :]  # (E, 2 ends, M edges, 2)
    length2 = np.maximum((edge**2).sum(axis=-1), NONZERO_DIVISOR)[:, None, :]
    along = np.clip((rel * edge[:, None]).sum(axis=-1) / length2, 0.0, 1.0)
    gap = np.hypot(*(rel - along[..., None] * edge[:, None]).transpose(3, 0, 1, 2))
    on = np.all(gap < WELD, axis=1) & used
    for e in np.flatnonzero(on.any(axis=1)).tolist():
        cut[rows[e]][1][slots[e]] = int(labels[rows[e], int(np.argmax(on[e]))])


def _clip_to_box(points: np.ndarray, labels: np.ndarray, box: np.ndarray, sides: np.ndarray):
    """`clip_to_boxes` for one polygon, a plane at a time by `_clip_to_plane`."""
    corners, edge_labels = [tuple(q) for q in points.tolist()], labels.tolist()
    x0, z0, x1, z1 = box
    for (axis, value, keep_below), label in zip(((0, x0, False), (0, x1, True), (2, z0, False), (2, z1, True)), sides):
        corners, edge_labels = _clip_to_plane(corners, edge_labels, axis, value, keep_below, int(label))
        if len(corners) < 3:
            return None
    return np.array(corners), edge_labels


def _box_side(points, labels, counts, axis: int, value: np.ndarray, keep_below: bool, cut: np.ndarray):
    """One step of `clip_to_boxes` (as `_clip_to_plane`, corners in turn and each crossing after
    its corner), and per polygon whether two of its corners lie within 2 WELD of each other."""
    rows, width = points.shape[:2]
    idx = np.arange(width)
    valid = idx < counts[:, None]
    nxt = np.where(idx + 1 < counts[:, None], idx + 1, 0)
    after = np.take_along_axis(points, nxt[:, :, None], axis=1)
    here = points[..., axis] <= value[:, None] if keep_below else points[..., axis] >= value[:, None]
    crosses = valid & (here != np.take_along_axis(here, nxt, axis=1))
    # The crossing from the edge's ends taken in a fixed order, as `_crossing`.
    swap = _less(after, points)[..., None]
    lo, hi = np.where(swap, after, points), np.where(swap, points, after)
    run = hi[..., axis] - lo[..., axis]
    t = np.divide(value[:, None] - lo[..., axis], run, out=np.zeros_like(run), where=crosses)
    meet = lo + t[..., None] * (hi - lo)
    meet[..., axis] = value[:, None]
    seq = np.stack([points, meet], axis=2).reshape(rows, 2 * width, 3)
    seq_labels = np.stack([labels, np.where(here, cut[:, None], labels)], axis=2).reshape(rows, 2 * width)
    emit = np.stack([valid & here, crosses], axis=2).reshape(rows, 2 * width)
    order, count = _to_front(emit)
    seq, seq_labels = np.take_along_axis(seq, order[:, :, None], axis=1), np.take_along_axis(seq_labels, order, axis=1)
    gap = np.sqrt(((seq[:, 1:] - seq[:, :-1]) ** 2).sum(axis=2))
    near = np.any((gap <= 2.0 * WELD) & (np.arange(1, seq.shape[1]) < count[:, None]), axis=1)
    last = seq[np.arange(rows), np.maximum(count - 1, 0)]
    near |= (count > 1) & (np.sqrt(((last - seq[:, 0]) ** 2).sum(axis=1)) <= 2.0 * WELD)
    return seq, seq_labels, count, near


def _less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a < b for points (..., 3) compared as tuples (x first, then y, then z)."""
    return (a[..., 0] < b[..., 0]) | (
        (a[..., 0] == b[..., 0]) & ((a[..., 1] < b[..., 1]) | ((a[..., 1] == b[..., 1]) & (a[..., 2] < b[..., 2])))
    )


def _append(points: list, labels: list, point: tuple, label: int) -> None:
    """Add a corner; one that repeats the previous corner replaces that corner's outgoing edge label."""
    if points and math.dist(points[-1], point) < WELD:
        labels[-1] = label
        return
    points.append(point)
    labels.append(label)


def _crossing(a: tuple, b: tuple, axis: int, value: float) -> tuple:
    """Where segment a-b meets the plane, computed from its ends in a fixed order so the two polygons
    sharing the edge get the same point."""
    if b < a:
        a, b = b, a
    t = (value - a[axis]) / (b[axis] - a[axis])
    point = [a[i] + t * (b[i] - a[i]) for i in range(3)]
    point[axis] = value
    return tuple(point)


def flat_corners(rings: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(K, M) which corners of rings[k][: counts[k]] ((K, M, 2), seen from above) turn by less than
    MIN_TURN (the sine of the angle between the edges in and out)."""
    used, edge, _ = ring_edges(rings, counts)
    last = np.maximum(counts - 1, 0)[:, None]
    slot = np.arange(rings.shape[1])
    before = np.take_along_axis(edge, np.where(slot == 0, last, slot - 1)[:, :, None], axis=1)
    length = np.hypot(edge[..., 0], edge[..., 1]) * np.hypot(before[..., 0], before[..., 1])
    turn = (before[..., 0] * edge[..., 1] - before[..., 1] * edge[..., 0]) / np.maximum(length, NONZERO_DIVISOR)
    return used & (np.abs(turn) < MIN_TURN)


def _split_at_flat_corners(points: np.ndarray, labels: list, split_ids) -> list:
    """A convex polygon as convex pieces none of which has a flat corner (turning by less than
    MIN_TURN): each such corner is split along the diagonal from it nearest square to its edges, so
    it is a corner of both sides. A flat corner is where a neighbour's corner meets a straight edge;
    in float32 it may turn either way, and Detour's raycast, along that edge, then loops around it
    or stops. Edge labels as `_split_to_hexagons`."""
    n = len(points)
    xz = points[:, [0, 2]]
    edge = np.roll(xz, -1, axis=0) - xz
    length = np.maximum(np.hypot(edge[:, 0], edge[:, 1]), NONZERO_DIVISOR)
    flat = np.flatnonzero(flat_corners(xz[None], np.array([n]))[0])
    if n <= 3 or not len(flat):
        return [(points, list(labels))]
    f = int(flat[0])
    others = (f + np.arange(2, n - 1)) % n
    diagonal = xz[others] - xz[f]
    square = np.abs(diagonal[:, 0] * edge[f, 1] - diagonal[:, 1] * edge[f, 0]) / (
        np.maximum(np.hypot(diagonal[:, 0], diagonal[:, 1]), NONZERO_DIVISOR) * length[f]
    )
    t = int(others[np.argmax(square)])
    label = _SPLIT - next(split_ids)
    ring, ring_labels = np.roll(points, -f, axis=0), list(labels[f:]) + list(labels[:f])
    k = (t - f) % n
    first = _split_at_flat_corners(ring[: k + 1], ring_labels[:k] + [label], split_ids)
    second = _split_at_flat_corners(np.concatenate([ring[k:], ring[:1]]), ring_labels[k:] + [label], split_ids)
    return first + second


def _split_to_hexagons(points: np.ndarray, labels: list, split_ids) -> list:
    """A convex polygon as convex pieces of at most six corners (split along diagonals; a clip can
    add up to four corners), each with its edge labels; the two sides of a diagonal share a label."""
    if len(points) <= VERTS_PER_POLYGON:
        return [(points, list(labels))]
    k = len(points) // 2
    diagonal = _SPLIT - next(split_ids)
    first = _split_to_hexagons(points[: k + 1], list(labels[:k]) + [diagonal], split_ids)
    second = _split_to_hexagons(np.concatenate([points[k:], points[:1]]), list(labels[k:]) + [diagonal], split_ids)
    return first + second


# Triangle-piece pairs clipped at once by `clip_to_pieces` (bounds its temporaries).
_PAIRS_PER_CHUNK = 1 << 15


def clip_to_pieces(
    tris: np.ndarray, corners: np.ndarray, counts: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each pair (triangle i, piece k) of `pairs`: triangle tris[i] ((T, 3, 3)) cut to the convex
    piece corners[k][: counts[k]] ((K, 6, 3)) seen from above, heights on the triangle's plane, as
    fan triangles. Returns them (F, 3, 3), the pair each came from (F,) and whether it is the
    triangle whole (F,), in order of pair. A triangle wholly inside is itself; one wholly outside,
    or left with less than MIN_FRAGMENT_AREA, gives nothing; all to WELD. Every pair at once
    (Sutherland-Hodgman on padded rows), a chunk at a time: a triangle at a time in Python, it was
    most of an export's time."""
    out: list = [(np.zeros((0, 3, 3)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))]
    for lo in range(0, len(pairs[0]), _PAIRS_PER_CHUNK):
        tri, piece = pairs[0][lo : lo + _PAIRS_PER_CHUNK], pairs[1][lo : lo + _PAIRS_PER_CHUNK]
        fan, pair, whole = _clip_chunk(tris[tri], corners[piece], counts[piece])
        out.append((fan, pair + lo, whole))
    fans, pair, whole = (np.concatenate(parts) for parts in zip(*out))
    return fans, pair, whole


def ring_edges(ring: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rings ring[k][: counts[k]] ((K, M, 2), seen from above): which slots are corners (K, M),
    each corner's edge to the next (K, M, 2) and twice the signed area (K,), the corners' cross
    products summed in turn."""
    width = ring.shape[1]
    used = np.arange(width) < counts[:, None]
    ahead = np.take_along_axis(
        ring, np.where(np.arange(width) + 1 < counts[:, None], np.arange(width) + 1, 0)[:, :, None], axis=1
    )
    twice = np.where(used, ring[:, :, 0] * ahead[:, :, 1] - ahead[:, :, 0] * ring[:, :, 1], 0.0)
    return used, ahead - ring, twice.sum(axis=1)


def _clip_chunk(tris: np.ndarray, corners: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`clip_to_pieces` for pairs given as arrays: tris[i] cut to corners[i][: counts[i]]."""
    width = corners.shape[1]
    ring = corners[:, :, [0, 2]]
    used, edge, twice = ring_edges(ring, counts)
    sign = np.sign(twice)
    # (P, 3 corners, 6 edges): how far inside each edge, times its length.
    rel = tris[:, :, None, :][..., [0, 2]] - ring[:, None]
    depth = sign[:, None, None] * (edge[:, None, :, 0] * rel[..., 1] - edge[:, None, :, 1] * rel[..., 0])
    margin = WELD * np.hypot(edge[..., 0], edge[..., 1])[:, None, :]
    within = np.all(depth >= margin, axis=1) | ~used
    beyond = np.any(np.all(depth <= -margin, axis=1) & used, axis=1)
    whole = np.all(within, axis=1)
    cut = np.flatnonzero(~whole & ~beyond)
    points, n = tris[cut].copy(), np.full(len(cut), 3)
    # The edges a triangle is not wholly inside of, in turn (its part inside the rest is all of it).
    for k in range(width):
        rows = np.flatnonzero(~within[cut, k] & (n >= 3))
        if not len(rows):
            continue
        at = cut[rows]
        clipped, n[rows] = _clip_rows(points[rows], n[rows], sign[at], ring[at, k], edge[at, k])
        if clipped.shape[1] > points.shape[1]:
            points = np.concatenate([points, np.zeros((len(points), clipped.shape[1] - points.shape[1], 3))], axis=1)
        points[rows, : clipped.shape[1]] = clipped
    keep = (n >= 3) & (np.abs(ring_edges(points[..., [0, 2]], n)[2]) > 2.0 * MIN_FRAGMENT_AREA)
    points, n, cut = points[keep], n[keep], cut[keep]
    # Fans: fragment corner 0 with each later pair of corners.
    fans = n - 2
    row = np.repeat(np.arange(len(n)), fans)
    j = run_positions(fans) + 1
    fan = np.stack([points[row, 0], points[row, j], points[row, j + 1]], axis=1)
    whole_rows = np.flatnonzero(whole)
    # Per pair: the triangle itself, or its fragment's fan (a pair is one or the other).
    pair = np.concatenate([whole_rows, cut[row]])
    order = np.argsort(pair, kind="stable")
    is_whole = np.arange(len(pair)) < len(whole_rows)
    return np.concatenate([tris[whole_rows], fan])[order], pair[order], is_whole[order]


def _clip_rows(points: np.ndarray, n: np.ndarray, sign: np.ndarray, a: np.ndarray, d: np.ndarray):
    """One Sutherland-Hodgman step per row: the part of polygon points[r][: n[r]] (R, M, 3) on the
    inner side of the line through a[r] (x, z) along d[r] (sign: the piece's winding), a corner
    within WELD of the one before it dropped; (points (R, M', 3), counts)."""
    width = points.shape[1]
    idx = np.arange(width)
    valid = idx < n[:, None]
    side = sign[:, None] * (
        d[:, None, 0] * (points[..., 2] - a[:, None, 1]) - d[:, None, 1] * (points[..., 0] - a[:, None, 0])
    )
    nxt = np.where(idx + 1 < n[:, None], idx + 1, 0)
    side_next = np.take_along_axis(side, nxt, axis=1)
    after = np.take_along_axis(points, nxt[:, :, None], axis=1)
    inside, inside_next = side >= 0, side_next >= 0
    crosses = valid & (inside != inside_next)
    t = np.divide(side, side - side_next, out=np.zeros_like(side), where=crosses)
    meet = points + t[..., None] * (after - points)
    # Each corner, then the crossing after it, in turn.
    seq = np.stack([points, meet], axis=2).reshape(len(n), 2 * width, 3)
    emit = np.stack([valid & inside, crosses], axis=2).reshape(len(n), 2 * width)
    seq, count = _compact(seq, emit)
    slot = np.arange(seq.shape[1])
    gap = np.sqrt(((seq[:, 1:] - seq[:, :-1]) ** 2).sum(axis=2))
    distinct = np.concatenate([np.ones((len(n), 1), dtype=bool), gap >= WELD], axis=1) & (slot < count[:, None])
    seq, count = _compact(seq, distinct)
    # A last corner within WELD of the first closes the ring: dropped.
    last = seq[np.arange(len(n)), np.maximum(count - 1, 0)]
    count -= (count > 1) & (np.sqrt(((last - seq[:, 0]) ** 2).sum(axis=1)) < WELD)
    return seq, count


def _compact(rows: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's kept entries moved to its front, in order: (rows (R, K', 3) cut to the longest, counts)."""
    order, count = _to_front(keep)
    return np.take_along_axis(rows, order[:, :, None], axis=1), count


def _to_front(keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row (R, K), the order that brings its kept entries to the front in turn, cut to the
    most any row keeps (at least one), and how many each row keeps."""
    count = keep.sum(axis=1)
    return np.argsort(~keep, axis=1, kind="stable")[:, : max(int(count.max(initial=0)), 1)], count


def _signed_area_xz(points: np.ndarray) -> float:
    """Signed area seen from above in Detour's Y-up frame (its ground plane is x, z)."""
    return signed_area(points[:, [0, 2]])


def _area_xz(points) -> float:
    return abs(_signed_area_xz(np.asarray(points)))


def _surface_heights(tris: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Heights of a polygon's detail surface (its triangles, (T, 3, 3)) at points seen from above:
    from the triangle each point lies in, or the one it is nearest to inside of."""
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    e1, e2 = b - a, c - a
    det = e1[:, 0] * e2[:, 2] - e1[:, 2] * e2[:, 0]
    det = np.where(np.abs(det) < _UPRIGHT_DET, np.nan, det)
    rel = points[:, None, :] - a[None]
    u = (rel[..., 0] * e2[:, 2] - rel[..., 2] * e2[:, 0]) / det
    v = (e1[:, 0] * rel[..., 2] - e1[:, 2] * rel[..., 0]) / det
    worst = np.nan_to_num(np.minimum(np.minimum(u, v), 1 - u - v), nan=-np.inf)
    best = np.argmax(worst, axis=1)
    rows = np.arange(len(points))
    u, v = u[rows, best], v[rows, best]
    return a[best, 1] + u * e1[best, 1] + v * e2[best, 1]
