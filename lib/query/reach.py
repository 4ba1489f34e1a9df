"""Reachability on a NavMeshQuery: every polygon an agent of a given radius can reach from a start."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .filter import QueryFilter
from .graph import FITS_TOL


@dataclass(frozen=True)
class ReachableSet:
    """Polygon ids reached and their walkable area seen from above (m²); when none is, the reason."""

    polygons: np.ndarray
    area: float
    reason: str = ""


def reachable(query, start, radius: float | None = None, filter: QueryFilter | None = None) -> ReachableSet:
    """Every polygon an agent of `radius` can reach from start, as a path search would: from the
    start moved clear of the walls (as find_path moves it), through portals and crossings wide
    enough and off-mesh links the agent fits, in areas the filter allows. Empty when the start's
    polygon is excluded or no point near it keeps the radius, with the reason."""
    f = query.filter_for(filter)
    r = query.check_radius(radius)
    loc = query.located(start, "reachable start")
    state = query._state(f)
    passable = query.passable(f, state)
    none = np.zeros(0, dtype=np.int64)
    if not passable[loc.polygon]:
        return ReachableSet(none, 0.0, query.excluded_reason("start", loc.polygon))
    d = r - query.r0
    cleared = query._clear(loc.polygon, tuple(loc.point.tolist()), d, query.extent[0] + d, passable)
    if cleared is None:
        return ReachableSet(
            none,
            0.0,
            f"no point within {query.extent[0] + d:g} m of the start keeps an agent of radius {r:g} m "
            "off the navmesh's edge",
        )
    p0 = cleared[0]
    link_costs = query._link_costs(r, f, state)
    graph = query.graph
    offs, nb, clear, twin = graph.offs_l, graph.nb_l, graph.edge_clear_l, graph.twin_l
    seen = {(p0, -1)}
    polys = {p0}
    stack = [(p0, -1)]

    def reach(state: tuple[int, int]) -> None:
        if state not in seen:
            seen.add(state)
            polys.add(state[0])
            stack.append(state)

    while stack:
        p, entry = stack.pop()
        for k, _, _, _, q in graph.links_from.get(p, ()):
            if link_costs[k] is not None and passable[q]:
                reach((q, -1))
        for e in range(offs[p], offs[p + 1]):
            q = nb[e]
            if q < 0 or e - offs[p] == entry or clear[e] < r - FITS_TOL or not passable[q]:
                continue
            if graph.cross_ok(p, entry, e - offs[p], r):
                reach((q, twin[e] - offs[q] if twin[e] >= 0 else -1))
    ids = np.array(sorted(polys), dtype=np.int64)
    return ReachableSet(ids, float(query.index.area[ids].sum()))
