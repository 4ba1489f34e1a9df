"""Triangulation of a region outline, the polygon stage's fallback, and the 2D predicates it shares.

Holes are bridged into the outer ring through short, wide-angled bridges; ear clipping then cuts
the ears in a chosen order (fattest, first, or longest diagonal), and Delaunay flips fatten the
triangles. Vertices that lie straight between two others are kept (a neighbour may use them).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math

import numpy as np

from .geometry import (
    NONZERO_DIVISOR,
    cross,
    cross_many,
    in_circle,
    is_straight,
    ring_next,
    ring_prev,
    segments_meet,
    signed_area,
    turn,
    turns_left,
)
from .progress import SILENT, Progress

log = logging.getLogger(__name__)

# A polygon narrower than this many cell sizes (its least width over all edge directions) is a
# sliver: no walkable strip that thin survives voxelisation, so it is a decomposition artefact.
SLIVER_WIDTH = 0.05
# A polygon whose area / perimeter² is at most this is a needle (an equilateral triangle has 0.048).
NEEDLE_FATNESS = 2e-4
# Visible bridge candidates examined per hole vertex, nearest first.
_BRIDGE_CANDIDATES = 6
# Edge bins for bridge searches are this many typical edge lengths wide.
_BRIDGE_BIN_EDGES = 8.0
# Bridge candidates tested for crossings at once, at first (nearest, so their boxes are small);
# each further batch is twice as large.
_BRIDGE_BATCH = 8
# Bridge candidates per hole vertex found before the rest are sorted (most searches end sooner).
_BRIDGE_NEAREST = 64
# A box spanning more than this many grid bins (BoxBins) is kept apart and checked by every search.
MAX_BOX_BINS = 64
# BoxBins' coarse grid has bins this many fine ones wide, and serves searches spanning more than
# _COARSE_AFTER fine bins: a search for every edge near a notch can span a hundred.
_COARSE_BINS = 4
_COARSE_AFTER = 16
# Bridge bins are at least this wide (m), so a ring of points gets finite bins.
_MIN_BIN = 1e-9
# A bridge whose smallest sine with its neighbouring edges is below this scores as if it were this:
# it is the worst choice, but a finite one.
_MIN_SINE = 1e-9
# What is left of a ring when no ear can be cut is flat (nothing to triangulate) when its area is at
# most this share of its extent squared (at least 1 m²).
_FLAT_REST = 1e-12


def is_simple(ring: list[int], xy: np.ndarray) -> bool:
    """No two non-adjacent edges of the ring meet (cross properly or touch), all pairs at once."""
    a = xy[ring]
    b = ring_next(a)
    n = len(ring)
    i, j = np.triu_indices(n, k=2)
    keep = (j - i) != n - 1
    i, j = i[keep], j[keep]
    return not segments_meet(a[i], b[i], a[j], b[j]).any()


def simple_hole(hole: list[int], xy: np.ndarray, region: int) -> list[int]:
    """A self-intersecting hole is replaced by its convex hull (clockwise): conservative, never
    walkable where it is not. The hole's points in line along a hull edge stay on it: the contour
    stage split long wall edges there to keep them within max_edge_len (fuzz case 511969)."""
    if is_simple(hole, xy):
        return hole
    log.warning("region %d: a self-intersecting hole outline was replaced by its convex hull", region)
    pts = sorted(set(hole), key=lambda v: (xy[v, 0], xy[v, 1]))
    lower: list[int] = []
    upper: list[int] = []
    for chain, seq in ((lower, pts), (upper, pts[::-1])):
        for v in seq:
            while (
                len(chain) >= 2
                and cross(xy[chain[-2]], xy[chain[-1]], xy[v]) <= 0
                and not is_straight(xy[chain[-2]], xy[chain[-1]], xy[v])
            ):
                chain.pop()
            chain.append(v)
    hull = lower[:-1] + upper[:-1]
    return hull[::-1]


def bridge_holes(rings: list[list[int]], xy: np.ndarray, progress: Progress = SILENT) -> list[int]:
    """Splice every hole into the outer ring (holes by decreasing max x).

    A hole that touches the ring at a vertex is spliced there; otherwise through the visible
    bridge that is short and meets its four adjacent edges at wide angles (no sliver triangles).
    """
    outer = list(rings[0])
    holes = sorted(rings[1:], key=lambda h: -xy[h, 0].max())
    edges = _EdgeIndex(xy, [e for ring in rings for e in zip(ring, ring[1:] + ring[:1])])
    pts = xy.tolist()
    for done, hole in enumerate(holes):
        progress.at(done / len(holes))
        on_outer = set(outer)
        shared = [k for k, v in enumerate(hole) if v in on_outer]
        if shared:
            start, chosen = shared[0], outer.index(hole[shared[0]])
        else:
            found = _best_bridge(outer, hole, edges, xy, pts, progress.part(done, len(holes)))
            if found is None:
                log.warning("a hole could not be bridged to its outline and is ignored")
                continue
            start, chosen = found
            edges.add(hole[start], outer[chosen])
        rot = hole[start:] + hole[:start]
        if outer[chosen] == rot[0]:
            outer = outer[: chosen + 1] + rot[1:] + outer[chosen:]
        else:
            outer = outer[: chosen + 1] + rot + [rot[0]] + outer[chosen:]
    return outer


class _EdgeIndex:
    """The edges a bridge must not cross (every ring's, and the bridges laid so far), binned by
    their boxes so a bridge is tested against the edges near it, not all of them."""

    def __init__(self, xy: np.ndarray, edges: list[tuple[int, int]]):
        self.xy = xy
        self.a = np.array([e[0] for e in edges], dtype=np.int64)
        self.b = np.array([e[1] for e in edges], dtype=np.int64)
        lengths = np.hypot(*(xy[self.b] - xy[self.a]).T)
        size = _BRIDGE_BIN_EDGES * float(np.median(lengths)) if len(lengths) else 1.0
        self.bins = BoxBins(max(size, _MIN_BIN))
        self.bins.add(np.arange(len(edges)), self._boxes(self.a, self.b))

    def _boxes(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.hstack([np.minimum(self.xy[a], self.xy[b]), np.maximum(self.xy[a], self.xy[b])])

    def add(self, u: int, v: int) -> None:
        """A bridge u-v, now part of the outline."""
        row = len(self.a)
        self.a, self.b = np.append(self.a, u), np.append(self.b, v)
        self.bins.add(np.array([row]), self._boxes(self.a[row:], self.b[row:]))

    def crossed(self, p_idx: int, m_ids: list[int]) -> np.ndarray:
        """Per m: does segment p-m meet an edge that does not end at p or m? Only the pairs whose
        boxes overlap are measured."""
        p, m = self.xy[p_idx], self.xy[m_ids]
        lo, hi = np.minimum(p, m), np.maximum(p, m)
        rows = self.bins.meeting(*lo.min(axis=0), *hi.max(axis=0))
        na, nb = self.a[rows], self.b[rows]
        ea, eb = self.xy[na], self.xy[nb]
        e_lo, e_hi = np.minimum(ea, eb), np.maximum(ea, eb)
        ends = np.asarray(m_ids)[:, None]
        near = (
            (na != p_idx)
            & (nb != p_idx)
            & (na != ends)
            & (nb != ends)
            & (e_lo[:, 0] <= hi[:, 0, None])
            & (e_hi[:, 0] >= lo[:, 0, None])
            & (e_lo[:, 1] <= hi[:, 1, None])
            & (e_hi[:, 1] >= lo[:, 1, None])
        )
        c, e = np.nonzero(near)
        hit = segments_meet(p, m[c], ea[e], eb[e])
        return np.bincount(c[hit], minlength=len(m_ids)) > 0


def _best_bridge(
    outer: list[int], hole: list[int], edges: _EdgeIndex, xy: np.ndarray, pts: list, progress: Progress = SILENT
) -> tuple[int, int] | None:
    """(hole position, outer position) of the best visible bridge, or None if none is visible.
    pts: xy as a list, for the float arithmetic per candidate."""
    best, best_score = None, math.inf
    all_dist = np.linalg.norm(xy[outer][None, :, :] - xy[hole][:, None, :], axis=2)
    o, h = xy[outer], xy[hole]
    mutual = _in_cone_many(ring_prev(o), o, ring_next(o), h)
    mutual &= _in_cone_many(ring_prev(h), h, ring_next(h), o).T
    for s, p_idx in enumerate(hole):
        progress.at(s / len(hole))
        p = pts[p_idx]
        p_prev, p_next = pts[hole[s - 1]], pts[hole[(s + 1) % len(hole)]]
        seen, size = 0, _BRIDGE_BATCH
        candidates = _nearest_first(all_dist[s], mutual[s])
        while seen < _BRIDGE_CANDIDATES:
            batch = list(itertools.islice(candidates, size))
            size *= 2
            if not batch or all_dist[s, batch[0]] * 0.5 >= best_score:
                break
            # The batch's bridges are tested for crossings at once; the candidates are then taken
            # in order, as if one by one.
            blocked = edges.crossed(p_idx, [outer[k] for k in batch]).tolist()
            for k, crossed in zip(batch, blocked):
                dist = float(all_dist[s, k])
                if seen >= _BRIDGE_CANDIDATES or dist * 0.5 >= best_score:
                    break
                if crossed:
                    continue
                seen += 1
                m = pts[outer[k]]
                prev, nxt = pts[outer[k - 1]], pts[outer[(k + 1) % len(outer)]]
                dx, dy = (m[0] - p[0]) / dist, (m[1] - p[1]) / dist
                sines = [
                    abs(dx * (q[1] - c[1]) - dy * (q[0] - c[0]))
                    / max(math.hypot(q[0] - c[0], q[1] - c[1]), NONZERO_DIVISOR)
                    for c, q in ((p, p_prev), (p, p_next), (m, prev), (m, nxt))
                ]
                score = dist / max(min(sines), _MIN_SINE)
                if score < best_score:
                    best, best_score = (s, k), score
            else:
                continue
            break
    return best


def _nearest_first(dist: np.ndarray, allowed: np.ndarray):
    """Indices of the allowed entries in order of distance (ties by index), the nearest
    _BRIDGE_NEAREST found without sorting the rest, which is sorted only if it is reached."""
    if len(dist) <= _BRIDGE_NEAREST:
        order = np.argsort(dist, kind="stable")
        yield from order[allowed[order]].tolist()
        return
    kth = np.partition(dist, _BRIDGE_NEAREST - 1)[_BRIDGE_NEAREST - 1]
    first = np.flatnonzero(dist <= kth)
    first = first[np.lexsort((first, dist[first]))]
    yield from first[allowed[first]].tolist()
    rest = np.argsort(dist, kind="stable")
    rest = rest[dist[rest] > kth]
    yield from rest[allowed[rest]].tolist()


class BoxBins:
    """Rows of boxes (min x, min y, max x, max y) binned on a uniform grid, to find those near a
    point without scanning all, and on a grid _COARSE_BINS times coarser for searches that span
    many bins of the fine one. A box may shrink after it is added: it stays in its old bins."""

    def __init__(self, size: float):
        self.size = size
        self.count = 0  # rows 0..count-1 have been added
        self.bins: dict[tuple[int, int], list[int]] = {}
        self.coarse: dict[tuple[int, int], list[int]] = {}
        self.wide: list[int] = []  # rows whose box spans more than MAX_BOX_BINS bins

    def add(self, rows: np.ndarray, boxes: np.ndarray) -> None:
        self.count = max(self.count, int(rows.max(initial=-1)) + 1)
        cells = np.floor(boxes / self.size).astype(np.int64)
        narrow = (cells[:, 2] - cells[:, 0] + 1) * (cells[:, 3] - cells[:, 1] + 1) <= MAX_BOX_BINS
        self.wide += rows[~narrow].tolist()
        for grid, grid_cells in ((self.bins, cells[narrow]), (self.coarse, cells[narrow] // _COARSE_BINS)):
            for row, (i0, j0, i1, j1) in zip(rows[narrow].tolist(), grid_cells.tolist()):
                for i in range(i0, i1 + 1):
                    for j in range(j0, j1 + 1):
                        grid.setdefault((i, j), []).append(row)

    def meeting(self, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
        """Sorted rows whose box may meet the box x0..x1, y0..y1 (all rows when it spans more
        bins than there are rows)."""
        i0, j0 = math.floor(x0 / self.size), math.floor(y0 / self.size)
        i1, j1 = math.floor(x1 / self.size), math.floor(y1 / self.size)
        if (i1 - i0 + 1) * (j1 - j0 + 1) > self.count:
            return np.arange(self.count)
        grid = self.bins
        if (i1 - i0 + 1) * (j1 - j0 + 1) > _COARSE_AFTER:
            grid = self.coarse
            i0, j0, i1, j1 = i0 // _COARSE_BINS, j0 // _COARSE_BINS, i1 // _COARSE_BINS, j1 // _COARSE_BINS
        rows = list(self.wide)
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                rows += grid.get((i, j), ())
        return np.unique(np.array(rows, dtype=np.int64))


def _in_cone_many(prev: np.ndarray, m: np.ndarray, nxt: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Does direction m_k->p_j point into the polygon interior at vertex m_k (between its edges)?

    Every vertex m_k (K, 2, with neighbours prev_k, nxt_k) against every point p_j (J, 2): (J, K).
    """
    convex = cross_many(prev, m, nxt) >= 0
    q = p[:, None, :]
    c1, c2 = cross_many(m[None], nxt[None], q), cross_many(prev[None], m[None], q)
    return np.where(convex[None], (c1 > 0) & (c2 > 0), ~((c1 <= 0) & (c2 <= 0)))


def ear_clip(ring: list[int], xy: np.ndarray, mode: str, progress: Progress = SILENT) -> list[list[int]] | None:
    """Triangulate a simple (possibly weakly simple, bridged) ring; None if it fails.

    mode picks which valid ear is cut: "fat" = the largest smallest angle, "first" = the first
    in ring order (long fans), "far" = the ear with the longest new diagonal.

    A vertex the ring passes twice (a pinch, a hole's bridge) is an ear's tip only where no edge at
    its other passes runs into the ear, and a slit left when everything beside it is cut (a -> b ->
    a) is dropped: otherwise an ear could span the wedge outside the floor between two loops
    that meet at a point (fuzz case 528349, overlapping triangles).
    """
    nodes = list(range(len(ring)))
    nxt = [(i + 1) % len(ring) for i in nodes]
    prv = [(i - 1) % len(ring) for i in nodes]
    alive = set(nodes)
    alive_mask = np.ones(len(ring), dtype=bool)
    ring_arr = np.asarray(ring)
    pts = xy[ring]
    px, py = pts[:, 0].copy(), pts[:, 1].copy()
    ptl = pts.tolist()
    score: dict[int, float | None] = {}
    passes: dict[int, list[int]] = {}
    for i, v in enumerate(ring):
        passes.setdefault(v, []).append(i)
    passes = {v: at for v, at in passes.items() if len(at) > 1}

    def edge_into_ear(a: int, b: int, c: int) -> bool:
        """Does an edge at another pass of b's vertex point into the ear a, b, c (strictly inside
        its corner at b)?"""
        pa, pb, pc = ptl[a], ptl[b], ptl[c]
        for j in passes.get(ring[b], ()):
            if j != b and alive_mask[j]:
                for q in (ptl[prv[j]], ptl[nxt[j]]):
                    if turns_left(pb, pc, q) and turns_left(pb, q, pa):
                        return True
        return False

    def ear_score(i: int) -> float | None:
        a, b, c = prv[i], i, nxt[i]
        pa, pb, pc = pts[a], pts[b], pts[c]
        if turn(pa, pb, pc) <= 0 or edge_into_ear(a, b, c):
            return None
        xs, ys = (ptl[a][0], ptl[b][0], ptl[c][0]), (ptl[a][1], ptl[b][1], ptl[c][1])
        in_box = (px >= min(xs)) & (px <= max(xs)) & (py >= min(ys)) & (py <= max(ys))
        cand = np.flatnonzero(in_box & alive_mask)
        rc = ring_arr[cand]
        q = pts[cand[(rc != ring[a]) & (rc != ring[b]) & (rc != ring[c])]]
        if len(q):
            q = q[~(np.all(q == pa, axis=1) | np.all(q == pb, axis=1) | np.all(q == pc, axis=1))]
            inside = (cross_many(pa, pb, q) >= 0) & (cross_many(pb, pc, q) >= 0) & (cross_many(pc, pa, q) >= 0)
            if inside.any():
                return None
        if mode == "first":
            return -float(i)
        if mode == "far":
            return float(np.hypot(*(pc - pa)))
        return _min_angle(pa, pb, pc)

    for i in nodes:
        score[i] = ear_score(i)
    # Max-heap of (score, node) with lazy deletion: an entry is current while it matches score[node].
    heap = [(-s, -i) for i, s in score.items() if s is not None]
    heapq.heapify(heap)
    tris: list[list[int]] = []
    while len(alive) > 3:
        while heap and score.get(-heap[0][1]) != -heap[0][0]:
            heapq.heappop(heap)
        if not heap:
            rest = [ring[i] for i in _walk(next(iter(alive)), nxt, len(alive))]
            if abs(signed_area(xy[rest])) <= _FLAT_REST * max(1.0, float(np.ptp(xy[rest]) ** 2)):
                return _split_at_straight_vertices(tris, rest, xy)
            return None
        i = -heapq.heappop(heap)[1]
        progress.at(1.0 - len(alive) / len(ring))
        a, c = prv[i], nxt[i]
        tris.append([ring[a], ring[i], ring[c]])
        alive.discard(i)
        alive_mask[i] = False
        del score[i]
        nxt[a], prv[c] = c, a
        changed = _drop_slits(a, ring, nxt, prv, alive, alive_mask, score)
        for j in changed | {k for v in changed for k in passes.get(ring[v], ())}:
            if alive_mask[j]:
                score[j] = new = ear_score(j)
                if new is not None:
                    heapq.heappush(heap, (-new, -j))
    last = [ring[i] for i in _walk(next(iter(alive)), nxt, 3)]
    if turn(xy[last[0]], xy[last[1]], xy[last[2]]) > 0:
        tris.append(last)
        return tris
    return _split_at_straight_vertices(tris, last, xy)


def _drop_slits(
    start: int, ring: list[int], nxt: list[int], prv: list[int], alive: set[int], alive_mask: np.ndarray, score: dict
) -> set[int]:
    """Drop every slit (a -> b -> a: a loop with nothing left inside) from node start on: b and the
    second pass of a go, the first pass of a leads on to where the second led. Returns the alive
    nodes whose neighbours changed: start, its next, and those joined where a slit went."""
    changed = {start, nxt[start]}
    for j in (start, nxt[start]):
        while len(alive) > 3 and alive_mask[j] and ring[prv[j]] == ring[nxt[j]]:
            a, twin = prv[j], nxt[j]
            for gone in (j, twin):
                alive.discard(gone)
                alive_mask[gone] = False
                score.pop(gone, None)
            nxt[a], prv[nxt[twin]] = nxt[twin], a
            changed |= {a, nxt[a]}
            j = a
    return {j for j in changed if alive_mask[j]}


def _split_at_straight_vertices(tris: list[list[int]], chain: list[int], xy: np.ndarray) -> list[list[int]] | None:
    """Ear clipping ends on a flat remainder when vertices lie straight between two others; each
    such vertex lies inside an edge of a clipped triangle, which is split there so the vertex
    stays (a neighbour polygon may use it: dropping it would leave a T-junction). That holds for
    a vertex of other triangles too: the last ear cut over it, float noise putting it a hair outside."""
    tris = [list(t) for t in tris]
    for v in dict.fromkeys(chain):
        p = xy[v]
        for t in tris:
            for k in range(3):
                a, b = t[k], t[(k + 1) % 3]
                ab, ap = xy[b] - xy[a], p - xy[a]
                along = float(ab @ ap) / max(float(ab @ ab), NONZERO_DIVISOR)
                if 0.0 < along < 1.0 and turn(xy[a], p, xy[b]) == 0:
                    c = t[(k + 2) % 3]
                    t[:] = [a, v, c]
                    tris.append([v, b, c])
                    break
            else:
                continue
            break
        else:
            # The chain's ends, and a vertex a triangle already has, need no split.
            if not any(v in t for t in tris):
                return None
    return tris


def delaunay_flips(tris: list[list[int]], xy: np.ndarray) -> list[list[int]]:
    """Flip inner diagonals until locally Delaunay (fat triangles; no slivers where avoidable)."""
    tris = [list(t) for t in tris]
    owner: dict[tuple[int, int], int] = {}
    for k, tri in enumerate(tris):
        for j in range(3):
            owner[(tri[j], tri[(j + 1) % 3])] = k
    stack = list(owner)
    for _ in range(20 * len(tris) + 100):
        if not stack:
            break
        u, v = stack.pop()
        t, o = owner.get((u, v)), owner.get((v, u))
        if t is None or o is None or t == o:
            continue
        a = next(x for x in tris[t] if x not in (u, v))
        b = next(x for x in tris[o] if x not in (u, v))
        if a == b or not in_circle(xy[u], xy[v], xy[a], xy[b]):
            continue
        quad = [xy[a], xy[u], xy[b], xy[v]]
        if any(turn(quad[k - 1], quad[k], quad[(k + 1) % 4]) <= 0 for k in range(4)):
            continue
        for k in (t, o):
            for j in range(3):
                owner.pop((tris[k][j], tris[k][(j + 1) % 3]), None)
        tris[t], tris[o] = [a, u, b], [b, v, a]
        for k in (t, o):
            for j in range(3):
                owner[(tris[k][j], tris[k][(j + 1) % 3])] = k
        stack.extend([(u, b), (b, v), (v, a), (a, u)])
    return tris


def _walk(start: int, nxt: list[int], n: int) -> list[int]:
    out, i = [], start
    for _ in range(n):
        out.append(i)
        i = nxt[i]
    return out


def _min_angle(a, b, c) -> float:
    def ang(p, q, r):
        u, v = q - p, r - p
        return abs(math.atan2(u[0] * v[1] - u[1] * v[0], u[0] * v[0] + u[1] * v[1]))

    return min(ang(a, b, c), ang(b, c, a), ang(c, a, b))
