"""Drawing the path along the corridor a search chose: the part of NavMeshQuery that turns a
corridor into points (a mixin, so the query's caches and helpers stay its own).

At the bake radius with every polygon allowed at one cost, the corridor's taut string (`funnel`) is
the path when it is provably the shortest; otherwise the shortest chain over corner points
(`refine`) is, searched with the string (or the search's own polyline) as the length to beat.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..navmesh import NavMesh
from . import funnel, refine
from .chain import shortest_chain
from .graph import MeshGraph
from .index import MeshIndex
from .path import FOUND, PARTIAL, PARTIAL_REASON, PathPlan, PathResult, path_length, result, unreachable

# A chain must be shorter than the best one so far by this much (m) to replace it.
LENGTH_TOL = 1e-9
# A partial path's end this close (m) to its start is the start: the agent stays where it is.
SAME_POINT = 1e-12
# Times a corridor is rerouted around a vertex its string bends at with no wall (each makes it shorter).
REROUTES = 64
# Corner-to-corner visibility answers kept at the bake radius.
VISIBILITY_SLOTS = 1 << 16


class PathDrawing:
    """Path drawing for NavMeshQuery, which supplies what is declared here."""

    mesh: NavMesh
    index: MeshIndex
    graph: MeshGraph
    extent: tuple[float, float]
    climb: float
    # The drawing's own state: the certificate (built on the first taut string), corner-to-corner
    # visibility at the bake radius, and the vertices' XY as tuples.
    _certificate: funnel.PlanarCertificate | None
    _visible: dict[tuple, bool]
    _vertex_xy: list[tuple[float, float]]

    if TYPE_CHECKING:

        def _walker(self, passable: refine.Allowed | None) -> Callable: ...

        def _clear(
            self, poly: int, xyz: tuple, d: float, limit: float, passable, toward: tuple | None = None
        ) -> tuple[int, tuple] | None: ...

        def _cached(self, key: tuple, make: Callable) -> Any: ...

        def _radius_data(self, d: float) -> Any: ...

    def _draw(
        self,
        plan: PathPlan,
        corridor: list[int],
        partial: bool,
        nodes_expanded: int,
        known: tuple[float, tuple],
        jumps: list,
        crossings: list[int],
        through: list[tuple],
    ) -> PathResult:
        """The path along the corridor the search chose: the string pulled taut through its portals
        when that is provably the shortest path (bake radius, every polygon allowed at one cost,
        one floor), else the shortest chain over corner points whose every segment walks over the
        mesh and keeps d from the walls. known: (length, end) of the search's own polyline through
        its crossing points, which the path ends in a straight line from; at the bake radius with
        uniform costs that lies on the corridor, so it bounds the shortest path. crossings: the
        search's nodes after the start (portal edge slots), through: the points it crosses them at.

        A partial path ends at the point of its last polygon nearest the goal, cleared of the walls;
        where no path reaches that point (the clear point lies beyond a crossing too narrow for the
        agent, which the connected pieces do not see), at the search's own last crossing point, and
        failing that at the start."""
        ends = [(plan.goal_poly, plan.goal)]
        if partial:
            ends = [(corridor[-1], known[1]), (plan.start_poly, plan.start)]
            if corridor[-1] != plan.goal_poly:
                q = self.index.closest_point(corridor[-1], plan.goal)
                reach = plan.reach or plan.passable
                cleared = self._clear(corridor[-1], tuple(q.tolist()), plan.d, math.inf, reach, plan.goal)
                ends[:0] = [] if cleared is None else [cleared]
            else:
                ends[:0] = [(plan.goal_poly, plan.goal)]
        for goal_poly, goal in ends:
            if partial and math.dist(goal, plan.start) <= SAME_POINT:
                return result(
                    PARTIAL, [plan.start], [plan.start_poly], nodes_expanded, tuple(corridor), plan, PARTIAL_REASON
                )
            if jumps:
                return self._draw_with_links(plan, corridor, partial, nodes_expanded, goal, goal_poly, jumps)
            drawn = self._draw_to(plan, corridor, partial, nodes_expanded, known, crossings, through, goal, goal_poly)
            if drawn is not None:
                return drawn
        return unreachable(f"no path keeps an agent of radius {plan.radius:g} m off the navmesh's edge", nodes_expanded)

    def _draw_to(
        self,
        plan: PathPlan,
        corridor: list[int],
        partial: bool,
        nodes_expanded: int,
        known: tuple[float, tuple],
        crossings: list[int],
        through: list[tuple],
        goal: tuple,
        goal_poly: int,
    ) -> PathResult | None:
        """The path along the corridor to goal (on goal_poly), as `_draw` describes; None when no
        chain keeps clear of the walls."""
        status, reason = (PARTIAL, PARTIAL_REASON) if partial else (FOUND, "")
        bound = known[0] + math.dist(known[1], goal) if plan.d == 0.0 and plan.uniform else math.inf
        walk = plan.walk
        drawn = None
        if plan.d == 0.0 and plan.uniform and plan.everywhere:
            taut, proven = self._taut(plan, crossings, goal, goal_poly)
            if proven:
                draped = refine.drape(self.index, walk, taut[0], taut[1], self.climb, strict=True)
                if draped is not None:
                    return result(status, draped[0], draped[1], nodes_expanded, tuple(corridor), plan, reason)
            elif all(
                refine.segment_ok(self.index, walk, polys, a, b, 0.0, self.climb)
                for a, b, polys in zip(taut[0], taut[0][1:], taut[1])
            ):
                # A valid path: only shorter chains are looked for.
                drawn = self._chain(plan, corridor, goal, goal_poly, drawn=taut)
        if drawn is None:
            drawn = (
                self._chain(plan, corridor, goal, goal_poly, bound)
                if plan.uniform
                else self._costed_chain(plan, corridor, goal, goal_poly, through)
            )
        if drawn is None:
            return None
        points, polys = refine.drape(self.index, walk, drawn[0], drawn[1], self.climb)
        return result(status, points, polys, nodes_expanded, tuple(corridor), plan, reason)

    def _draw_with_links(
        self,
        plan: PathPlan,
        corridor: list[int],
        partial: bool,
        nodes_expanded: int,
        goal: tuple,
        goal_poly: int,
        jumps: list,
    ) -> PathResult:
        """The path along a corridor that crosses off-mesh links: the floor between links drawn as
        any path is (each piece from the last link's far end, cleared of the walls, to the next
        link's near end), each link a straight segment between its ends."""
        points, polys, link_segments = [], [], []
        here, here_poly, begin = plan.start, plan.start_poly, 0
        for position, k, forward in [*jumps, (len(corridor), None, None)]:
            if k is None:
                there, there_poly, after, after_poly = goal, goal_poly, None, -1
            else:
                link = self.mesh.links[k]
                near, far = (link.start, link.end) if forward else (link.end, link.start)
                reach = self.extent[0] + plan.d
                near_end = self._clear(corridor[position - 1], near, plan.d, reach, plan.passable)
                far_end = self._clear(corridor[position], far, plan.d, reach, plan.passable)
                if near_end is None or far_end is None:
                    return unreachable(
                        f"off-mesh link {link.name or k!r} ends too close to a wall for an "
                        f"agent of radius {plan.radius:g} m",
                        nodes_expanded,
                    )
                (there_poly, there), (after_poly, after) = near_end, far_end
            piece = replace(plan, start=here, start_poly=here_poly, goal=there, goal_poly=there_poly)
            drawn = self._chain(piece, corridor[begin:position], there, there_poly)
            if drawn is None:
                return unreachable(
                    f"no path keeps an agent of radius {plan.radius:g} m off the navmesh's edge", nodes_expanded
                )
            piece_points, piece_polys = refine.drape(self.index, plan.walk, drawn[0], drawn[1], self.climb)
            points += piece_points
            polys += piece_polys
            if after is not None:
                link_segments.append(len(points) - 1)
                here, here_poly, begin = after, after_poly, position
        status, reason = (PARTIAL, PARTIAL_REASON) if partial else (FOUND, "")
        return replace(
            result(status, points, polys, nodes_expanded, tuple(corridor), plan, reason), links=tuple(link_segments)
        )

    def _taut(self, plan: PathPlan, portals: list[int], goal: tuple, goal_poly: int):
        """((points, candidate polygons of each), proven) of the string pulled taut through these
        portal edges from the start to goal; proven: it is the shortest path (`funnel`)."""
        if self._certificate is None:
            self._certificate = funnel.PlanarCertificate(self.mesh)
        vertex_polys = self.graph.vertex_polys
        ports = [self._portal_line(e) for e in portals]
        for _ in range(REROUTES):
            string = funnel.pull_string(plan.start, goal, ports)
            loose = self._certificate.loose_bend(string)
            rerouted = None if loose < 0 else funnel.reroute(self.graph, portals, loose, plan.radius)
            if rerouted is None:
                break
            portals = rerouted
            ports = [self._portal_line(e) for e in portals]
        on_corridor = {self.graph.owner_l[e] for e in portals} | {goal_poly}
        points, polys = [plan.start], [self._holders(plan, plan.start_poly, plan.start, plan.passable)]
        for _, _, v in string[1:-1]:
            points.append(tuple(self.mesh.vertices[v].tolist()))
            polys.append([p for p in vertex_polys[v] if p in on_corridor])
        points.append(goal)
        polys.append(self._holders(plan, goal_poly, goal, plan.passable))
        return (points, polys), loose < 0 and self._certificate.nothing_inside(string, plan.start_poly)

    def _holders(self, plan: PathPlan, poly: int, point: tuple, allowed: refine.Allowed) -> list[int]:
        """The polygons `allowed` holding a path end on polygon poly (MeshIndex.holders), poly first."""
        found = plan.holders.get((poly, point))
        if found is None:
            found = plan.holders[(poly, point)] = self.index.holders(poly, point)
        return found if len(found) == 1 else [poly] + [q for q in found[1:] if allowed[q]]

    def _portal_line(self, e: int) -> tuple:
        """Portal edge e as `funnel.pull_string` takes it: left end, then right, walking out of its polygon."""
        right, left = self.graph.poly_vertices_l[e], self.graph.nxt_l[e]
        return (*self._vertex_xy[left], left, *self._vertex_xy[right], right)

    def _chain(
        self,
        plan: PathPlan,
        corridor: list[int],
        goal: tuple,
        goal_poly: int,
        known: float = math.inf,
        drawn: tuple | None = None,
    ):
        """(points, polygons) of the shortest valid chain start -> bend points -> goal: first over the
        corners near the corridor (or `drawn`, a valid path already known, such as the taut string);
        then, with uniform costs, over every corner a shorter path could bend at (inside the ellipse
        of that length about start and goal), which makes it exact up to the arcs' polygons. With
        area costs, `_costed_chain`'s. Bend points are reflex wall corners and the vertices where
        allowed polygons meet excluded ones. None when no chain keeps clear of the walls."""
        if not plan.uniform:
            return self._costed_chain(plan, corridor, goal, goal_poly)
        allowed = plan.passable
        border = self._border(plan)
        mask = None if border is None else border[0]
        walk = plan.walk
        seen: dict[tuple, bool] = {}  # links tested in this query, by their ends
        corners, extra = ([], []) if drawn is not None else refine.corridor_corners(self.graph, corridor, allowed, mask)
        best = drawn
        if best is None and math.isfinite(known):
            best = self._chain_over(plan, corners, extra, allowed, walk, goal, goal_poly, known + LENGTH_TOL, seen)
        if best is None:
            # On slopes the shortest chain over corners may be longer than the search's polyline.
            best = self._chain_over(plan, corners, extra, allowed, walk, goal, goal_poly, math.inf, seen)
        if best is not None and len(best[0]) <= 2:
            return best
        bound = math.inf if best is None else path_length(best[0]) - LENGTH_TOL
        reach = refine.arc_reach(plan.d)
        wider = refine.ellipse_vertices(self.graph.reflex_ids, self.graph.reflex_xy, plan.start, goal, bound, reach)
        wider_extra = (
            [] if border is None else refine.ellipse_vertices(border[1], border[2], plan.start, goal, bound, 0.0)
        )
        if set(wider) <= set(corners) and set(wider_extra) <= set(extra):
            return best  # every corner a shorter path could bend at was already tried
        return self._chain_over(plan, wider, wider_extra, allowed, walk, goal, goal_poly, bound, seen) or best

    def _pinned_chain(self, plan: PathPlan, corridor: list[int], through: list[tuple], goal: tuple, goal_poly: int):
        """The chain with area costs drawn run by run: the corridor cut where its cost changes, at
        the points the search crossed those portals, and each run's shortest chain within its own
        polygons (and the one its start lies on). Each run costs about one price per meter and is no
        longer than the search's polyline over it, so the path costs about what the search paid (a
        shortest chain over the whole corridor would cut across its costly polygons to save
        length). None when a run has no chain clear of the walls."""
        areas, costs = self.graph.areas_l, plan.costs
        price = [costs[areas[p]] for p in corridor]
        cuts = [i for i in range(1, len(corridor)) if price[i] != price[i - 1]]
        if not cuts:
            return None
        points: list[tuple] = []
        polys: list[list[int]] = []
        here, here_poly = plan.start, plan.start_poly
        for begin, end in zip([0, *cuts], [*cuts, len(corridor)]):
            run = corridor[begin:end]
            there, there_poly = (through[end - 1], corridor[end - 1]) if end < len(corridor) else (goal, goal_poly)
            allowed = _admitted(plan.passable, set(run) | {here_poly, there_poly})
            border = refine.BorderVertices(self.graph, allowed)
            corners, extra = refine.corridor_corners(self.graph, run, allowed, border)
            piece = replace(plan, start=here, start_poly=here_poly)
            drawn = self._chain_over(
                piece, corners, extra, allowed, self._walker(allowed), there, there_poly, math.inf, {}
            )
            if drawn is None:
                return None
            for point, holders in zip(drawn[0], drawn[1]):
                if not points or point != points[-1]:  # a run starts where the last one ended
                    points.append(point)
                    polys.append(holders)
            here, here_poly = there, corridor[end] if end < len(corridor) else there_poly
        return points, polys

    def _chain_cost(self, plan: PathPlan, chain: tuple) -> float:
        """What a chain costs the filter: each segment's length (XY) in a polygon times its area's
        cost, the polygons found by walking the segment from its start's first holder. A stretch
        along the edge between two polygons (a path hugging an area's border) costs the cheaper."""
        areas, costs = self.graph.areas_l, plan.costs
        walk = self._walker(None)
        total = 0.0
        points, polys = chain
        for a, b, holders in zip(points, points[1:], polys):
            entered: list[float] = []
            _, _, visited = walk(holders[0], a, b, entered)
            length = math.hypot(b[0] - a[0], b[1] - a[1])
            bounds = [0.0, *entered, 1.0]
            for k, p in enumerate(visited):
                mid = 0.5 * (bounds[k] + bounds[k + 1])
                at = (a[0] + mid * (b[0] - a[0]), a[1] + mid * (b[1] - a[1]))
                price = min(costs[areas[q]] for q in self.index.holders(p, at))
                total += (bounds[k + 1] - bounds[k]) * length * price
        return total

    def _costed_chain(
        self, plan: PathPlan, corridor: list[int], goal: tuple, goal_poly: int, through: list[tuple] | None = None
    ):
        """The chain with area costs that costs least of: the shortest within the corridor's
        polygons; the shortest within every polygon costing no more than the costliest the corridor
        crossed between its ends; and, given the search's crossing points (`through`), the corridor
        drawn run by run (`_pinned_chain`). The first keeps off costly polygons beside the corridor,
        the second may bend round a costly stretch the search had to cross or take a cheaper way the
        corridor missed, the third keeps to the search's own crossings from one cost to another; none
        is the cheapest everywhere. Drawn as if costs were uniform where none keeps clear of the
        walls."""
        areas, costs = self.graph.areas_l, plan.costs
        ends = (plan.start_poly, goal_poly)
        on_corridor = set(corridor) | set(ends)
        # The ends' own polygons are where the path must start and end whatever they cost; counted,
        # a goal in a costly area let the path cut through every cheaper one.
        top = max((costs[areas[p]] for p in corridor if p not in ends), default=-math.inf)
        within_cheapest = top <= min(costs)  # then the second holds the first and costs least per meter
        passable = plan.passable
        as_cheap = refine.Admitted(lambda p: passable[p] and (costs[areas[p]] <= top or p in ends))
        in_corridor = _admitted(passable, on_corridor)
        best, best_cost = None, math.inf
        for allowed in [as_cheap] if within_cheapest else [in_corridor, as_cheap]:
            border = refine.BorderVertices(self.graph, allowed)
            corners, extra = refine.corridor_corners(self.graph, corridor, allowed, border)
            drawn = self._chain_over(
                plan, corners, extra, allowed, self._walker(allowed), goal, goal_poly, math.inf, {}
            )
            if drawn is not None and (cost := self._chain_cost(plan, drawn)) < best_cost:
                best, best_cost = drawn, cost
        pinned = None if through is None else self._pinned_chain(plan, corridor, through, goal, goal_poly)
        if pinned is not None and (best is None or self._chain_cost(plan, pinned) < best_cost):
            best = pinned
        return best if best is not None else self._chain(replace(plan, uniform=True), corridor, goal, goal_poly)

    def _chain_over(
        self,
        plan: PathPlan,
        corners: list[int],
        extra: list[int],
        allowed: refine.Allowed,
        walk,
        goal: tuple,
        goal_poly: int,
        bound: float,
        seen: dict,
    ):
        """The shortest chain over the bend points of these reflex corners and extra vertices; `seen`
        keeps the links tested so far in this query, so a later pass does not walk them again."""
        data = self._radius_data(plan.d)
        nodes = [
            (plan.start, self._holders(plan, plan.start_poly, plan.start, allowed)),
            (goal, self._holders(plan, goal_poly, goal, allowed)),
        ]
        pulls: list[tuple[float, float] | None] = [None, None]
        cones: list[tuple | None] = [None, None]
        ends_near: dict[int, list[tuple]] = {}
        if plan.d > 0.0 and corners:
            reach = refine.arc_reach(plan.d)  # no arc's polygon reaches farther from its corner
            xy = self.mesh.vertices[corners, :2]
            for end in (plan.start, goal):
                for k in np.flatnonzero(np.hypot(xy[:, 0] - end[0], xy[:, 1] - end[1]) < reach).tolist():
                    ends_near.setdefault(corners[k], []).append(end)
        for c in corners:
            hit = data.corners.get(c)
            if hit is None:
                vertices = self.mesh.vertices
                hit = data.corners[c] = (
                    refine.corner_pull(self.graph, vertices, c, plan.d),
                    refine.corner_points(
                        self.index,
                        self.graph,
                        vertices,
                        c,
                        plan.d,
                        self._walker(None),
                        refine.arc_step(self.graph, c, plan.radius, plan.d),
                    ),
                )
            points = hit[1]
            for end in ends_near.get(c, ()):
                # A start or goal inside the polygon drawn about this corner's arc is reached
                # through points of its own (per query, so not kept with the corner's).
                points = points + refine.end_points(
                    self.index,
                    self.graph,
                    self.mesh.vertices,
                    c,
                    plan.d,
                    self._walker(None),
                    refine.arc_step(self.graph, c, plan.radius, plan.d),
                    end,
                )
            for xyz, polys, cone in points:
                if allowed[polys[0]]:
                    nodes.append((xyz, polys))
                    pulls.append(hit[0])
                    cones.append(cone)
        vertices = self.mesh.vertices
        for v in extra:
            polys = [p for p in self.graph.vertex_polys[v] if allowed[p]]
            if polys:
                nodes.append((tuple(vertices[v].tolist()), polys))
                pulls.append(None)
                cones.append(None)
        xyz = [n[0] for n in nodes]
        cached = plan.uniform and plan.d == 0.0 and plan.everywhere

        def visible(i: int, j: int) -> bool:
            if cached and i >= 2 and j >= 2:
                return self._corner_visible(nodes, i, j, walk)
            key = (xyz[i], xyz[j])
            ok = seen.get(key)
            if ok is None:
                ok = seen[key] = refine.segment_ok(self.index, walk, nodes[i][1], xyz[i], xyz[j], plan.d, self.climb)
            return ok

        chain = shortest_chain(xyz, visible, pulls, cones, bound)
        if chain is None:
            return None
        return [xyz[k] for k in chain], [nodes[k][1] for k in chain]

    def _border(self, plan: PathPlan):
        """(a bool per vertex, the ids marked, their XY) where polygons the plan allows meet ones it
        excludes; None if none are excluded. Kept per filter state."""
        if plan.everywhere:
            return None

        def make():
            mask = refine.border_mask(self.mesh, self.graph, plan.passable)
            ids = np.flatnonzero(mask)
            return mask, ids, self.mesh.vertices[ids, :2]

        return self._cached(("border", plan.filter_state), make)

    def _corner_visible(self, nodes, i: int, j: int, walk) -> bool:
        """Corner-to-corner visibility at the bake radius with every polygon allowed: it depends on
        the mesh alone, so it is kept across queries."""
        key = (nodes[i][0], nodes[j][0])
        seen = self._visible.get(key)
        if seen is None:
            seen = refine.segment_ok(self.index, walk, nodes[i][1], nodes[i][0], nodes[j][0], 0.0, self.climb)
            if len(self._visible) >= VISIBILITY_SLOTS:
                self._visible.clear()
            self._visible[key] = seen
        return seen


def _admitted(passable: list[bool], members: set[int]) -> refine.Admitted:
    """The polygons `passable` admits among members, as a bool per polygon read when needed."""
    return refine.Admitted(lambda p: passable[p] and p in members)
