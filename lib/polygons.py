"""Polygon stage: region outlines with holes -> few convex polygons (Recast: rcBuildPolyMesh).

Each region is cut into convex cells by notch portals (lib.notch_portals, NEOGEN-2D). Cells over
max_verts_per_poly are cut into pieces, the pieces merged Hertel-Mehlhorn style across inessential
portals (longest first), and a local search then replaces any three adjacent polygons that one
chord can cut into two. Triangulating (holes bridged into the outer ring, ear clipping) and merging
is the fallback for outlines the portals cannot handle. Vertices are welded across regions by exact
coordinates, so shared borders (bitwise-identical in both outlines, never given new vertices) join
without T-junctions.
"""
from __future__ import annotations

import heapq
import logging
import math

import numpy as np

from .contours import RegionOutline
from .navmesh import NavMesh
from .notch_portals import notch_cells
from .params import BakeParams

log = logging.getLogger(__name__)

# Relative tolerance of orientation tests: |cross| below this times the edge lengths is collinear.
_COLLINEAR = 1e-10
# Polygons with area / perimeter² at or below this count as slivers.
_SLIVER = 2e-4
# Polygons up to this many vertices are measured with plain floats rather than numpy.
_SMALL_POLYGON = 32
# No Steiner vertex closer than this many cell sizes to an existing vertex (no tiny edges).
_STEINER_SNAP = 0.25


def build_polygons(outlines: list[RegionOutline], params: BakeParams) -> NavMesh:
    """Decompose every region outline into convex polygons and weld them into one NavMesh."""
    maxv = int(params.max_verts_per_poly)
    vertex_index: dict[tuple, int] = {}
    points: list[tuple] = []
    rings_idx: list[list[list[int]]] = []
    for outline in outlines:
        region_rings = []
        for ring in outline.rings:
            ring = np.asarray(ring, dtype=np.float64).reshape(-1, 3)
            idx = []
            for p in map(tuple, ring.tolist()):
                if p not in vertex_index:
                    vertex_index[p] = len(points)
                    points.append(p)
                idx.append(vertex_index[p])
            region_rings.append(idx)
        rings_idx.append(region_rings)
    xy = np.array([p[:2] for p in points], dtype=np.float64).reshape(-1, 2)
    uses = np.zeros(len(points), dtype=np.int64)
    for region_rings in rings_idx:
        for idx in region_rings:
            np.add.at(uses, idx, 1)

    polys: list[list[int]] = []
    regions: list[int] = []
    areas: list[int] = []
    snap = _STEINER_SNAP * params.cell_size
    for outline, region_rings in zip(outlines, rings_idx):
        shared = {
            (idx[k], idx[(k + 1) % len(idx)])
            for idx, nb in zip(region_rings, outline.ring_neighbors)
            for k in np.flatnonzero(np.asarray(nb).reshape(-1) >= 0)
        }
        rings = [
            _drop_free_collinear(idx, np.asarray(nb).reshape(-1), xy, uses)
            for idx, nb in zip(region_rings, outline.ring_neighbors)
        ]
        rings = rings[:1] + [_simple_hole(h, xy, outline.region) for h in rings[1:] if len(h) >= 3]
        rings = [r for r in (_clean_ring(r, xy) for r in rings) if r is not None]
        if not rings or _signed_area(xy[rings[0]]) <= 0:
            log.warning("region %d dropped: its outer ring has no area or is not counter-clockwise", outline.region)
            continue
        # Notch portals; triangulation and merging where the portals cannot be laid or leave slivers.
        found = _decompose_by_portals(rings, points, xy, shared, maxv, snap)
        if found is None or _quality_key(found[0], _extended(xy, found[1]))[0]:
            fallback = _decompose(rings, xy, maxv)
            if found is None or (fallback is not None and _quality_key(fallback[0], xy) < _quality_key(found[0], _extended(xy, found[1]))):
                found = fallback
        if found is None:
            log.warning("region %d dropped: its outline could not be decomposed (self-intersecting?)", outline.region)
            continue
        region_polys, steiner = found
        if len(steiner):
            points.extend(map(tuple, steiner.tolist()))
            xy = _extended(xy, steiner)
        polys.extend(region_polys)
        regions.extend([outline.region] * len(region_polys))
        areas.extend([outline.area] * len(region_polys))

    if not polys:
        return NavMesh.empty(params, "no region outline could hold a polygon")
    return _assemble(polys, regions, areas, np.array(points, dtype=np.float64), params)


