"""Clearance precompute: which agent radii can cross each portal and pass through each polygon.

Definition (checkable by a user): an agent of radius r (>= the bake radius r0) can cross a portal
iff some point of the portal is at least r - r0 away from every navmesh boundary edge that the
polygon graph reaches from the portal within that distance; `edge_clearance` stores the largest
such r (0 on boundary edges, inf when no boundary edge is ever reached).

`cross_clearance[p][i, j]` additionally requires the agent to fit between the boundary on the two
sides of polygon p between its edges i and j: min(edge_clearance[i], edge_clearance[j],
r0 + half the distance between the boundary edges/corners of the two sides).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from .geometry import points_to_own_segment_3d, segment_segment_distance_3d, three_points_to_segment_3d
from .navmesh import Clearance, PolyMesh
from .progress import SILENT, Progress

_SAMPLES = 33
_REFINES = 3
# Distances (m) are compared with this much slack, so a wall exactly at a bound is never dropped
# for float noise.
_DISTANCE_NOISE = 1e-9
# Portal samples times candidate walls measured at once by _portals_max_min: its (pairs, samples)
# temporaries stay within a few MB each (at 2M, ten of them were the clearance stage's 146 MB peak
# on an 83k-triangle level).
_CHUNK_SAMPLES = 1 << 19


def _max_min_distances(p0: np.ndarray, p1: np.ndarray, starts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per segment i, max over p0[i]-p1[i] of the distance to the nearest of its segments a-b.

    Segment i owns the rows starts[i]:starts[i + 1] of a/b (each non-empty). Sample + refine, all
    segments at once: every round samples each segment at _SAMPLES points around its best so far.
    After each round but the last, segments a-b that cannot be the nearest one anywhere in the
    later (nested) windows are dropped: distance is 1-Lipschitz along the segment and every later
    sample lies within one spacing of this round's samples (half a spacing in the first round,
    which covers the whole segment), so the result is unchanged."""
    count = len(p0)
    owner = np.repeat(np.arange(count), np.diff(starts))
    lo, hi, best = np.zeros(count), np.ones(count), np.zeros(count)
    frac = np.linspace(0.0, 1.0, _SAMPLES)
    rows = np.arange(count)
    length = np.linalg.norm(p1 - p0, axis=1)
    for round_ in range(_REFINES + 1):
        ts = lo[:, None] + (hi - lo)[:, None] * frac[None]
        pts = p0[:, None] + ts[..., None] * (p1 - p0)[:, None]
        pair_d = points_to_own_segment_3d(pts[owner], a, b)
        d = np.minimum.reduceat(pair_d, starts[:-1], axis=0)
        k = np.argmax(d, axis=1)
        best = np.maximum(best, d[rows, k])
        step = (hi - lo) / (_SAMPLES - 1)
        if round_ < _REFINES:
            slack = (0.5 if round_ == 0 else 1.0) * step * length + _DISTANCE_NOISE
            keep = pair_d.min(axis=1) - slack[owner] <= (best + slack)[owner]
            owner, a, b = owner[keep], a[keep], b[keep]
            starts = np.searchsorted(owner, np.arange(count + 1))
        tk = ts[rows, k]
        lo, hi = np.maximum(0.0, tk - step), np.minimum(1.0, tk + step)
    return best


def _poly_bounds(mesh: PolyMesh) -> tuple[np.ndarray, np.ndarray]:
    lo = np.minimum.reduceat(mesh.vertices[mesh.poly_vertices], mesh.poly_offsets[:-1], axis=0)
    hi = np.maximum.reduceat(mesh.vertices[mesh.poly_vertices], mesh.poly_offsets[:-1], axis=0)
    return lo, hi


def _box_distances(ends: tuple[tuple, tuple, tuple], box: tuple) -> tuple[float, float, float]:
    """3D distances from the three points `ends` to the box (lo xyz, hi xyz)."""
    lx, ly, lz, hx, hy, hz = box
    out = []
    for x, y, z in ends:
        gx = lx - x if x < lx else x - hx if x > hx else 0.0
        gy = ly - y if y < ly else y - hy if y > hy else 0.0
        gz = lz - z if z < lz else z - hz if z > hz else 0.0
        out.append(math.sqrt(gx * gx + gy * gy + gz * gz))
    return out[0], out[1], out[2]


def _segment_lower_bound(d0: float, dm: float, d1: float, half: float) -> float:
    """Lower bound on a 1-Lipschitz distance over a segment of half-length `half` from its values at
    the ends and middle: every point is within half/2 of one of the three."""
    low = min(d0, dm, d1) - 0.5 * half
    if dm - half > low:
        low = dm - half
    return low if low > 0.0 else 0.0


