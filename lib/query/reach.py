"""Reachable set: every polygon an agent of a given radius can reach from a start point."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..errors import NavMeshError
from ..navmesh import NavMesh
from .search import DEFAULT_FILTER, QueryFilter, check_radius, get_graph


@dataclass
class ReachableSet:
    """Polygon ids reached and their walkable area seen from above (m²)."""

    polygons: np.ndarray
    area: float


def reachable(mesh: NavMesh, start, radius: float | None = None, filter: QueryFilter | None = None) -> ReachableSet:
    """Flood the polygon graph through portals and crosses wide enough for `radius`, honouring the filter."""
    f = filter or DEFAULT_FILTER
    r = check_radius(mesh, radius)
    graph = get_graph(mesh)
    p0, _ = graph.index.locate(start)
    if p0 < 0:
        raise NavMeshError("reachable start is not on the navmesh")
    if not f.passable(mesh.areas[p0]):
        return ReachableSet(np.zeros(0, dtype=np.int64), 0.0)
    seen_states = {(p0, -1)}
    polys = {p0}
    queue = deque([(p0, -1)])
    while queue:
        p, entry = queue.popleft()
        a = int(mesh.poly_offsets[p])
        for k in range(int(graph.sizes[p])):
            e = a + k
            q = int(mesh.neighbors[e])
            if q < 0 or k == entry or graph.edge_clear[e] < r - 1e-9 or not f.passable(mesh.areas[q]):
                continue
            if not graph.cross_ok(mesh, p, entry, k, r):
                continue
            tw = int(graph.twin[e])
            state = (q, tw - int(mesh.poly_offsets[q]) if tw >= 0 else -1)
            if state not in seen_states:
                seen_states.add(state)
                polys.add(q)
                queue.append(state)
    ids = np.array(sorted(polys), dtype=np.int64)
    return ReachableSet(ids, float(graph.index.area[ids].sum()))
