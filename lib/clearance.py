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

from .navmesh import NavMesh

_SAMPLES = 33
_REFINES = 3


def _point_segment_distances(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(S, M) distances from S points to M segments a->b (3D)."""
    ab = b - a
    denom = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-18)
    ap = points[:, None, :] - a[None, :, :]
    t = np.clip(np.einsum("smk,mk->sm", ap, ab) / denom, 0.0, 1.0)
    closest = a[None] + t[..., None] * ab[None]
    return np.linalg.norm(points[:, None, :] - closest, axis=2)


def _max_min_distance(p0: np.ndarray, p1: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """max over the segment p0-p1 of the distance to the nearest of segments a-b (sample + refine)."""
    if len(a) == 0:
        return math.inf
    lo, hi = 0.0, 1.0
    best = 0.0
    for _ in range(_REFINES + 1):
        ts = np.linspace(lo, hi, _SAMPLES)
        pts = p0[None] + ts[:, None] * (p1 - p0)[None]
        d = _point_segment_distances(pts, a, b).min(axis=1)
        k = int(np.argmax(d))
        best = max(best, float(d[k]))
        step = (hi - lo) / (_SAMPLES - 1)
        lo, hi = max(0.0, ts[k] - step), min(1.0, ts[k] + step)
    return best


def _segment_distance(a0, a1, b0, b1) -> float:
    """Distance between two 3D segments (exact enough for clearance: endpoint + interior checks)."""
    pts = np.array([a0, a1])
    d1 = _point_segment_distances(pts, b0[None], b1[None]).min()
    pts = np.array([b0, b1])
    d2 = _point_segment_distances(pts, a0[None], a1[None]).min()
    d = min(d1, d2)
    # Interior-interior closest pair (segments crossing in projection or skew).
    u, v, w = a1 - a0, b1 - b0, a0 - b0
    A, B, C, D, E = u @ u, u @ v, v @ v, u @ w, v @ w
    den = A * C - B * B
    if den > 1e-18:
        s, t = (B * E - C * D) / den, (A * E - B * D) / den
        if 0 <= s <= 1 and 0 <= t <= 1:
            d = min(d, float(np.linalg.norm(w + s * u - t * v)))
    return float(d)


def _poly_bounds(mesh: NavMesh) -> tuple[np.ndarray, np.ndarray]:
    lo = np.minimum.reduceat(mesh.vertices[mesh.poly_vertices], mesh.poly_offsets[:-1], axis=0)
    hi = np.maximum.reduceat(mesh.vertices[mesh.poly_vertices], mesh.poly_offsets[:-1], axis=0)
    return lo, hi


def _portal_clearance(mesh: NavMesh, e: int, start: list[int], half: float, near_row: list[float], box_row: list[float], bnd_by_poly, nbrs) -> float:
    """Largest r - r0 for portal e: flood polygons while they may hold a closer boundary edge.

    The distance to the nearest boundary edge is 1-Lipschitz along the portal, so its maximum is at
    most (distance at the midpoint, `near_row` per boundary edge) + half the portal length; that
    bound stops the flood (`box_row`: midpoint to polygon bbox distances), and the sampled maximum
    is computed once over the boundary edges gathered."""
    seen = set(start)
    edges: list[int] = []
    heap = [(0.0, p) for p in start]
    upper = math.inf
    while heap:
        bound, p = heapq.heappop(heap)
        if bound >= upper:
            break
        for col in bnd_by_poly[p]:
            edges.append(col)
            upper = min(upper, near_row[col] + half)
        for q in nbrs[p]:
            if q in seen:
                continue
            seen.add(q)
            qb = box_row[q] - half
            if qb < upper:
                heapq.heappush(heap, (max(qb, 0.0), q))
    # An edge at least `upper` from every portal point never is the nearest one below `upper`.
    edges = [col for col in edges if near_row[col] - half <= upper]
    if not edges:
        return math.inf
    v, nxt = mesh.vertices, mesh.edge_next_vertex
    slots = np.flatnonzero(mesh.neighbors < 0)[edges]
    p0, p1 = v[mesh.poly_vertices[e]], v[nxt[e]]
    return _max_min_distance(p0, p1, v[mesh.poly_vertices[slots]], v[nxt[slots]])


def compute_clearance(mesh: NavMesh) -> NavMesh:
    """Fill `edge_clearance` (E,) and `cross_clearance` (flat n×n per polygon) in place and return mesh."""
    r0 = float(mesh.params.agent_radius)
    E = len(mesh.poly_vertices)
    edge_clear = np.zeros(E)
    if mesh.is_empty:
        mesh.edge_clearance, mesh.cross_clearance = edge_clear, np.zeros(0)
        return mesh
    edge_poly = mesh.edge_polygon
    nxt = mesh.edge_next_vertex
    boundary = mesh.neighbors < 0
    bnd_slots = np.flatnonzero(boundary)
    bnd_by_poly: list[list[int]] = [[] for _ in range(mesh.polygon_count)]
    for col, e in enumerate(edge_poly[bnd_slots].tolist()):
        bnd_by_poly[e].append(col)
    nbrs = [[q for q in mesh.neighbors[mesh.poly_offsets[p] : mesh.poly_offsets[p + 1]].tolist() if q >= 0] for p in range(mesh.polygon_count)]
    lo, hi = _poly_bounds(mesh)
    # Each undirected portal once: the twin slot gets the same value.
    twin = _twin_slots(mesh, edge_poly, nxt)
    portals = np.flatnonzero(~boundary)
    portals = portals[~((twin[portals] >= 0) & (twin[portals] < portals))]
    v = mesh.vertices
    p0, p1 = v[mesh.poly_vertices[portals]], v[nxt[portals]]
    mids, halves = 0.5 * (p0 + p1), 0.5 * np.linalg.norm(p1 - p0, axis=1)
    wa, wb = v[mesh.poly_vertices[bnd_slots]], v[nxt[bnd_slots]]
    for c0 in range(0, len(portals), 64):  # chunks bound the (portals, edges, 3) temporaries
        chunk = slice(c0, c0 + 64)
        m = mids[chunk]
        near = _point_segment_distances(m, wa, wb) if len(bnd_slots) else np.zeros((len(m), 0))
        box = np.linalg.norm(np.maximum(np.maximum(lo[None] - m[:, None], m[:, None] - hi[None]), 0.0), axis=2)
        for k, e in enumerate(portals[chunk].tolist()):
            start = [int(edge_poly[e]), int(mesh.neighbors[e])]
            edge_clear[e] = r0 + _portal_clearance(mesh, e, start, float(halves[c0 + k]), near[k].tolist(), box[k].tolist(), bnd_by_poly, nbrs)
    for e in np.flatnonzero(~boundary):
        t = twin[e]
        if t >= 0 and t < e:
            edge_clear[e] = edge_clear[t]
    is_bnd_vertex = np.zeros(len(mesh.vertices), dtype=bool)
    is_bnd_vertex[mesh.poly_vertices[boundary]] = True
    is_bnd_vertex[nxt[boundary]] = True
    cross = np.zeros(int(mesh.cross_offsets[-1]))
    offs = mesh.cross_offsets
    for p in range(mesh.polygon_count):
        a, b = mesh.poly_offsets[p], mesh.poly_offsets[p + 1]
        n = b - a
        block = np.zeros((n, n))
        for i in range(n):
            if boundary[a + i]:
                continue
            block[i, i] = edge_clear[a + i]
            for j in range(i + 1, n):
                if boundary[a + j]:
                    continue
                gap = _side_gap(mesh, a, n, i, j, boundary, is_bnd_vertex, nxt, v)
                block[i, j] = block[j, i] = min(edge_clear[a + i], edge_clear[a + j], r0 + 0.5 * gap)
        cross[offs[p] : offs[p + 1]] = block.reshape(-1)
    mesh.edge_clearance, mesh.cross_clearance = edge_clear, cross
    return mesh


def _side_features(a, n, start, stop, boundary, is_bnd_vertex, mesh, nxt):
    """Boundary edges and boundary corners of the polygon chain strictly between edges start and stop."""
    segs, pts = [], []
    k = (start + 1) % n
    while k != stop:
        e = a + k
        vi = int(mesh.poly_vertices[e])
        if is_bnd_vertex[vi]:
            pts.append(vi)
        if boundary[e]:
            segs.append(e)
        k = (k + 1) % n
    return segs, pts


def _side_gap(mesh, a, n, i, j, boundary, is_bnd_vertex, nxt, v) -> float:
    """Distance between the walls on the two sides of the polygon's passage from edge i to edge j."""
    s1, c1 = _side_features(a, n, i, j, boundary, is_bnd_vertex, mesh, nxt)
    s2, c2 = _side_features(a, n, j, i, boundary, is_bnd_vertex, mesh, nxt)
    if not (s1 or c1) or not (s2 or c2):
        return math.inf
    segs1 = [(v[mesh.poly_vertices[e]], v[nxt[e]]) for e in s1] + [(v[c], v[c]) for c in c1]
    segs2 = [(v[mesh.poly_vertices[e]], v[nxt[e]]) for e in s2] + [(v[c], v[c]) for c in c2]
    return min(_segment_distance(x0, x1, y0, y1) for x0, x1 in segs1 for y0, y1 in segs2)


def _twin_slots(mesh: NavMesh, edge_poly: np.ndarray, nxt: np.ndarray) -> np.ndarray:
    """(E,) the slot of the same edge seen from the neighbouring polygon, or -1."""
    key = {(int(u), int(w)): e for e, (u, w) in enumerate(zip(mesh.poly_vertices, nxt))}
    twin = np.full(len(nxt), -1, dtype=np.int64)
    for e, (u, w) in enumerate(zip(mesh.poly_vertices, nxt)):
        if mesh.neighbors[e] >= 0:
            twin[e] = key.get((int(w), int(u)), -1)
    return twin
