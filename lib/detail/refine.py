"""A polygon's detail triangulation refined by inserting its worst samples (Delaunay flips)."""

from __future__ import annotations

import numpy as np

from ..geometry import NONZERO_DIVISOR, in_circle, turns_left
from .fan import _fan

# At most this many triangles in one polygon's detail surface: Detour numbers a polygon's detail
# triangles and vertices with a byte each (Recast's rcBuildPolyMeshDetail keeps to the same limit),
# so a .bin export never refuses a bake. Each inserted sample adds two triangles.
MAX_TRIANGLES = 255
MAX_INSERTIONS = MAX_TRIANGLES // 2

# Barycentric margin below which a sample counts as lying on a triangle edge.
_EDGE_EPS = 1e-9
# _locate measures samples at most this many at a time (a polygon's, in rows across it) against
# the triangles whose bounding boxes meet theirs, and at most _PAIRS_PER_CHUNK (triangle, sample)
# pairs at a time: all at once, a polygon of 250k samples against its 200 triangles made (200, 250k)
# temporaries of 400 MB each.
_SAMPLES_PER_BLOCK = 1024
_PAIRS_PER_CHUNK = 1 << 17
# After an insertion, samples round the new vertex are measured against every triangle round it in
# one pass while they make at most this many (triangle, sample) pairs: a few hundred samples against
# half a dozen triangles, where the search by angle and its second pass for samples on an edge cost
# more numpy calls than the pairs they save.
_AROUND_PAIRS = 1 << 13
# A sample whose smallest barycentric weight in a triangle is above the edge margin is inside that
# triangle and outside every other, so no other triangle holds it better.
_INSIDE = _EDGE_EPS


