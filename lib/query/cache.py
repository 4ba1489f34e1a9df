"""Path cache keyed by (start polygon, goal polygon, radius class), after seed 004."""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from ..navmesh import NavMesh
from .search import FOUND, PathResult, QueryFilter, SlicedSearch, _portals_of, build_path, check_radius, get_graph


class PathCache:
    """Stores portal corridors; a hit re-runs only the funnel for the query's own start, goal and radius.

    Radius classes are the sorted `radius_classes` bounds; a query of radius r uses the smallest bound
    >= r, and the corridor is searched for that bound, so it is wide enough for every r in the class.
    """

    def __init__(self, mesh: NavMesh, radius_classes: list[float] | None = None, capacity: int = 4096, filter: QueryFilter | None = None):
        r0 = float(mesh.params.agent_radius)
        self.mesh = mesh
        self.filter = filter
        self.classes = sorted(radius_classes) if radius_classes else [r0 * s for s in (1.0, 1.25, 1.5, 2.0, 3.0, 4.0)]
        self.capacity = capacity
        self.entries: OrderedDict[tuple, tuple[str, list[int]]] = OrderedDict()
        self.hits = self.misses = 0

    def radius_class(self, r: float) -> int:
        """Index of the smallest class bound >= r; len(classes) means 'exact radius' (no class fits)."""
        k = int(np.searchsorted(self.classes, r - 1e-12))
        return k

    def find_path(self, start, goal, radius: float | None = None) -> PathResult:
        mesh = self.mesh
        r = check_radius(mesh, radius)
        graph = get_graph(mesh)
        sp, s = graph.index.locate(start)
        gp, g = graph.index.locate(goal)
        k = self.radius_class(r)
        bound = self.classes[k] if k < len(self.classes) else r
        key = (sp, gp, k if k < len(self.classes) else ("exact", r))
        hit = self.entries.get(key)
        if hit is not None and hit[0] == FOUND and sp >= 0 and gp >= 0:
            self.hits += 1
            self.entries.move_to_end(key)
            res = build_path(mesh, graph, s, g, sp, hit[1], r - float(mesh.params.agent_radius))
            return res
        self.misses += 1
        search = SlicedSearch(mesh, start, goal, bound, self.filter)
        search.update()
        res = search.result()
        if res.status == FOUND:
            portals = _portals_of(mesh, res.corridor)
            self.entries[key] = (FOUND, portals)
            if len(self.entries) > self.capacity:
                self.entries.popitem(last=False)
            if not math.isclose(bound, r):
                res2 = build_path(mesh, graph, s, g, sp, portals, r - float(mesh.params.agent_radius))
                res2.nodes_expanded = res.nodes_expanded
                return res2
            return res
        if not math.isclose(bound, r):
            search = SlicedSearch(mesh, start, goal, r, self.filter)
            search.update()
            return search.result()
        return res
