"""Reachability on a NavMeshQuery: every polygon an agent of a given radius can reach from a start."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .filter import QueryFilter
from .graph import FITS_TOL


@dataclass(frozen=True)
class ReachableSet:
    """Polygon ids reached and their walkable area seen from above (m²)."""

    polygons: np.ndarray
    area: float


def reachable(query, start, radius: float | None = None, filter: QueryFilter | None = None) -> ReachableSet:
    """Every polygon an agent of `radius` can reach from start, through portals and crossings wide
    enough and areas the filter allows."""
    f = query.filter_for(filter)
    r = query.check_radius(radius)
    loc = query.located(start, "reachable start")
    passable = query.passable(f)
    p0 = loc.polygon
    if not passable[p0]:
        return ReachableSet(np.zeros(0, dtype=np.int64), 0.0)
    graph = query.graph
    offs, nb, clear, twin = graph.offs_l, graph.nb_l, graph.edge_clear_l, graph.twin_l
    seen = {(p0, -1)}
    polys = {p0}
    stack = [(p0, -1)]
    while stack:
        p, entry = stack.pop()
        for e in range(offs[p], offs[p + 1]):
            q = nb[e]
            if q < 0 or e - offs[p] == entry or clear[e] < r - FITS_TOL or not passable[q]:
                continue
            if not graph.cross_ok(p, entry, e - offs[p], r):
                continue
            state = (q, twin[e] - offs[q] if twin[e] >= 0 else -1)
            if state not in seen:
                seen.add(state)
                polys.add(q)
                stack.append(state)
    ids = np.array(sorted(polys), dtype=np.int64)
    return ReachableSet(ids, float(query.index.area[ids].sum()))