def _refine(
    poly: np.ndarray, apex: int, samples: np.ndarray, max_error: float, on_edges: list
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Fan triangulation of the polygon from `apex`, its edge points (on_edges[k]: points along edge
    k in order, or None), then inserted samples (Delaunay flips) until the error bound holds or the
    surface has MAX_TRIANGLES triangles: (vertices, triangles, whether a sample is still farther
    than max_error from it)."""
    return Refinement(poly, apex, samples, max_error, on_edges).result()


class Refinement:
    """_refine's triangulation kept open: more samples can be added (`add`), and are inserted into
    the same surface within what is left of the triangle cap."""

    def __init__(self, poly: np.ndarray, apex: int, samples: np.ndarray, max_error: float, on_edges: list):
        n = len(poly)
        extra = sum(len(pts) for pts in on_edges if pts is not None)
        self.tin = tin = _Tin([*poly], _fan(n, apex), extra)
        for k, pts in enumerate(on_edges):
            u = k
            for point in pts if pts is not None else ():
                u = tin.insert_on_boundary(u, (k + 1) % n, point)
        self.max_error = max_error
        # Insertions left: each adds two triangles (one tried and refused counts too).
        self.budget = max(MAX_TRIANGLES - len(tin.tris), 0) // 2
        self.samples = np.zeros((0, 3))
        self.owner = np.zeros(0, dtype=np.int64)
        self.w = np.zeros((0, 3))
        self.err = np.zeros(0)
        self.add(samples)

    def add(self, samples: np.ndarray) -> None:
        """Locates the samples on the surface and inserts the worst until every sample is within
        max_error or the cap is reached."""
        first = len(self.samples)
        k = len(samples)
        self.samples = np.concatenate([self.samples, samples])
        self.owner = np.concatenate([self.owner, np.zeros(k, dtype=np.int64)])
        self.w = np.concatenate([self.w, np.zeros((k, 3))])
        self.err = np.concatenate([self.err, np.zeros(k)])
        tin, samples, owner, w, err = self.tin, self.samples, self.owner, self.w, self.err
        _locate(tin, samples, np.arange(first, len(samples)), np.arange(len(tin.tris)), owner, w, err)
        while self.budget > 0:
            worst = int(np.argmax(err)) if len(err) else 0
            if not len(err) or err[worst] <= self.max_error:
                break
            self.budget -= 1
            err[worst] = -1.0
            changed = tin.insert(int(owner[worst]), w[worst], samples[worst])
            if changed:
                changed_arr = np.asarray(sorted(changed))
                mark = np.zeros(len(tin.tris), dtype=bool)
                mark[changed_arr] = True
                redo = np.nonzero(mark[owner] & (err >= 0))[0]
                _locate_around(tin, len(tin.verts) - 1, samples, redo, changed_arr, owner, w, err)

    def result(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """(vertices, triangles, whether a sample is still farther than max_error from it)."""
        rough = bool(len(self.err)) and float(self.err.max()) > self.max_error
        return np.asarray(self.tin.verts, dtype=np.float64), np.asarray(self.tin.tris, dtype=np.int64), rough


def _locate(
    tin: _Tin, samples, which: np.ndarray, cand: np.ndarray, owner, w, err, corner: np.ndarray | None = None
) -> None:
    """Assign samples `which` to their containing triangle among `cand` (the first that holds it
    best); update weights and errors.

    A block of samples is measured against the triangles whose bounding boxes meet the block's; a
    sample inside none of those by more than _INSIDE (on an edge, or outside the polygon) is
    measured again against them all, which is where measuring all at once puts every sample.
    corner: the triangles' corners (T, 3, 3), when the caller has them."""
    if len(which) == 0:
        return
    if corner is None:
        corner = tin.array[np.array([tin.tris[t] for t in cand.tolist()], dtype=np.int64)]
    if len(cand) * len(which) <= _PAIRS_PER_CHUNK:
        _locate_in(corner, cand, samples, which, owner, w, err)
        return
    lo, hi = corner[:, :, :2].min(axis=1), corner[:, :, :2].max(axis=1)
    step = min(_SAMPLES_PER_BLOCK, max(_PAIRS_PER_CHUNK // len(cand), 1))
    for start in range(0, len(which), step):
        block = which[start : start + step]
        q = samples[block, :2]
        near = np.flatnonzero(np.all(lo <= q.max(axis=0), axis=1) & np.all(hi >= q.min(axis=0), axis=1))
        score = _locate_in(corner[near], cand[near], samples, block, owner, w, err)
        unsure = block[score <= _INSIDE] if len(near) < len(cand) else block[:0]
        for first in range(0, len(unsure), step):
            _locate_in(corner, cand, samples, unsure[first : first + step], owner, w, err)


def _locate_around(tin: _Tin, new: int, samples, which: np.ndarray, cand: np.ndarray, owner, w, err) -> None:
    """_locate after inserting vertex `new`: the triangles `cand` are those round it (each has it
    as a corner), so a sample's triangle is the one whose angle round it holds the sample's
    direction from it, found by a binary search. A sample not inside that one by more than _INSIDE
    (near a triangle's edge) is measured against every triangle of `cand`. _PAIRS_PER_CHUNK
    samples at a time. Up to _AROUND_PAIRS (triangle, sample) pairs, every sample against every
    triangle of `cand` at once (where the search puts each: the one triangle holding it by more than
    _INSIDE holds it best)."""
    if len(which) == 0:
        return
    tris, xy = tin.tris, tin.xy
    if len(which) * len(cand) <= _AROUND_PAIRS:
        corner = tin.array[np.array([tris[t] for t in cand.tolist()], dtype=np.int64)]
        _locate_in(corner, cand, samples, which, owner, w, err)
        return
    px, py = xy[new]
    # The direction from the new vertex of the first corner after it, counter-clockwise, per triangle.
    after = [tris[t][(tris[t].index(new) + 1) % 3] for t in cand.tolist()]
    start = np.arctan2([xy[v][1] - py for v in after], [xy[v][0] - px for v in after])
    order = np.argsort(start)
    corners: np.ndarray = tin.array[np.array([tris[t] for t in cand.tolist()], dtype=np.int64)]  # (T, 3, 3)
    for first in range(0, len(which), _PAIRS_PER_CHUNK):
        part = which[first : first + _PAIRS_PER_CHUNK]
        q = samples[part]
        k = np.searchsorted(start[order], np.arctan2(q[:, 1] - py, q[:, 0] - px), side="right") - 1
        # Before the first start: the triangle across the direction -pi, the last one.
        _locate_sure(tin, samples, part, order[k], cand, corners, owner, w, err)


def _locate_sure(tin: _Tin, samples, which: np.ndarray, tri: np.ndarray, cand, corners, owner, w, err) -> None:
    """_locate_around for samples `which` and the triangle found for each (an index into cand)."""
    q = samples[which]
    corner = corners[tri]  # (N, 3, 3)
    w0, w1, w2 = _weights(corner, q[:, 0], q[:, 1])
    inside = np.minimum(np.minimum(w0, w1), w2) > _INSIDE
    sure = which[inside]
    wb = np.column_stack([w0[inside], w1[inside], w2[inside]])
    owner[sure] = cand[tri[inside]]
    w[sure] = wb
    err[sure] = np.abs(np.einsum("nk,nk->n", wb, corner[inside, :, 2]) - q[inside, 2])
    _locate(tin, samples, which[~inside], cand, owner, w, err, corners)


def _weights(corner: np.ndarray, qx: np.ndarray, qy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Barycentric weights (top view) of points (qx, qy) in triangles with these corners (..., 3, 3),
    broadcast together.

    Written out component by component: after each insertion it runs on small arrays, where the
    number of numpy calls, not their size, sets the cost."""
    ax, ay = corner[..., 0, 0], corner[..., 0, 1]
    ux, uy = corner[..., 1, 0] - ax, corner[..., 1, 1] - ay
    vx, vy = corner[..., 2, 0] - ax, corner[..., 2, 1] - ay
    det = ux * vy - uy * vx
    det = np.where(det != 0.0, det, NONZERO_DIVISOR)
    rx, ry = qx - ax, qy - ay
    w1 = (rx * vy - ry * vx) / det
    w2 = (ux * ry - uy * rx) / det
    return 1.0 - w1 - w2, w1, w2


def _locate_in(corner: np.ndarray, cand: np.ndarray, samples, which: np.ndarray, owner, w, err) -> np.ndarray:
    """_locate among the triangles `cand` with these corners (T, 3, 3); each sample's smallest
    barycentric weight in its triangle (-inf without triangles)."""
    if len(cand) == 0:
        return np.full(len(which), -np.inf)
    q = samples[which]
    w0, w1, w2 = _weights(corner[:, None], q[:, 0], q[:, 1])
    score = np.minimum(np.minimum(w0, w1), w2)
    best = np.argmax(score, axis=0)
    cols = np.arange(len(which))
    wb = np.column_stack([w0[best, cols], w1[best, cols], w2[best, cols]])
    owner[which] = cand[best]
    w[which] = wb
    err[which] = np.abs(np.einsum("nk,nk->n", wb, corner[best, :, 2]) - q[:, 2])
    return score[best, cols]


class _Tin:
    """A small triangulation of one convex polygon with point insertion and Lawson flips."""

    def __init__(self, verts: list, tris: list[list[int]], boundary: int = 0):
        self.verts = verts
        # The same vertices as one array (room for every insertion and `boundary` edge points), for
        # vectorised point location.
        self.array = np.empty((len(verts) + MAX_INSERTIONS + boundary, 3))
        self.array[: len(verts)] = verts
        self.tris = tris
        # Top-view coordinates as float tuples for the flip tests (plain floats beat numpy scalars).
        self.xy = [(float(q[0]), float(q[1])) for q in verts]
        self.edge: dict[tuple[int, int], int] = {}
        for t in range(len(tris)):
            self._register(t)

    def _register(self, t: int) -> None:
        a, b, c = self.tris[t]
        self.edge[(a, b)] = self.edge[(b, c)] = self.edge[(c, a)] = t

    def _set(self, t: int, tri: list[int]) -> None:
        edge = self.edge
        if t < len(self.tris):
            a, b, c = self.tris[t]
            for key in ((a, b), (b, c), (c, a)):
                if edge.get(key) == t:
                    del edge[key]
            self.tris[t] = tri
        else:
            self.tris.append(tri)
        self._register(t)

    def _add_vertex(self, new: int, point: np.ndarray) -> None:
        self.array[new] = point
        self.verts.append(self.array[new].copy())
        self.xy.append((float(point[0]), float(point[1])))

    def insert_on_boundary(self, u: int, v: int, point: np.ndarray) -> int:
        """Split the boundary edge u -> v at point (on it, seen from above); the new vertex."""
        t = self.edge[(u, v)]
        opp = next(x for x in self.tris[t] if x not in (u, v))
        new = len(self.verts)
        self._add_vertex(new, point)
        t1 = len(self.tris)
        self._set(t, [opp, u, new])
        self._set(t1, [v, opp, new])
        self._legalize(new, [t, t1])
        return new

    def insert(self, t: int, w: np.ndarray, point: np.ndarray) -> set[int]:
        """Split triangle t at point (3 triangles, or 2+2 across an inner edge it lies on); the changed triangles.

        Points on the polygon's own boundary are not inserted: they would put a vertex inside a
        polygon edge, which the neighbouring polygon's detail surface would not share.
        """
        on_edge = np.nonzero(w < _EDGE_EPS)[0]
        if len(on_edge) > 1:
            return set()
        new = len(self.verts)
        tri = self.tris[t]
        if len(on_edge) == 0:
            a, b, c = tri
            self._add_vertex(new, point)
            t1, t2 = len(self.tris), len(self.tris) + 1
            self._set(t, [a, b, new])
            self._set(t1, [b, c, new])
            self._set(t2, [c, a, new])
            created = [t, t1, t2]
        else:
            k = int(on_edge[0])
            opp, u, v = tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]
            other = self.edge.get((v, u))
            if other is None:
                return set()
            far = next(x for x in self.tris[other] if x not in (u, v))
            self._add_vertex(new, point)
            t1, t2 = len(self.tris), len(self.tris) + 1
            self._set(t, [opp, u, new])
            self._set(t1, [v, opp, new])
            self._set(other, [far, v, new])
            self._set(t2, [u, far, new])
            created = [t, t1, other, t2]
        return self._legalize(new, created)

    def _legalize(self, new: int, created: list[int]) -> set[int]:
        """Lawson flips around a new vertex; the triangles changed."""
        changed = set(created)
        tris, edge, xy = self.tris, self.edge, self.xy
        stack = [(tris[s][0], tris[s][1]) for s in created]
        while stack:
            u, v = stack.pop()
            t_in = edge.get((u, v))
            t_out = edge.get((v, u))
            if t_in is None or t_out is None or new not in tris[t_in]:
                continue
            a, b, c = tris[t_out]
            far = a if a != u and a != v else b if b != u and b != v else c
            if not in_circle(xy[new], xy[u], xy[v], xy[far]) or not _convex_quad(xy[new], xy[u], xy[far], xy[v]):
                continue
            self._set(t_in, [new, u, far])
            self._set(t_out, [new, far, v])
            changed.update((t_in, t_out))
            stack.extend([(u, far), (far, v)])
        return changed


def _convex_quad(a, b, c, d) -> bool:
    """Is the quad a, b, c, d (top-view float tuples) strictly convex, so flipping its diagonal keeps
    both triangles valid?"""
    return turns_left(a, b, c) and turns_left(b, c, d) and turns_left(c, d, a) and turns_left(d, a, b)
