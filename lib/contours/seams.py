"""Wall edges of two regions that leave one point back to back, a crack's width apart, joined into
the regions' shared border once every region's outline is final."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..geometry import cross_vectors, meeting_boxes
from .rings import _keys

if TYPE_CHECKING:
    from . import RegionOutline


def joined_back_to_back(outlines: list[RegionOutline], reach: float, climb: float) -> list[RegionOutline]:
    """The outlines with each pair of wall edges of two regions that leave a common point P back to
    back (one ring's edge P->A, floor on its left, the other's B->P, floor on its left too) and stay
    within `reach` of each other made their shared border as far as the shorter reaches: the
    shorter's far end is inserted into the longer edge (or replaces its far end, when the two ends
    are within `reach` and that end is free), and both edges up to it become a border.

    Each region pushes its own walls off the agent's band, and two regions whose border ends at P
    can push walls that leave P along nearly the same line by different amounts (fuzz case 972:
    5 mm apart over 13 cm). The floor between them belongs to neither: a crack no path crosses.
    A joint whose moved end makes a new common point can leave a next pair back to back there
    (fuzz case 71155: a seam bending at a ledge's corner), so joints are made until none is left;
    each turns more than `reach` of wall into border, so this ends."""
    while True:
        joined = _joined_once(outlines, reach, climb)
        if joined is outlines:
            return outlines
        outlines = joined


def _joined_once(outlines: list[RegionOutline], reach: float, climb: float) -> list[RegionOutline]:
    """One pass of joined_back_to_back over the common points as they stand; the same list when
    no pair is joined."""
    leaving: dict[tuple, list[tuple[int, int, int]]] = {}
    arriving: dict[tuple, list[tuple[int, int, int]]] = {}
    for o, outline in enumerate(outlines):
        for r, (ring, nb) in enumerate(zip(outline.rings, outline.ring_neighbors)):
            keys = _keys(ring)
            for k in np.flatnonzero(nb < 0).tolist():
                leaving.setdefault(keys[k], []).append((o, r, k))
                arriving.setdefault(keys[(k + 1) % len(ring)], []).append((o, r, k))
    # Per ring: edge k -> (region across it, inserted point, border at its start, moved point).
    edits: dict[tuple[int, int], dict[int, tuple]] = {}
    for key in leaving.keys() & arriving.keys():
        for ox, rx, k in leaving[key]:
            for oy, ry, e in arriving[key]:
                if outlines[ox].region == outlines[oy].region:
                    continue
                if k in edits.get((ox, rx), {}) or e in edits.get((oy, ry), {}):
                    continue
                joint = _joint(outlines, (ox, rx, k), (oy, ry, e), reach, climb)
                if joint is not None:
                    edits.setdefault((ox, rx), {})[k] = (outlines[oy].region, *joint[0])
                    edits.setdefault((oy, ry), {})[e] = (outlines[ox].region, *joint[1])
    if not edits:
        return outlines
    out = list(outlines)
    for o in sorted({o for o, _ in edits}):
        rings, neighbours = list(out[o].rings), list(out[o].ring_neighbors)
        for r in [r for oo, r in edits if oo == o]:
            rings[r], neighbours[r] = _edited_ring(rings[r], neighbours[r], edits[(o, r)])
        out[o] = replace(out[o], rings=rings, ring_neighbors=neighbours)
    return out


def _joint(outlines: list[RegionOutline], x: tuple, y: tuple, reach: float, climb: float):
    """(edit of ring x's edge, edit of ring y's edge), or None when the edges are not back to back
    within reach: x's edge leaves P for A, y's arrives at P from B. An edit is (point inserted or
    None, is the border the part at the edge's start, (index, point) of a point moved or None)."""
    ox, rx, k = x
    oy, ry, e = y
    ring_x, ring_y = outlines[ox].rings[rx], outlines[oy].rings[ry]
    nb_x, nb_y = outlines[ox].ring_neighbors[rx], outlines[oy].ring_neighbors[ry]
    p, a, b = ring_x[k], ring_x[(k + 1) % len(ring_x)], ring_y[e]
    along_a, along_b = a[:2] - p[:2], b[:2] - p[:2]
    length_a, length_b = float(np.hypot(*along_a)), float(np.hypot(*along_b))
    if length_a == 0 or length_b == 0 or np.dot(along_a, along_b) <= 0:
        return None
    x_longer = length_b <= length_a
    # The shorter edge's far end q lies within reach of the longer edge, on its floorless side
    # (right of x's edge, whose floor is on its left; left of y's edge seen from P), and farther
    # along it than reach: two edges that short meet at any angle, and their floor is a corner,
    # not a crack (fuzz case 5860: a border 4 mm long and two slivers).
    near, q, u, length = (a, b, along_a / length_a, length_a) if x_longer else (b, a, along_b / length_b, length_b)
    side, t = float(cross_vectors(u, q[:2] - p[:2])), float(np.dot(u, q[:2] - p[:2]))
    if not (reach < t <= length and 0 < (-side if x_longer else side) < reach):
        return None
    if abs(q[2] - (p[2] + t / length * (near[2] - p[2]))) > climb:
        return None
    # The longer edge's far end moves onto q when they are that close and it is free (a wall on
    # its other side too); else q is inserted into the longer edge.
    if x_longer:
        if np.hypot(*(a[:2] - b[:2])) <= reach and nb_x[(k + 1) % len(nb_x)] < 0:
            return (None, True, ((k + 1) % len(ring_x), b)), (None, False, None)
        return (b, True, None), (None, False, None)
    if np.hypot(*(a[:2] - b[:2])) <= reach and nb_y[(e - 1) % len(nb_y)] < 0:
        return (None, True, None), (None, False, (e, a))
    return (None, True, None), (a, False, None)


def _edited_ring(ring: np.ndarray, nb: np.ndarray, edits: dict[int, tuple]) -> tuple[np.ndarray, np.ndarray]:
    """The ring with each edited edge k made a border with `region` (edits[k] = (region, inserted,
    at_start, moved)): the whole edge, or when a point is inserted into it, the part at its start or
    at its end, the other part left a wall."""
    points, neighbours = list(ring), list(nb)
    for k in sorted(edits, reverse=True):
        region, inserted, at_start, moved = edits[k]
        if moved is not None:
            points[moved[0]] = moved[1]
        if inserted is None:
            neighbours[k] = region
        else:
            points.insert(k + 1, inserted)
            neighbours[k : k + 1] = [region, -1] if at_start else [-1, region]
    return np.array(points), np.array(neighbours, dtype=nb.dtype)


def joined_alongside(outlines: list[RegionOutline], reach: float, climb: float) -> list[RegionOutline]:
    """The outlines with each pair of wall edges of two regions that run back to back within
    `reach` of each other over more than `reach`, and share no point, made their shared border
    where they overlap. Each end of the overlap is an end of one of the two edges: it is inserted
    into the other edge, or, when the other edge's own end is within `reach` of it and free (walls
    on both its sides, in no other ring), that end moves onto it.

    A region's outline on a ramp that rises out of a floor can run beside another region's on the
    same ramp, a few millimetres apart, with no point in common (fuzz cases 27540, 49719): no
    border joins them (joined_back_to_back needs a common point), and the floor between is a crack
    that no path crosses."""
    walls = [
        (o, r, k)
        for o, outline in enumerate(outlines)
        for r, nb in enumerate(outline.ring_neighbors)
        for k in np.flatnonzero(nb < 0).tolist()
    ]
    if not walls:
        return outlines
    ends = np.array([_edge_ends(outlines, w) for w in walls])  # (W, 2, 3)
    box = np.column_stack([ends[:, :, :2].min(axis=1) - reach, ends[:, :, :2].max(axis=1) + reach])
    held: dict[tuple, int] = {}
    for outline in outlines:
        for ring in outline.rings:
            for key in _keys(ring):
                held[key] = held.get(key, 0) + 1
    seams: dict[tuple[int, int], dict[int, list]] = {}  # (outline, ring) -> edge -> [start, end, region]
    taken: set[tuple[int, int, int]] = set()
    for i, j in zip(*meeting_boxes(box, box)):
        if i >= j or walls[i] in taken or walls[j] in taken:
            continue
        x, y = walls[i], walls[j]
        if outlines[x[0]].region == outlines[y[0]].region:
            continue
        seam = _alongside(ends[i], ends[j], reach, climb)
        if seam is None:
            continue
        low, high = seam
        taken.update((x, y))
        seams.setdefault(x[:2], {})[x[2]] = [low, high, outlines[y[0]].region]
        seams.setdefault(y[:2], {})[y[2]] = [high, low, outlines[x[0]].region]
    if not seams:
        return outlines
    moves = _free_ends_moved(outlines, seams, reach, held)
    out = list(outlines)
    for o in sorted({o for o, _ in seams}):
        rings, neighbours = list(out[o].rings), list(out[o].ring_neighbors)
        for r in [r for oo, r in seams if oo == o]:
            rings[r], neighbours[r] = _with_seams(rings[r], neighbours[r], seams[(o, r)], moves)
        out[o] = replace(out[o], rings=rings, ring_neighbors=neighbours)
    return out


def _edge_ends(outlines: list[RegionOutline], wall: tuple[int, int, int]) -> np.ndarray:
    """(2, 3) start and end of edge k of ring r of outline o (wall = (o, r, k))."""
    o, r, k = wall
    ring = outlines[o].rings[r]
    return np.array([ring[k], ring[(k + 1) % len(ring)]])


def _alongside(x: np.ndarray, y: np.ndarray, reach: float, climb: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(start, end) of the overlap of wall edges x and y (each (2, 3): start, end) along x, both
    points ends of x or y, when they run back to back (y on x's floorless right, within reach, at
    one height within climb, opposite ways) with no common point over more than reach; else None."""
    d = x[1, :2] - x[0, :2]
    length = float(np.hypot(*d))
    if length == 0:
        return None
    u = d / length
    rel = y[:, :2] - x[0, :2]
    t, side = rel @ u, cross_vectors(u, rel)  # y's start and end along x and off its line
    if t[0] <= t[1] or _keys(x).count(_keys(y)[0]) or _keys(x).count(_keys(y)[1]):
        return None
    lo, hi = max(float(t[1]), 0.0), min(float(t[0]), length)
    if hi - lo <= reach or not np.all((side < 0) & (side > -reach)):
        return None
    low = y[1] if t[1] > 0 else x[0]
    high = y[0] if t[0] < length else x[1]
    for point, s in ((low, lo), (high, hi)):
        along_x = x[0, 2] + s / length * (x[1, 2] - x[0, 2])
        along_y = y[1, 2] + (s - t[1]) / (t[0] - t[1]) * (y[0, 2] - y[1, 2])
        if abs(along_x - along_y) > climb or abs(point[2] - along_x) > climb:
            return None
    return low, high


def _free_ends_moved(outlines, seams, reach: float, held: dict[tuple, int]) -> dict[tuple, np.ndarray]:
    """Point key -> where it moves: an edge's end within reach of the seam point next to it, where
    that end is free (walls on both its sides, held by one ring only), so the seam leaves no wall
    edge shorter than reach beside it."""
    moves: dict[tuple, np.ndarray] = {}
    for (o, r), edges in seams.items():
        ring, nb = outlines[o].rings[r], outlines[o].ring_neighbors[r]
        n = len(ring)
        for k, (low, high, _) in edges.items():
            for end, point, other_side in ((k, low, (k - 1) % n), ((k + 1) % n, high, (k + 1) % n)):
                key = _keys(ring[end : end + 1])[0]
                gap = float(np.hypot(*(ring[end, :2] - point[:2])))
                if 0 < gap <= reach and nb[other_side] < 0 and held[key] == 1 and other_side not in edges:
                    moves[key] = point
    return moves


def _with_seams(ring: np.ndarray, nb: np.ndarray, edges: dict[int, list], moves: dict[tuple, np.ndarray]):
    """The ring with each seam's edge k split at the seam's ends (those that are not its own ends or
    moved onto them), the part between them a border with the seam's region."""
    points, neighbours = [], []
    keys = _keys(ring)
    for k in range(len(ring)):
        points.append(moves.get(keys[k], ring[k]))
        if k not in edges:
            neighbours.append(int(nb[k]))
            continue
        low, high, region = edges[k]
        start, end = points[-1], moves.get(keys[(k + 1) % len(ring)], ring[(k + 1) % len(ring)])
        same_start = _keys(low[None])[0] == _keys(start[None])[0]
        same_end = _keys(high[None])[0] == _keys(end[None])[0]
        if not same_start:
            neighbours.append(-1)
            points.append(low)
        neighbours.append(region)
        if not same_end:
            points.append(high)
            neighbours.append(-1)
    return np.array(points), np.array(neighbours, dtype=nb.dtype)
