"""A* over portal crossing points for an agent radius and a filter, time-sliced (after Norberg).

The search picks the corridor: nodes are portals, each entered at the point of the portal (shrunk
to where the agent fits) that is on the way to the goal. `refine` then draws the path near it.
"""

from __future__ import annotations

import heapq
import math
import operator

from ..errors import NavMeshError
from .graph import FITS_TOL
from .path import IN_PROGRESS, PathPlan

# Search nodes at or below this id stand for off-mesh link crossings (portal nodes are edge slots,
# -1 and -2 the start and goal).
LINK_NODES = -3
# A line toward the goal whose cross product with a portal (m²) is at most this is parallel to it.
PARALLEL_TOL = 1e-12


def link_node(k: int, forward: bool) -> int:
    """The search node of crossing off-mesh link k, start to end (forward) or back."""
    return LINK_NODES - 2 * k - (0 if forward else 1)


def link_of(node: int) -> tuple[int, bool]:
    """(link, forward) of a link crossing node."""
    k, backward = divmod(LINK_NODES - node, 2)
    return k, not backward


def crossing_point(x: tuple, goal: tuple, a: tuple, b: tuple) -> tuple:
    """Point of portal a-b minimising |x - y| + |y - goal| (in XY; height along the portal).

    Plain float tuples: this runs once per A* edge and numpy's per-call overhead dominates there."""
    abx, aby = b[0] - a[0], b[1] - a[1]
    dx, dy = goal[0] - x[0], goal[1] - x[1]
    den = dx * aby - dy * abx
    if abs(den) > PARALLEL_TOL:
        wx, wy = a[0] - x[0], a[1] - x[1]
        t = (dx * wy - dy * wx) / den
        s = (abx * wy - aby * wx) / den
        if 0.0 <= t <= 1.0 and s >= 0.0:
            return (a[0] + t * abx, a[1] + t * aby, a[2] + t * (b[2] - a[2]))
    da = math.dist(a, x) + math.dist(goal, a)
    db = math.dist(b, x) + math.dist(goal, b)
    return a if da <= db else b


def portal_ends(mesh, graph, e: int, d: float) -> tuple[tuple, tuple]:
    """Left and right ends (walking out of the edge's polygon) of portal e as the A* crosses it: each
    end on a wall corner pulled in by d (at most to the middle), so crossing points stay where an
    agent of clearance d can be. An estimate for choosing the corridor; `refine` draws the path."""
    u, w = int(mesh.poly_vertices[e]), int(graph.nxt[e])
    right, left = mesh.vertices[u].tolist(), mesh.vertices[w].tolist()
    length = math.dist(right[:2], left[:2])
    if d <= 0.0 or length <= 0.0:
        return tuple(left), tuple(right)
    pull = min(d / length, 0.5)
    t0 = pull if graph.corner[u] else 0.0
    t1 = 1.0 - pull if graph.corner[w] else 1.0
    return _lerp(right, left, t1), _lerp(right, left, t0)


def _lerp(a: list, b: list, t: float) -> tuple:
    return tuple(x + t * (y - x) for x, y in zip(a, b))


class PortalEnds(dict):
    """Portal edge slot -> `portal_ends` for clearance d, each made on first use (the A* looks
    them up once per edge it relaxes, so a hit is a plain dict lookup)."""

    def __init__(self, mesh, graph, d: float):
        super().__init__()
        self.mesh, self.graph, self.d = mesh, graph, d

    def __missing__(self, e: int) -> tuple[tuple, tuple]:
        ends = self[e] = portal_ends(self.mesh, self.graph, e, self.d)
        return ends