def _assemble(polys, regions, areas, vertices: np.ndarray, params: BakeParams) -> NavMesh:
    """Compact the used vertices and build the CSR arrays and edge neighbours."""
    used = sorted({v for poly in polys for v in poly})
    remap = {v: i for i, v in enumerate(used)}
    polys = [[remap[v] for v in poly] for poly in polys]
    owner = {}
    for p, poly in enumerate(polys):
        for k, a in enumerate(poly):
            owner[(a, poly[(k + 1) % len(poly)])] = p
    flat = [v for poly in polys for v in poly]
    neighbors = [owner.get((poly[(k + 1) % len(poly)], a), -1) for poly in polys for k, a in enumerate(poly)]
    sizes = [len(poly) for poly in polys]
    return NavMesh(
        vertices=vertices[used] if used else np.zeros((0, 3)),
        poly_offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        poly_vertices=np.asarray(flat, dtype=np.int64),
        neighbors=np.asarray(neighbors, dtype=np.int64),
        regions=np.asarray(regions, dtype=np.int64),
        areas=np.asarray(areas, dtype=np.int64),
        params=params,
    )


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def _cross_many(o: np.ndarray, a: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Cross products (a - o) x (q_k - o) for points q (N, 2)."""
    return (a[0] - o[0]) * (q[:, 1] - o[1]) - (a[1] - o[1]) * (q[:, 0] - o[0])


def _turn(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> int:
    """+1 left turn o->a->b, -1 right turn, 0 collinear (relative tolerance)."""
    c = _cross(o, a, b)
    scale = math.hypot(a[0] - o[0], a[1] - o[1]) * math.hypot(b[0] - a[0], b[1] - a[1])
    if abs(c) <= _COLLINEAR * scale:
        return 0
    return 1 if c > 0 else -1


def _signed_area(pts: np.ndarray) -> float:
    if len(pts) <= _SMALL_POLYGON:  # plain floats beat numpy's per-call cost on small polygons
        p = pts[:, :2].tolist()
        return 0.5 * sum(p[k - 1][0] * p[k][1] - p[k][0] * p[k - 1][1] for k in range(len(p)))
    x, y = pts[:, 0], pts[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def _drop_free_collinear(idx: list[int], nb: np.ndarray, xy: np.ndarray, uses: np.ndarray) -> list[int]:
    """Remove straight-angle vertices between two wall edges that nothing else uses.

    Such vertices only cost polygon vertex budget; vertices on shared borders (or used by another
    ring) must stay, or the neighbour region would see a T-junction.
    """
    n = len(idx)
    if n <= 3 or len(nb) != n:
        return idx
    keep = []
    for i in range(n):
        a, v, b = idx[i - 1], idx[i], idx[(i + 1) % n]
        free = nb[i - 1] == -1 and nb[i] == -1 and uses[v] == 1
        straight = free and _turn(xy[a], xy[v], xy[b]) == 0 and np.dot(xy[v] - xy[a], xy[b] - xy[v]) > 0
        if not straight:
            keep.append(v)
    return keep


def _clean_ring(idx: list[int], xy: np.ndarray) -> list[int] | None:
    """Drop repeated consecutive vertices and spikes (a->b->a); None when nothing with area is left."""
    ring = list(idx)
    changed = True
    while changed and len(ring) >= 3:
        changed = False
        out = [v for k, v in enumerate(ring) if v != ring[k - 1]] if len(ring) > 1 else ring
        n = len(out)
        for k in range(n):
            if n >= 3 and out[k - 1] == out[(k + 1) % n]:
                del out[k]
                del out[k - 1 if k > 0 else -1]
                changed = True
                break
        ring = out
    if len(ring) < 3 or abs(_signed_area(xy[ring])) <= 0:
        return None
    return ring


def _segments_cross_many(p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per segment a_k b_k: does it meet segment pq (proper crossing or touching)?"""
    d1, d2 = _cross_many(a.T, b.T, p[None, :]).ravel(), _cross_many(a.T, b.T, q[None, :]).ravel()
    d3, d4 = _cross_many(p, q, a), _cross_many(p, q, b)
    proper = (((d1 > 0) & (d2 < 0)) | ((d1 < 0) & (d2 > 0))) & (((d3 > 0) & (d4 < 0)) | ((d3 < 0) & (d4 > 0)))

    def on(s, t, r, d):
        zero = d == 0
        if not zero.any():
            return zero
        lo, hi = np.minimum(s, t), np.maximum(s, t)
        return zero & np.all((lo <= r) & (r <= hi), axis=-1)

    return proper | on(a, b, p, d1) | on(a, b, q, d2) | on(p, q, a, d3) | on(p, q, b, d4)


def _is_simple(ring: list[int], xy: np.ndarray) -> bool:
    """No two non-adjacent edges of the ring meet."""
    a = xy[ring]
    b = np.roll(a, -1, axis=0)
    n = len(ring)
    for i in range(n):
        others = (np.arange(n) != i) & (np.arange(n) != (i + 1) % n) & (np.arange(n) != (i - 1) % n)
        if _segments_cross_many(a[i], b[i], a[others], b[others]).any():
            return False
    return True


def _simple_hole(hole: list[int], xy: np.ndarray, region: int) -> list[int]:
    """A self-intersecting hole is replaced by its convex hull (clockwise): conservative, never walkable where it is not."""
    if _is_simple(hole, xy):
        return hole
    log.warning("region %d: a self-intersecting hole outline was replaced by its convex hull", region)
    pts = sorted(set(hole), key=lambda v: (xy[v, 0], xy[v, 1]))
    lower: list[int] = []
    upper: list[int] = []
    for chain, seq in ((lower, pts), (upper, pts[::-1])):
        for v in seq:
            while len(chain) >= 2 and _cross(xy[chain[-2]], xy[chain[-1]], xy[v]) <= 0:
                chain.pop()
            chain.append(v)
    hull = lower[:-1] + upper[:-1]
    return hull[::-1]


def _bridge_holes(rings: list[list[int]], xy: np.ndarray) -> list[int]:
    """Splice every hole into the outer ring (holes by decreasing max x).

    A hole that touches the ring at a vertex is spliced there; otherwise through the visible
    bridge that is short and meets its four adjacent edges at wide angles (no sliver triangles).
    """
    outer = list(rings[0])
    holes = sorted(rings[1:], key=lambda h: -xy[h, 0].max())
    for h_i, hole in enumerate(holes):
        on_outer = set(outer)
        shared = [k for k, v in enumerate(hole) if v in on_outer]
        if shared:
            start, chosen = shared[0], outer.index(hole[shared[0]])
        else:
            others = [e for h in holes[h_i:] for e in zip(h, h[1:] + h[:1])]
            edges = list(zip(outer, outer[1:] + outer[:1])) + others
            found = _best_bridge(outer, hole, edges, xy)
            if found is None:
                log.warning("a hole could not be bridged to its outline and is ignored")
                continue
            start, chosen = found
        rot = hole[start:] + hole[:start]
        if outer[chosen] == rot[0]:
            outer = outer[: chosen + 1] + rot[1:] + outer[chosen:]
        else:
            outer = outer[: chosen + 1] + rot + [rot[0]] + outer[chosen:]
    return outer


# Visible bridge candidates examined per hole vertex, nearest first.
_BRIDGE_CANDIDATES = 6


def _best_bridge(outer: list[int], hole: list[int], edges, xy: np.ndarray) -> tuple[int, int] | None:
    """(hole position, outer position) of the best visible bridge, or None if none is visible."""
    best, best_score = None, math.inf
    ea = np.array([e[0] for e in edges], dtype=np.int64)
    eb = np.array([e[1] for e in edges], dtype=np.int64)
    # Edge bounding boxes: only edges whose box overlaps the bridge's box can meet it.
    e_lo = np.minimum(xy[ea], xy[eb]).T.copy()
    e_hi = np.maximum(xy[ea], xy[eb]).T.copy()
    pts = xy.tolist()
    all_dist = np.linalg.norm(xy[outer][None, :, :] - xy[hole][:, None, :], axis=2)
    all_order = np.argsort(all_dist, axis=1, kind="stable")
    o, h = xy[outer], xy[hole]
    mutual = _in_cone_many(np.roll(o, 1, axis=0), o, np.roll(o, -1, axis=0), h)
    mutual &= _in_cone_many(np.roll(h, 1, axis=0), h, np.roll(h, -1, axis=0), o).T
    for s, p_idx in enumerate(hole):
        p = xy[p_idx]
        p_prev, p_next = pts[hole[s - 1]], pts[hole[(s + 1) % len(hole)]]
        dist = all_dist[s].tolist()
        seen = 0
        order = all_order[s]
        for k in order[mutual[s, order]].tolist():
            if seen >= _BRIDGE_CANDIDATES or dist[k] * 0.5 >= best_score:
                break
            m_idx = outer[k]
            m = xy[m_idx]
            prev, nxt = pts[outer[k - 1]], pts[outer[(k + 1) % len(outer)]]
            (px, py), (mx, my) = pts[p_idx], pts[m_idx]
            near = np.flatnonzero((e_lo[0] <= max(px, mx)) & (e_hi[0] >= min(px, mx))
                                  & (e_lo[1] <= max(py, my)) & (e_hi[1] >= min(py, my)))
            na, nb = ea[near], eb[near]
            free = (na != m_idx) & (nb != m_idx) & (na != p_idx) & (nb != p_idx)
            if free.any() and _segments_cross_many(p, m, xy[na[free]], xy[nb[free]]).any():
                continue
            seen += 1
            dx, dy = float(m[0] - p[0]) / dist[k], float(m[1] - p[1]) / dist[k]
            sines = [abs(dx * float(q[1] - o[1]) - dy * float(q[0] - o[0])) / max(math.hypot(q[0] - o[0], q[1] - o[1]), 1e-300)
                     for o, q in ((p, p_prev), (p, p_next), (m, prev), (m, nxt))]
            score = dist[k] / max(min(sines), 1e-9)
            if score < best_score:
                best, best_score = (s, k), score
    return best


def _in_cone_many(prev: np.ndarray, m: np.ndarray, nxt: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Does direction m_k->p_j point into the polygon interior at vertex m_k (between its edges)?

    Every vertex m_k (K, 2, with neighbours prev_k, nxt_k) against every point p_j (J, 2): (J, K).
    """
    def cross(o, a, b):
        return (a[..., 0] - o[..., 0]) * (b[..., 1] - o[..., 1]) - (a[..., 1] - o[..., 1]) * (b[..., 0] - o[..., 0])

    convex = cross(prev, m, nxt) >= 0
    q = p[:, None, :]
    c1, c2 = cross(m[None], nxt[None], q), cross(prev[None], m[None], q)
    return np.where(convex[None], (c1 > 0) & (c2 > 0), ~((c1 <= 0) & (c2 <= 0)))


def _decompose(rings: list[list[int]], xy: np.ndarray, maxv: int) -> tuple[list[list[int]], np.ndarray] | None:
    """Triangulate and merge: the fewest convex polygons (slivers first avoided) over a few
    triangulations of one region; None if no triangulation succeeds."""
    ring = _bridge_holes(rings, xy)
    best, best_key = None, None
    clipped = {}
    for mode, flip in (("fat", False), ("first", False), ("far", False), ("fat", True)):
        if mode not in clipped:
            clipped[mode] = _ear_clip(ring, xy, mode)
        tris = clipped[mode]
        if tris is None:
            continue
        if flip:
            tris = _delaunay_flips(tris, xy)
        merged = _merge(tris, xy, maxv)
        key = _quality_key(merged, xy)
        if best is None or key < best_key:
            best, best_key = merged, key
    return None if best is None else (_regroup(best, xy, maxv), np.zeros((0, 3)))


def _decompose_by_portals(rings, points, xy, shared, maxv: int, snap: float) -> tuple[list[list[int]], np.ndarray] | None:
    """Notch portals (lib.notch_portals), cells over the vertex limit split, then merged across
    inessential portals; Steiner vertices a merge leaves straight and unshared are dropped."""
    found = notch_cells(rings, np.asarray(points, dtype=np.float64), shared, snap)
    if found is None:
        return None
    xy_all = _extended(xy, found.steiner)
    steiner_ids = set(range(len(xy), len(xy_all)))
    merged = None
    # Cells over the vertex limit are cut by chords into as few pieces as they need, or into
    # triangles that the merge regroups with their neighbours; whichever ends with fewer.
    oversize = any(len(cell) > maxv for cell in found.cells)
    for split in (_split_convex, _triangles) if oversize else (_split_convex,):
        pieces = []
        for cell in found.cells:
            parts = [cell] if len(cell) <= maxv else split(cell, xy_all, maxv)
            if parts is None:
                break
            pieces.extend(parts)
        else:
            candidate = _regroup(_merge(pieces, xy_all, maxv, steiner_ids), xy_all, maxv, steiner_ids)
            if merged is None or _quality_key(candidate, xy_all) < _quality_key(merged, xy_all):
                merged = candidate
    if merged is None:
        return None
    used = {v for poly in merged for v in poly}
    kept = [v for v in range(len(xy), len(xy_all)) if v in used]
    if len(kept) < len(found.steiner):
        renumber = {v: len(xy) + k for k, v in enumerate(kept)}
        merged = [[renumber.get(v, v) for v in poly] for poly in merged]
    return merged, found.steiner[[v - len(xy) for v in kept]]


def _split_convex(ring: list[int], xy: np.ndarray, maxv: int) -> list[list[int]] | None:
    """A convex polygon over maxv vertices cut by chords into the fewest pieces, ceil((n - 2) / (maxv - 2)):
    each cut takes maxv consecutive vertices, where the piece is fattest and neither side is a
    sliver (straight runs of vertices can make one); None if no cut qualifies."""
    pieces = []
    while len(ring) > maxv:
        n = len(ring)
        cuts = []
        for i in range(n):
            piece = [ring[(i + k) % n] for k in range(maxv)]
            rest = [ring[(i + maxv - 1 + k) % n] for k in range(n - maxv + 2)]
            if not (_is_sliver(xy[piece]) or _is_sliver(xy[rest])):
                cuts.append((_fatness(xy[piece]), piece, rest))
        if not cuts:
            return None
        _, piece, ring = max(cuts, key=lambda c: c[0])
        pieces.append(piece)
    return pieces + [ring]


def _triangles(ring: list[int], xy: np.ndarray, maxv: int) -> list[list[int]] | None:
    """A convex polygon as triangles (fattest ears first); the vertex limit is for the merge."""
    return _ear_clip(ring, xy, "fat")


def _extended(xy: np.ndarray, steiner: np.ndarray) -> np.ndarray:
    return np.vstack([xy, steiner[:, :2]]) if len(steiner) else xy


def _quality_key(polys: list[list[int]], xy: np.ndarray) -> tuple[int, int]:
    """Decompositions compare by slivers first, then polygon count."""
    return sum(_is_sliver(xy[p]) for p in polys), len(polys)


def _is_sliver(pts: np.ndarray) -> bool:
    """Needle-like polygon: area / perimeter² below _SLIVER (an equilateral triangle has 0.048)."""
    return _fatness(pts) <= _SLIVER


def _ear_clip(ring: list[int], xy: np.ndarray, mode: str) -> list[list[int]] | None:
    """Triangulate a simple (possibly weakly simple, bridged) ring; None if it fails.

    mode picks which valid ear is cut: "fat" = the largest smallest angle, "first" = the first
    in ring order (long fans), "far" = the ear with the longest new diagonal.
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

    def ear_score(i: int) -> float | None:
        a, b, c = prv[i], i, nxt[i]
        pa, pb, pc = pts[a], pts[b], pts[c]
        if _turn(pa, pb, pc) <= 0:
            return None
        xs, ys = (ptl[a][0], ptl[b][0], ptl[c][0]), (ptl[a][1], ptl[b][1], ptl[c][1])
        in_box = (px >= min(xs)) & (px <= max(xs)) & (py >= min(ys)) & (py <= max(ys))
        cand = np.flatnonzero(in_box & alive_mask)
        rc = ring_arr[cand]
        q = pts[cand[(rc != ring[a]) & (rc != ring[b]) & (rc != ring[c])]]
        if len(q):
            q = q[~(np.all(q == pa, axis=1) | np.all(q == pb, axis=1) | np.all(q == pc, axis=1))]
            inside = (_cross_many(pa, pb, q) >= 0) & (_cross_many(pb, pc, q) >= 0) & (_cross_many(pc, pa, q) >= 0)
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
    tris = []
    while len(alive) > 3:
        while heap and score.get(-heap[0][1]) != -heap[0][0]:
            heapq.heappop(heap)
        if not heap:
            rest = [ring[i] for i in _walk(next(iter(alive)), nxt, len(alive))]
            if abs(_signed_area(xy[rest])) <= 1e-12 * max(1.0, float(np.ptp(xy[rest]) ** 2)):
                return _split_at_straight_vertices(tris, rest, xy)
            return None
        i = -heapq.heappop(heap)[1]
        a, c = prv[i], nxt[i]
        tris.append([ring[a], ring[i], ring[c]])
        alive.discard(i)
        alive_mask[i] = False
        del score[i]
        nxt[a], prv[c] = c, a
        for j in (a, c):
            score[j] = ear_score(j)
            if score[j] is not None:
                heapq.heappush(heap, (-score[j], -j))
    last = [ring[i] for i in _walk(next(iter(alive)), nxt, 3)]
    if _turn(xy[last[0]], xy[last[1]], xy[last[2]]) > 0:
        tris.append(last)
        return tris
    return _split_at_straight_vertices(tris, last, xy)


def _split_at_straight_vertices(tris: list[list[int]], chain: list[int], xy: np.ndarray) -> list[list[int]] | None:
    """Ear clipping ends on a flat remainder when vertices lie straight between two others; each
    such vertex lies inside an edge of a clipped triangle, which is split there so the vertex
    stays (a neighbour polygon may use it: dropping it would leave a T-junction)."""
    tris = [list(t) for t in tris]
    for v in dict.fromkeys(chain):
        if any(v in t for t in tris):
            continue
        p = xy[v]
        for t in tris:
            for k in range(3):
                a, b = t[k], t[(k + 1) % 3]
                ab, ap = xy[b] - xy[a], p - xy[a]
                along = float(ab @ ap) / max(float(ab @ ab), 1e-300)
                if 0.0 < along < 1.0 and _turn(xy[a], p, xy[b]) == 0:
                    c = t[(k + 2) % 3]
                    t[:] = [a, v, c]
                    tris.append([v, b, c])
                    break
            else:
                continue
            break
        else:
            return None
    return tris


def _delaunay_flips(tris: list[list[int]], xy: np.ndarray) -> list[list[int]]:
    """Flip inner diagonals until locally Delaunay (fat triangles; no slivers where avoidable)."""
    tris = [list(t) for t in tris]
    owner = {}
    for k, t in enumerate(tris):
        for j in range(3):
            owner[(t[j], t[(j + 1) % 3])] = k
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
        if a == b or not _in_circle(xy[u], xy[v], xy[a], xy[b]):
            continue
        quad = [xy[a], xy[u], xy[b], xy[v]]
        if any(_turn(quad[k - 1], quad[k], quad[(k + 1) % 4]) <= 0 for k in range(4)):
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


def _in_circle(a, b, c, d) -> bool:
    """Is d strictly inside the circumcircle of the CCW triangle abc?"""
    rows = [(p[0] - d[0], p[1] - d[1]) for p in (a, b, c)]
    (ax, ay), (bx, by), (cx, cy) = rows
    aw, bw, cw = ax * ax + ay * ay, bx * bx + by * by, cx * cx + cy * cy
    det = ax * (by * cw - bw * cy) - ay * (bx * cw - bw * cx) + aw * (bx * cy - by * cx)
    scale = max(aw, bw, cw) ** 2
    return det > 1e-12 * scale


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


def _merge(pieces: list[list[int]], xy: np.ndarray, maxv: int, removable: set[int] = frozenset()) -> list[list[int]]:
    """Hertel-Mehlhorn: remove diagonals (longest first) while the union stays convex and small.

    A vertex in `removable` (a Steiner vertex) that a union leaves straight and no other polygon
    uses is dropped from it.
    """
    polys: dict[int, list[int]] = {k: list(t) for k, t in enumerate(pieces)}
    uses: dict[int, int] = {}
    owner: dict[tuple[int, int], int] = {}
    for k, t in polys.items():
        for j, v in enumerate(t):
            owner[(v, t[(j + 1) % len(t)])] = k
            uses[v] = uses.get(v, 0) + 1
    heap = []
    for a, b in owner:
        if a < b and (b, a) in owner:
            heapq.heappush(heap, (-float(np.hypot(*(xy[a] - xy[b]))), a, b))
    next_id = len(pieces)
    while heap:
        _, a, b = heapq.heappop(heap)
        p, q = owner.get((a, b)), owner.get((b, a))
        if p is None or q is None or p == q:
            continue
        merged = _try_merge(polys[p], polys[q], a, b, xy, maxv, removable, uses)
        if merged is None:
            continue
        for poly in (polys.pop(p), polys.pop(q)):
            for j, v in enumerate(poly):
                owner.pop((v, poly[(j + 1) % len(poly)]), None)
                uses[v] -= 1
        polys[next_id] = merged
        for j, v in enumerate(merged):
            owner[(v, merged[(j + 1) % len(merged)])] = next_id
            uses[v] += 1
        for j in range(len(merged)):
            u, v = merged[j], merged[(j + 1) % len(merged)]
            if (v, u) in owner:
                heapq.heappush(heap, (-float(np.hypot(*(xy[u] - xy[v]))), min(u, v), max(u, v)))
        next_id += 1
    return [_rotate_min(poly) for poly in polys.values()]


def _rotate_min(poly: list[int]) -> list[int]:
    k = poly.index(min(poly))
    return poly[k:] + poly[:k]


def _try_merge(pp: list[int], qq: list[int], a: int, b: int, xy: np.ndarray, maxv: int,
               removable: set[int], uses: dict[int, int]) -> list[int] | None:
    """Union of two polygons sharing edge a->b (in pp) / b->a (in qq), or None if not convex / too big."""
    i = pp.index(a)
    pp = pp[i:] + pp[:i]  # a, b, ...
    j = qq.index(b)
    qq = qq[j:] + qq[:j]  # b, a, ...
    merged = pp[1:] + qq[1:]  # b ... (pp) ..., a ... (qq) ...
    if len(set(merged)) != len(merged):
        return None
    if removable:
        merged = [v for k, v in enumerate(merged)
                  if not (v in removable and uses[v] == (v in pp) + (v in qq)
                          and _turn(xy[merged[k - 1]], xy[v], xy[merged[(k + 1) % len(merged)]]) == 0)]
    if len(merged) > maxv:
        return None
    n = len(merged)
    for k in range(n):
        o, v, w = xy[merged[k - 1]], xy[merged[k]], xy[merged[(k + 1) % n]]
        turn = _turn(o, v, w)
        if turn < 0 or (turn == 0 and np.dot(v - o, w - v) <= 0):
            return None
    return merged


def _union_ring(group: list[list[int]]) -> list[int] | None:
    """Outline of adjacent polygons as one counter-clockwise ring; None if it is not a single simple loop."""
    edges = {(p[k], p[(k + 1) % len(p)]) for p in group for k in range(len(p))}
    nxt = {}
    for a, b in edges:
        if (b, a) not in edges:
            if a in nxt:
                return None
            nxt[a] = b
    if not nxt:
        return None
    start = next(iter(nxt))
    ring, v = [start], nxt[start]
    while v != start:
        if v not in nxt or len(ring) > len(nxt):
            return None
        ring.append(v)
        v = nxt[v]
    return ring if len(ring) == len(nxt) else None


def _split_in_two(ring: list[int], xy: np.ndarray, maxv: int) -> list[list[int]] | None:
    """The ring as one convex polygon, or cut by its fattest chord into two, each within maxv
    vertices; None if neither is possible.

    A chord only changes the corners at its ends, so it must end at every reflex corner: none
    (already convex), one (chords from it) or two (the chord between them).
    """
    n = len(ring)
    if n > 2 * maxv - 2:
        return None
    pts = [tuple(xy[v]) for v in ring]
    reflex = [k for k in range(n) if not _convex_corner(pts[k - 1], pts[k], pts[(k + 1) % n])]
    if not reflex:
        return [ring] if n <= maxv else None
    if len(reflex) > 2:
        return None
    if len(reflex) == 2:
        chords = [tuple(reflex)]
    else:
        chords = [(min(reflex[0], j), max(reflex[0], j)) for j in range(n) if (j - reflex[0]) % n not in (0, 1, n - 1)]
    best, best_fat = None, _SLIVER
    for i, j in chords:
        if j - i < 2 or j - i > n - 2:
            continue
        first, second = ring[i : j + 1], ring[j:] + ring[: i + 1]
        if len(first) > maxv or len(second) > maxv:
            continue
        if not all(_convex_corner(*corner) for corner in (
                (pts[j - 1], pts[j], pts[i]), (pts[j], pts[i], pts[i + 1]),
                (pts[i - 1], pts[i], pts[j]), (pts[i], pts[j], pts[(j + 1) % n]))):
            continue
        fat = min(_fatness(xy[first]), _fatness(xy[second]))
        if fat > best_fat:
            best, best_fat = [first, second], fat
    return best


def _convex_corner(o, v, w) -> bool:
    """Left turn at v, or straight on (not back)."""
    turn = _turn(o, v, w)
    return turn > 0 or (turn == 0 and (v[0] - o[0]) * (w[0] - v[0]) + (v[1] - o[1]) * (w[1] - v[1]) > 0)


def _fatness(pts: np.ndarray) -> float:
    """Area / perimeter², signed (0.048 for an equilateral triangle, 0.0625 for a square)."""
    p = pts[:, :2].tolist()
    perimeter = sum(math.dist(p[k - 1], p[k]) for k in range(len(p)))
    return _signed_area(pts) / max(perimeter * perimeter, 1e-300)


def _regroup(pieces: list[list[int]], xy: np.ndarray, maxv: int, removable: set[int] = frozenset()) -> list[list[int]]:
    """Local search after merging: three adjacent polygons whose outline one chord cuts into two
    convex polygons (each within maxv) become those two, until no such triple is left."""
    polys: dict[int, list[int]] = dict(enumerate(pieces))
    owner: dict[tuple[int, int], int] = {}
    uses: dict[int, int] = {}
    for k, p in polys.items():
        for j, v in enumerate(p):
            owner[(v, p[(j + 1) % len(p)])] = k
            uses[v] = uses.get(v, 0) + 1
    next_id = len(pieces)
    tried: set[frozenset] = set()

    def neighbours(k: int) -> set[int]:
        p = polys[k]
        found = {owner.get((p[(j + 1) % len(p)], v)) for j, v in enumerate(p)}
        found.discard(None)
        return found

    progress = True
    while progress:
        progress = False
        for a in list(polys):
            if a not in polys:
                continue
            near_a = neighbours(a)
            triples = {frozenset((a, b, c)) for b in near_a for c in (near_a | neighbours(b)) - {a, b}}
            for triple in triples - tried:
                tried.add(triple)
                group = [polys[k] for k in triple]
                ring = _union_ring(group)
                if ring is None:
                    continue
                inside = {}
                for p in group:
                    for v in p:
                        inside[v] = inside.get(v, 0) + 1
                ring = [v for k, v in enumerate(ring)
                        if not (v in removable and uses[v] == inside[v]
                                and _turn(xy[ring[k - 1]], xy[v], xy[ring[(k + 1) % len(ring)]]) == 0)]
                split = _split_in_two(ring, xy, maxv)
                if split is None:
                    continue
                for k in triple:
                    p = polys.pop(k)
                    for j, v in enumerate(p):
                        owner.pop((v, p[(j + 1) % len(p)]), None)
                        uses[v] -= 1
                for p in split:
                    polys[next_id] = p
                    for j, v in enumerate(p):
                        owner[(v, p[(j + 1) % len(p)])] = next_id
                        uses[v] = uses.get(v, 0) + 1
                    next_id += 1
                progress = True
                break
    return [_rotate_min(p) for p in polys.values()]