def _portal_candidates(
    start: list[int], ends: tuple[tuple, tuple, tuple], half: float, walls, boxes, bnd_by_poly, nbrs
) -> tuple[list[int], float]:
    """Boundary edges that may be nearest to some point of a portal, and an upper bound on the
    portal's max-min distance: flood polygons while they may hold a closer boundary edge.

    The distance to one boundary edge is convex along the portal, so its maximum is at an endpoint;
    the smallest such maximum bounds the max-min distance and stops the flood. Distances are
    measured only for what the flood reaches (plain floats: a flood touches a few dozen polygons),
    so the cost grows with the mesh, not with its square."""
    seen = set(start)
    edges: list[tuple[int, float]] = []
    heap = [(0.0, p) for p in start]
    upper = math.inf
    while heap:
        bound, p = heapq.heappop(heap)
        if bound >= upper:
            break
        for col in bnd_by_poly[p]:
            d0, dm, d1 = three_points_to_segment_3d(ends, walls[col])
            edges.append((col, _segment_lower_bound(d0, dm, d1, half)))
            upper = min(upper, d0 if d0 > d1 else d1)
        for q in nbrs[p]:
            if q in seen:
                continue
            seen.add(q)
            qb = _segment_lower_bound(*_box_distances(ends, boxes[q]), half)
            if qb < upper:
                heapq.heappush(heap, (qb, q))
    # An edge at least `upper` from every portal point never is the nearest one below `upper`.
    return [col for col, near in edges if near <= upper], upper