class SlicedSearch:
    """A* whose nodes are portal crossing points, advanced by `update(max_iterations)` and pollable.
    Made by `NavMeshQuery.search`; the query draws the path once the search ends.

    Each update reads the filter (the query's own unless one was given) and the polygon flags, as
    Detour's updateSlicedFindPath does: where what they admit or cost changed since the search
    began (a door closed), the search starts again under them, so its answer never crosses what they
    exclude; nodes_expanded counts every start's expansions."""

    def __init__(self, query, ends: tuple[tuple, tuple, float], filter, begun: tuple | None = None):
        """ends: (start, goal, radius), checked; filter: as given to the query (None: the query's
        own, read at each update); begun: the (filter, state) the caller already read, to plan now."""
        self.query = query
        self.nodes_expanded = 0
        self.status = IN_PROGRESS
        self.plan: PathPlan | None = None
        self._ends, self._filter = ends, filter
        self._result = None
        # Node (portal edge slot; -1 start, -2 goal; link_node(k, to) for a crossing of off-mesh link k
        # to its end `to`) -> (g, parent node, polygon entered, crossing point, entry edge index).
        self._nodes: dict[int, tuple[float, int, int, tuple, int]] = {}
        self._closed: set[int] = set()
        self._heap: list = []
        # The caller read the filter just now: the first update need not read it again.
        self._just_begun = begun is not None
        if begun is not None:
            self._begin(*begun)

    def _begin(self, f, state: tuple) -> None:
        """Plan (again) under this filter and flag state, with nothing expanded yet."""
        self.plan = plan = self.query._plan(*self._ends, f, state)
        self._nodes, self._closed, self._heap = {}, set(), []
        if plan.result is not None:
            self.status, self._result = plan.result.status, plan.result
            return
        self._best_node, self._best_h = -1, math.dist(plan.start, plan.goal)
        self._nodes[-1] = (0.0, -1, plan.start_poly, plan.start, -1)
        heapq.heappush(self._heap, (0.0, 0.0, -1))

    def update(self, max_iterations: int = 1 << 30) -> str:
        """Expand up to max_iterations nodes; returns the status (in_progress, found, partial, unreachable)."""
        if self.status != IN_PROGRESS:
            return self.status
        try:
            budget = operator.index(max_iterations)
        except TypeError:
            budget = 0
        if isinstance(max_iterations, bool) or budget < 1:
            raise NavMeshError(f"max_iterations must be a whole number >= 1, got {max_iterations!r}")
        if self._just_begun:
            self._just_begun = False
        else:
            f, state = self.query._filter_state(self._filter)
            if self.plan is None:
                self._begin(f, state)
            elif state != self.plan.filter_state:
                # Only a change in what the filter admits or what it costs starts the search again
                # (a flag set that admits the same polygons does not: a loop that sets flags every
                # frame would never let the search end).
                same = self.query.passable(f, state) == self.plan.passable
                if same and [f.cost(a) for a in range(len(self.plan.costs))] == self.plan.costs:
                    self.plan.filter_state = state
                else:
                    self._begin(f, state)
            if self.status != IN_PROGRESS:
                return self.status
        query, plan = self.query, self.plan
        assert plan is not None  # planned above
        graph = query.graph
        offs, nb, areas, twin = graph.offs_l, graph.nb_l, graph.areas_l, graph.twin_l
        cross, cross_offs = graph.cross_l, graph.cross_offsets_l
        passable, costs, portals, open_edges = plan.passable, plan.costs, plan.portals, plan.open_edges
        goal, hscale, fits = plan.goal, plan.hscale, plan.radius - FITS_TOL
        nodes, closed, heap = self._nodes, self._closed, self._heap
        it = 0
        while self.status == IN_PROGRESS and it < budget:
            if not heap:
                self._finish(self._best_node, True, self._nodes[self._best_node][0], self._nodes[self._best_node][3])
                break
            _, g, node = heapq.heappop(heap)
            if node in closed or g > nodes[node][0]:
                continue
            closed.add(node)
            it += 1
            self.nodes_expanded += 1
            if node == -2:
                self._finish(nodes[-2][1], plan.partial, nodes[-2][0], plan.goal)
                break
            _, _, p, x, entry = nodes[node]
            h = math.dist(x, goal)
            if h < self._best_h:
                self._best_node, self._best_h = node, h
            cost = costs[areas[p]]
            if p == plan.goal_poly:
                g2 = g + cost * h
                if -2 not in nodes or g2 < nodes[-2][0]:
                    nodes[-2] = (g2, node, p, goal, -1)
                    heapq.heappush(heap, (g2, g2, -2))
            for k, forward, here, there, q in graph.links_from.get(p, ()):
                price = plan.link_costs[k]
                if price is None or not passable[q]:
                    continue  # the filter excludes the link's area, or the agent is too wide for it
                link = link_node(k, forward)
                g2 = g + cost * math.dist(x, here) + price * math.dist(here, there)
                old = nodes.get(link)
                if link not in closed and (old is None or g2 < old[0]):
                    nodes[link] = (g2, node, q, there, -1)
                    heapq.heappush(heap, (g2 + hscale * math.dist(there, goal), g2, link))
            a, b = offs[p], offs[p + 1]
            row = cross_offs[p] + entry * (b - a) - a if cross is not None and entry >= 0 else -1
            for e in range(a, b):
                if not open_edges[e] or e - a == entry or e in closed:
                    continue
                if row >= 0 and cross[row + e] < fits:
                    continue
                q = nb[e]
                left, right = portals[e]
                y = crossing_point(x, goal, left, right)
                g2 = g + cost * math.dist(y, x)
                old = nodes.get(e)
                if old is None or g2 < old[0]:
                    tw = twin[e]
                    nodes[e] = (g2, node, q, y, tw - offs[q] if tw >= 0 else -1)
                    heapq.heappush(heap, (g2 + hscale * math.dist(y, goal), g2, e))
        return self.status

    def _finish(self, node: int, partial: bool, g: float, end: tuple) -> None:
        """Draw the path along the corridor ending at node's polygon. The search's own polyline
        through its crossing points reaches `end` at cost g. jumps: (corridor position entered,
        link, forward) for each off-mesh link the corridor crosses."""
        plan = self.plan
        assert plan is not None  # a search finishes only once planned
        corridor, crossings, through = [], [], []
        while node != -1:
            corridor.append(self._nodes[node][2])
            crossings.append(node)
            through.append(self._nodes[node][3])
            node = self._nodes[node][1]
        corridor.append(plan.start_poly)
        crossings.append(-1)
        corridor.reverse()
        crossings.reverse()
        through.reverse()
        jumps = [(i, *link_of(c)) for i, c in enumerate(crossings) if c <= LINK_NODES]
        result = self.query._draw(plan, corridor, partial, self.nodes_expanded, (g, end), jumps, crossings[1:], through)
        self._result, self.status = result, result.status

    def result(self):
        """The path once the search has finished (raises while it is in progress)."""
        if self._result is None:
            raise NavMeshError("search is still in progress; call update() until status is not 'in_progress'")
        return self._result
