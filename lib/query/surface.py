"""Surface queries: raycast along the mesh, move along the surface with wall sliding, random points."""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from ..errors import NavMeshError
from ..navmesh import NavMesh
from .index import closest_on_segments, get_index, walk_segment
from .search import DEFAULT_FILTER, QueryFilter


@dataclass
class RaycastHit:
    """t in [0, 1] where the ray hit a wall (inf if it reached the end); point, the wall's normal facing the ray (XY) and polygons visited."""

    t: float
    point: np.ndarray
    normal: np.ndarray
    polygons: list[int]


def raycast(mesh: NavMesh, start, end, filter: QueryFilter | None = None) -> RaycastHit:
    """Walk the segment start->end (XY) over the polygon graph from the polygon under start, as Detour's raycast."""
    f = filter or DEFAULT_FILTER
    index = get_index(mesh)
    p, s = index.locate(start)
    if p < 0:
        raise NavMeshError("raycast start is not on the navmesh")
    e3 = np.asarray(end, dtype=np.float64).reshape(3)
    t, edge, visited = walk_segment(mesh, index, p, s, e3, lambda q: f.passable(mesh.areas[q]))
    if edge < 0:
        xy = e3[:2]
        return RaycastHit(math.inf, np.array([xy[0], xy[1], index.height(visited[-1], xy)]), np.zeros(3), visited)
    xy = s[:2] + t * (e3[:2] - s[:2])
    w = index.edge_b[edge, :2] - index.edge_a[edge, :2]
    n = np.array([-w[1], w[0], 0.0]) / max(float(np.linalg.norm(w)), 1e-18)  # faces back toward the ray
    return RaycastHit(t, np.array([xy[0], xy[1], index.height(visited[-1], xy)]), n, visited)


def move_along_surface(mesh: NavMesh, start, target, filter: QueryFilter | None = None) -> tuple[np.ndarray, list[int]]:
    """Move from start toward target staying on the mesh; blocked moves slide along walls (Detour semantics)."""
    f = filter or DEFAULT_FILTER
    index = get_index(mesh)
    p, s = index.locate(start)
    if p < 0:
        raise NavMeshError("move start is not on the navmesh")
    tgt = np.asarray(target, dtype=np.float64).reshape(3)
    centre = 0.5 * (s[:2] + tgt[:2])
    radius = 0.5 * float(np.linalg.norm(tgt[:2] - s[:2])) + 1e-3
    best_pt, best_d, best_poly = s, math.inf, p
    parent = {p: -1}
    queue = deque([p])
    while queue:
        p = queue.popleft()
        if index.inside_xy(p, tgt[:2]):
            best_pt, best_poly = np.array([tgt[0], tgt[1], index.height(p, tgt[:2])]), p
            break
        a0, a1 = int(mesh.poly_offsets[p]), int(mesh.poly_offsets[p + 1])
        for e in range(a0, a1):
            q = int(mesh.neighbors[e])
            wall = q < 0 or not f.passable(mesh.areas[q])
            if wall:
                pt, _ = closest_on_segments(tgt, index.edge_a[e : e + 1], index.edge_b[e : e + 1])
                dd = float(np.linalg.norm(pt[:2] - tgt[:2]))
                if dd < best_d:
                    best_pt, best_d, best_poly = pt, dd, p
                continue
            if q in parent:
                continue
            seg, _ = closest_on_segments(np.array([centre[0], centre[1], 0.0]), np.c_[index.edge_a[e : e + 1, :2], [0.0]], np.c_[index.edge_b[e : e + 1, :2], [0.0]])
            if np.linalg.norm(seg[:2] - centre) <= radius:
                parent[q] = p
                queue.append(q)
    path = [best_poly]
    while parent[path[-1]] != -1:
        path.append(parent[path[-1]])
    return best_pt, path[::-1]


def random_point(mesh: NavMesh, rng: np.random.Generator | None = None, filter: QueryFilter | None = None) -> tuple[int, np.ndarray]:
    """Uniformly random point (by XY area) on polygons the filter allows."""
    f = filter or DEFAULT_FILTER
    rng = rng or np.random.default_rng()
    index = get_index(mesh)
    weights = np.where([f.passable(a) for a in mesh.areas], np.maximum(index.area, 0.0), 0.0)
    total = weights.sum()
    if total <= 0:
        raise NavMeshError("no walkable polygon passes the filter; cannot pick a random point")
    p = int(rng.choice(len(weights), p=weights / total))
    verts = mesh.vertices[mesh.polygon(p)][:, :2]
    a, b, c = verts[0], verts[1:-1], verts[2:]
    tri = 0.5 * np.abs((b[:, 0] - a[0]) * (c[:, 1] - a[1]) - (b[:, 1] - a[1]) * (c[:, 0] - a[0]))
    k = int(rng.choice(len(tri), p=tri / tri.sum()))
    u, v = rng.random(2)
    if u + v > 1:
        u, v = 1 - u, 1 - v
    xy = a + u * (b[k] - a) + v * (c[k] - a)
    return p, np.array([xy[0], xy[1], index.height(p, xy)])