def _portals_max_min(
    p0: np.ndarray, p1: np.ndarray, cand: list[list[int]], upper: np.ndarray, wa: np.ndarray, wb: np.ndarray
) -> np.ndarray:
    """(P,) max-min distance of each portal to its candidate walls (inf without any), in chunks
    that bound the (pairs, samples, 3) temporaries.

    Candidates farther than `upper` (a bound on the answer) from the whole portal are dropped first:
    they are never the nearest wall, so the result is unchanged."""
    out = np.full(len(cand), math.inf)
    sizes = np.array([len(c) for c in cand], dtype=np.int64)
    if not sizes.any():
        return out
    owner = np.repeat(np.arange(len(cand)), sizes)
    cols = np.fromiter((col for c in cand for col in c), dtype=np.int64, count=int(sizes.sum()))
    keep = segment_segment_distance_3d(p0[owner], p1[owner], wa[cols], wb[cols]) <= upper[owner] + _DISTANCE_NOISE
    owner, cols = owner[keep], cols[keep]
    sizes = np.bincount(owner, minlength=len(cand))
    cand_starts = np.concatenate(([0], np.cumsum(sizes)))
    has = np.flatnonzero(sizes > 0)
    budget = max(1, _CHUNK_SAMPLES // _SAMPLES)
    c0 = 0
    while c0 < len(has):
        c1 = c0 + 1
        total = sizes[has[c0]]
        while c1 < len(has) and total + sizes[has[c1]] <= budget:
            total += sizes[has[c1]]
            c1 += 1
        idx = has[c0:c1]
        rows = cols[cand_starts[idx[0]] : cand_starts[idx[-1] + 1]]
        starts = np.concatenate(([0], np.cumsum(sizes[idx])))
        out[idx] = _max_min_distances(p0[idx], p1[idx], starts, wa[rows], wb[rows])
        c0 = c1
    return out


def compute_clearance(mesh: PolyMesh, progress: Progress = SILENT) -> Clearance:
    """The widest agent radius that can cross each edge of the polygons (standing on their floor),
    and that can cross each polygon from one edge to another."""
    r0 = float(mesh.params.agent_radius)
    E = len(mesh.poly_vertices)
    edge_clear = np.zeros(E)
    if mesh.is_empty:
        return Clearance(edge_clear, np.zeros(0))
    edge_poly = mesh.edge_polygon
    nxt = mesh.edge_next_vertex
    boundary = mesh.neighbors < 0
    bnd_slots = np.flatnonzero(boundary)
    bnd_by_poly: list[list[int]] = [[] for _ in range(mesh.polygon_count)]
    for col, e in enumerate(edge_poly[bnd_slots].tolist()):
        bnd_by_poly[e].append(col)
    nbrs = [
        [q for q in mesh.neighbors[mesh.poly_offsets[p] : mesh.poly_offsets[p + 1]].tolist() if q >= 0]
        for p in range(mesh.polygon_count)
    ]
    lo, hi = _poly_bounds(mesh)
    # Each undirected portal once: the twin slot gets the same value.
    twin = mesh.edge_twin
    portals = np.flatnonzero(~boundary)
    portals = portals[~((twin[portals] >= 0) & (twin[portals] < portals))]
    v = mesh.vertices
    p0, p1 = v[mesh.poly_vertices[portals]], v[nxt[portals]]
    mids, halves = 0.5 * (p0 + p1), 0.5 * np.linalg.norm(p1 - p0, axis=1)
    wa, wb = v[mesh.poly_vertices[bnd_slots]], v[nxt[bnd_slots]]
    walls = [tuple(r) for r in np.concatenate([wa, wb], axis=1).tolist()]
    boxes = [tuple(r) for r in np.concatenate([lo, hi], axis=1).tolist()]
    cand: list[list[int]] = []
    uppers: list[float] = []
    owners, others = edge_poly[portals].tolist(), mesh.neighbors[portals].tolist()
    for k, (a, m, b, half) in enumerate(zip(p0.tolist(), mids.tolist(), p1.tolist(), halves.tolist())):
        progress.at(0.5 * k / len(portals))
        cols, up = _portal_candidates(
            [owners[k], others[k]], (tuple(a), tuple(m), tuple(b)), half, walls, boxes, bnd_by_poly, nbrs
        )
        cand.append(cols)
        uppers.append(up)
    edge_clear[portals] = r0 + _portals_max_min(p0, p1, cand, np.array(uppers), wa, wb)
    progress.at(0.6)
    for e in np.flatnonzero(~boundary):
        t = twin[e]
        if t >= 0 and t < e:
            edge_clear[e] = edge_clear[t]
    is_bnd_vertex = np.zeros(len(mesh.vertices), dtype=bool)
    is_bnd_vertex[mesh.poly_vertices[boundary]] = True
    is_bnd_vertex[nxt[boundary]] = True
    cross = _cross_clearance(mesh, r0, edge_clear, boundary.tolist(), is_bnd_vertex.tolist())
    return Clearance(edge_clear, cross)


def _cross_clearance(
    mesh: PolyMesh, r0: float, edge_clear: np.ndarray, boundary: list[bool], is_bnd_vertex: list[bool]
) -> np.ndarray:
    """Flat per-polygon n×n cross clearances; all side-gap segment pairs are measured in one batch."""
    cross = np.zeros(int(mesh.cross_offsets[-1]))
    offs, poly_offs = mesh.cross_offsets.tolist(), mesh.poly_offsets.tolist()
    pv, nxt, ec = mesh.poly_vertices.tolist(), mesh.edge_next_vertex.tolist(), edge_clear.tolist()
    slots: list[tuple[int, int, float]] = []  # (flat [i, j], flat [j, i], min of the two portal clearances)
    starts: list[int] = []
    x0: list[int] = []
    x1: list[int] = []
    y0: list[int] = []
    y1: list[int] = []
    for p in range(mesh.polygon_count):
        a, n, base = poly_offs[p], poly_offs[p + 1] - poly_offs[p], offs[p]
        for i in range(n):
            if boundary[a + i]:
                continue
            cross[base + i * n + i] = ec[a + i]
            for j in range(i + 1, n):
                if boundary[a + j]:
                    continue
                lim = min(ec[a + i], ec[a + j])
                side1 = _side_features(a, n, i, j, boundary, is_bnd_vertex, pv, nxt)
                side2 = _side_features(a, n, j, i, boundary, is_bnd_vertex, pv, nxt)
                if not side1 or not side2:
                    cross[base + i * n + j] = cross[base + j * n + i] = lim
                    continue
                slots.append((base + i * n + j, base + j * n + i, lim))
                starts.append(len(x0))
                for s0, s1 in side1:
                    for t0, t1 in side2:
                        x0.append(s0)
                        x1.append(s1)
                        y0.append(t0)
                        y1.append(t1)
    if slots:
        v = mesh.vertices
        gap = np.minimum.reduceat(segment_segment_distance_3d(v[x0], v[x1], v[y0], v[y1]), starts)
        ij, ji, lim = (np.array(c) for c in zip(*slots))
        cross[ij] = cross[ji] = np.minimum(lim, r0 + 0.5 * gap)
    return cross


def _side_features(
    a: int,
    n: int,
    start: int,
    stop: int,
    boundary: list[bool],
    is_bnd_vertex: list[bool],
    pv: list[int],
    nxt: list[int],
) -> list[tuple[int, int]]:
    """Boundary edges and boundary corners (as degenerate segments) of the polygon chain strictly
    between edges start and stop, as vertex index pairs."""
    feats = []
    k = (start + 1) % n
    while k != stop:
        e = a + k
        if is_bnd_vertex[pv[e]]:
            feats.append((pv[e], pv[e]))
        if boundary[e]:
            feats.append((pv[e], nxt[e]))
        k = (k + 1) % n
    return feats
