"""NavMeshQuery: every query on one NavMesh and the state they share, as Detour's dtNavMeshQuery.

The query owns the spatial index, the search graph, the per-radius portal and corner data, the
connected pieces per radius and filter, and a path cache. The NavMesh it reads is immutable, so
none of that can go stale; polygon flags and the default filter live here and take effect on the
next query. Every cache is bounded. Keep one query per mesh in a game loop; the module-level
functions in `lib.query` build a throwaway query per call.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..components import connected_components
from ..errors import NavMeshError
from ..navmesh import NavMesh
from . import funnel, reach, refine, surface
from .filter import ALL_FLAGS, WALK_FLAG, QueryFilter
from .graph import FITS_TOL, MeshGraph
from .index import Location, MeshIndex, query_point, walk_segment
from .search import FOUND, PARTIAL, PARTIAL_REASON, UNREACHABLE, SlicedSearch, portal_ends

# Radii whose portal and corner data are kept (least recently used dropped first).
RADIUS_SLOTS = 4
# Values derived from a filter state (what it admits, its borders, connected pieces per radius) kept.
FILTER_SLOTS = 16
# Paths kept by default in the path cache.
PATH_CACHE_SIZE = 1024
# Inside a polygon that is not planar, a path's height is sampled every this many cells.
DRAPE_CELLS = 3
# A segment ends on the same floor as its end point when the surface there is within the agent's
# climb of it, and at least this much (m) on a mesh baked with no climb.
MIN_CLIMB = 0.05
# A radius this close (relative) to the bake radius is the bake radius: float32 rounding, as in
# a Blender property.
SAME_RADIUS = 1e-6
# A chain must be shorter than the best one so far by this much (m) to replace it.
LENGTH_TOL = 1e-9
# Times a corridor is rerouted around a vertex its string bends at with no wall (each makes it shorter).
REROUTES = 64
# Corner-to-corner visibility answers kept at the bake radius.
VISIBILITY_SLOTS = 1 << 16


@dataclass(frozen=True)
class PathResult:
    """status 'found' / 'partial' / 'unreachable'; points (K, 3) from start to goal; the polygon of
    each point; length in meters; the polygons searched through (corridor); and for anything but a
    plain 'found' a reason. start_distance / goal_distance: how far the query's start and goal lie
    from where the path starts and ends (0 when on the navmesh and clear of walls). links: for each
    off-mesh link the path takes, the index i of its segment points[i] -> points[i + 1] (where a
    game plays the jump or climb)."""

    status: str
    points: np.ndarray
    polygons: np.ndarray
    length: float
    nodes_expanded: int
    corridor: tuple = ()
    reason: str = ""
    start_distance: float = 0.0
    goal_distance: float = 0.0
    links: tuple = ()


@dataclass
class PathPlan:
    """One path query, resolved before the search: the located (and cleared) ends, the radius and
    its clearance d = r - r0, what the filter allows and costs, how the search crosses portals, the
    start and goal as asked, and the result when it is known without a search (unreachable, or the
    goal in plain sight)."""

    radius: float
    d: float
    passable: list
    costs: list
    uniform: bool
    portal: Callable
    filter_state: tuple = ()
    everywhere: bool = True
    start: tuple = ()
    goal: tuple = ()
    start_poly: int = -1
    goal_poly: int = -1
    partial: bool = False
    hscale: float = 1.0
    asked: tuple = ()
    result: PathResult | None = None
    link_costs: list = field(default_factory=list)


@dataclass
class _RadiusData:
    """What the queries for one clearance d = r - r0 share: portal parts and corner points."""

    portals: dict = field(default_factory=dict)
    corners: dict = field(default_factory=dict)


def _length(points) -> float:
    return sum(math.dist(a, b) for a, b in zip(points[:-1], points[1:]))


class NavMeshQuery:
    """Path, location, raycast and reachability queries on one NavMesh.

    extent: (across, up or down) in meters, how far from the navmesh a query point may lie and still
    be located on it, as Detour's half-extents; default `default_extent(mesh)`.
    filter: the default QueryFilter (area costs, exclusions, flag masks) for queries given none;
    by default the navmesh's own area costs (NavMesh.area_costs).
    """

    def __init__(self, mesh: NavMesh, filter: QueryFilter | None = None, extent: tuple[float, float] | None = None,
                 path_cache_size: int = PATH_CACHE_SIZE):
        self.mesh = mesh
        self.index = MeshIndex(mesh)
        self.graph = MeshGraph(mesh)
        self.filter = filter if filter is not None else QueryFilter(area_cost=dict(mesh.area_costs))
        self.extent = default_extent(mesh) if extent is None else _check_extent(extent)
        self.r0 = float(mesh.params.agent_radius)
        self.climb = max(float(mesh.params.agent_max_climb), MIN_CLIMB)
        self.drape_step = DRAPE_CELLS * float(mesh.params.cell_size)
        self._area_count = int(mesh.areas.max()) + 1 if mesh.polygon_count else 1
        self._flags = [WALK_FLAG] * mesh.polygon_count
        self._flags_version = 0
        self._radii: OrderedDict[float, _RadiusData] = OrderedDict()
        # Derived from the filter state (what it admits, its borders, connected pieces per radius).
        self._by_filter: OrderedDict[tuple, object] = OrderedDict()
        self._visible: dict[tuple, bool] = {}
        self._paths: OrderedDict[tuple, PathResult] = OrderedDict()
        self.path_cache_size = int(path_cache_size)
        self.cache_hits = self.cache_misses = 0
        self._vertex_xy = [tuple(p) for p in mesh.vertices[:, :2].tolist()]
        self._certificate: funnel.PlanarCertificate | None = None  # built on the first taut string

    # -- state -----------------------------------------------------------------------------------

    def set_poly_flags(self, polygon: int, flags: int) -> None:
        """Set a polygon's flags (Detour's setPolyFlags); filters admit polygons by them."""
        if not 0 <= int(polygon) < self.mesh.polygon_count:
            raise NavMeshError(f"polygon {polygon} does not exist (the navmesh has {self.mesh.polygon_count})")
        self._flags[int(polygon)] = int(flags) & ALL_FLAGS
        self._flags_version += 1

    def poly_flags(self, polygon: int) -> int:
        return self._flags[int(polygon)]

    def cache_sizes(self) -> dict[str, int]:
        """How many entries each of the query's caches holds (all bounded)."""
        return {
            "radii": len(self._radii),
            "portals": sum(len(r.portals) for r in self._radii.values()),
            "corners": sum(len(r.corners) for r in self._radii.values()),
            "filter_states": len(self._by_filter),
            "visibility": len(self._visible),
            "paths": len(self._paths),
        }

    def check_radius(self, radius: float | None) -> float:
        """The query radius (the bake radius when None); below the bake radius is an error."""
        if radius is None:
            return self.r0
        r = float(radius)
        if not math.isfinite(r):
            raise NavMeshError(f"agent radius must be a finite number of meters, got {radius}")
        if r < self.r0 - FITS_TOL:
            raise NavMeshError(f"agent radius {radius} is below the bake radius {self.r0}; rebake with a smaller radius")
        # A radius that is the bake radius up to float32 rounding (a Blender property) is the bake radius.
        return self.r0 if abs(r - self.r0) <= SAME_RADIUS * max(1.0, self.r0) else r

    # -- location --------------------------------------------------------------------------------

    def locate(self, point, extent: tuple[float, float] | None = None) -> Location:
        """The nearest polygon and surface point within the search extent of a 3D point (polygon -1
        and the distance to the navmesh when there is none that close)."""
        return self.index.locate(point, self.extent if extent is None else _check_extent(extent))

    # -- paths -----------------------------------------------------------------------------------

    def find_path(self, start, goal, radius: float | None = None, filter: QueryFilter | None = None) -> PathResult:
        """Shortest path for an agent of `radius` (>= the bake radius) from start to goal: it lies on
        the navmesh and keeps radius - bake radius from the navmesh's edge. Answers are cached per
        start, goal, radius and filter state."""
        f = filter if filter is not None else self.filter
        r = self.check_radius(radius)
        s, g = query_point(start, "start"), query_point(goal, "goal")
        key = (s, g, r, self._state(f))
        hit = self._paths.get(key)
        if hit is not None:
            self.cache_hits += 1
            self._paths.move_to_end(key)
            return hit
        self.cache_misses += 1
        search = self._search(s, g, r, f)
        search.update()
        result = search.result()
        self._paths[key] = result
        if len(self._paths) > self.path_cache_size:
            self._paths.popitem(last=False)
        return result

    def search(self, start, goal, radius: float | None = None, filter: QueryFilter | None = None) -> SlicedSearch:
        """A time-sliced path search: call `update(max_iterations)` until its status is not
        'in_progress' (Detour's initSlicedFindPath / updateSlicedFindPath), then `result()`."""
        f = filter if filter is not None else self.filter
        return self._search(query_point(start, "start"), query_point(goal, "goal"), self.check_radius(radius), f)

    def _search(self, s: tuple, g: tuple, r: float, f: QueryFilter) -> SlicedSearch:
        return SlicedSearch(self, self._plan(s, g, r, f))

    def _plan(self, s: tuple, g: tuple, r: float, f: QueryFilter) -> PathPlan:
        d = r - self.r0
        state = self._state(f)
        passable = self.passable(f)
        everywhere = self._cached(("everywhere", state), lambda: all(passable))
        costs = [f.cost(a) for a in range(self._area_count)]
        data = self._radius_data(d)
        plan = PathPlan(r, d, passable, costs, f.uniform(), lambda e: self._portal(data, e, d), state, everywhere,
                        hscale=f.min_cost(), link_costs=self._link_costs(r, f))
        across = self.extent[0]
        ends = []
        for name, xyz in (("start", s), ("goal", g)):
            loc = self.index.locate(xyz, self.extent)
            if loc.polygon < 0:
                far = self._unreachable(self._too_far(name, loc))
                plan.result = (replace(far, start_distance=loc.distance) if name == "start"
                               else replace(far, goal_distance=loc.distance))
                return plan
            if not passable[loc.polygon]:
                p = loc.polygon
                plan.result = self._unreachable(f"{name} lies on polygon {p} (area {int(self.mesh.areas[p])}, flags "
                                                f"{self._flags[p]:#x}), which the filter excludes")
                return plan
            ends.append(loc)
        start = self._clear(ends[0].polygon, tuple(ends[0].point.tolist()), d, across + d, passable)
        if start is None:
            plan.result = self._unreachable(f"no point within {across + d:g} m of the start keeps an agent of radius "
                                            f"{r:g} m off the navmesh's edge")
            return plan
        piece = self._piece(r, f, passable)
        goal_poly, goal_xyz = ends[1].polygon, tuple(ends[1].point.tolist())
        plan.partial = piece[goal_poly] != piece[start[0]]
        if plan.partial:
            # The goal lies in another connected piece: head for the closest point that can be reached.
            goal_poly, _, q = self.index.nearest(goal_xyz, piece == piece[start[0]])
            goal_xyz = tuple(q.tolist())
        goal = self._clear(goal_poly, goal_xyz, d, math.inf if plan.partial else across + d, passable)
        if goal is None:
            plan.result = self._unreachable(f"no point within {across + d:g} m of the goal keeps an agent of radius "
                                            f"{r:g} m off the navmesh's edge")
            return plan
        plan.start_poly, plan.start = start
        plan.goal_poly, plan.goal = goal
        plan.asked = (s, g)
        if not plan.partial and plan.uniform:
            straight = self._straight(plan)
            if straight is not None:
                plan.result = straight
        return plan

    def _straight(self, plan: PathPlan) -> PathResult | None:
        """The segment itself when the goal is in plain sight and the segment keeps d from walls."""
        if not refine.segment_ok(self.index, self._walker(plan.passable), [plan.start_poly], plan.start, plan.goal,
                                 plan.d, self.climb):
            return None
        points, polys = refine.drape(self.index, self._walker(plan.passable), [plan.start, plan.goal],
                                     [[plan.start_poly], [plan.goal_poly]], self.drape_step, self.climb)
        return self._result(FOUND, points, polys, 0, (plan.start_poly,), plan)

    def _draw(self, plan: PathPlan, corridor: list[int], partial: bool, nodes_expanded: int,
              known: tuple[float, tuple], jumps: list, crossings: list[int]) -> PathResult:
        """The path along the corridor the search chose: the string pulled taut through its portals
        when that is provably the shortest path (bake radius, every polygon allowed at one cost,
        one floor), else the shortest chain over corner points whose every segment walks over the
        mesh and keeps d from the walls. known: (length, end) of the search's own polyline through
        its crossing points, which the path ends in a straight line from; at the bake radius with
        uniform costs that lies on the corridor, so it bounds the shortest path. crossings: the
        search's nodes after the start (portal edge slots)."""
        goal, goal_poly = plan.goal, plan.goal_poly
        if partial and corridor[-1] != plan.goal_poly:
            goal_poly = corridor[-1]
            q = self.index.closest_point(goal_poly, plan.goal)
            cleared = self._clear(goal_poly, tuple(q.tolist()), plan.d, math.inf, plan.passable)
            if cleared is None:
                goal_poly, goal = plan.start_poly, plan.start
            else:
                goal_poly, goal = cleared
        if partial and math.dist(goal, plan.start) <= 1e-12:
            return self._result(PARTIAL, [plan.start], [plan.start_poly], nodes_expanded, tuple(corridor), plan,
                                PARTIAL_REASON)
        if jumps:
            return self._draw_with_links(plan, corridor, partial, nodes_expanded, goal, goal_poly, jumps)
        status, reason = (PARTIAL, PARTIAL_REASON) if partial else (FOUND, "")
        bound = known[0] + math.dist(known[1], goal) if plan.d == 0.0 and plan.uniform else math.inf
        walk = self._walker(plan.passable)
        drawn = None
        if plan.d == 0.0 and plan.uniform and plan.everywhere:
            taut, proven = self._taut(plan, crossings, goal, goal_poly)
            if proven:
                draped = refine.drape(self.index, walk, taut[0], taut[1], self.drape_step, self.climb, strict=True)
                if draped is not None:
                    return self._result(status, draped[0], draped[1], nodes_expanded, tuple(corridor), plan, reason)
            elif all(refine.segment_ok(self.index, walk, polys, a, b, 0.0, self.climb)
                     for a, b, polys in zip(taut[0], taut[0][1:], taut[1])):
                # A valid path: only shorter chains are looked for.
                drawn = self._chain(plan, corridor, goal, goal_poly, drawn=taut)
        if drawn is None:
            drawn = self._chain(plan, corridor, goal, goal_poly, bound)
        if drawn is None:
            return self._unreachable(f"no path keeps an agent of radius {plan.radius:g} m off the navmesh's edge",
                                     nodes_expanded)
        points, polys = refine.drape(self.index, walk, drawn[0], drawn[1], self.drape_step, self.climb)
        return self._result(status, points, polys, nodes_expanded, tuple(corridor), plan, reason)

    def _draw_with_links(self, plan: PathPlan, corridor: list[int], partial: bool, nodes_expanded: int,
                         goal: tuple, goal_poly: int, jumps: list) -> PathResult:
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
                    return self._unreachable(f"off-mesh link {link.name or k!r} ends too close to a wall for an "
                                             f"agent of radius {plan.radius:g} m", nodes_expanded)
                (there_poly, there), (after_poly, after) = near_end, far_end
            piece = replace(plan, start=here, start_poly=here_poly, goal=there, goal_poly=there_poly)
            drawn = self._chain(piece, corridor[begin:position], there, there_poly)
            if drawn is None:
                return self._unreachable(f"no path keeps an agent of radius {plan.radius:g} m off the navmesh's "
                                         "edge", nodes_expanded)
            piece_points, piece_polys = refine.drape(self.index, self._walker(plan.passable), drawn[0], drawn[1],
                                                     self.drape_step, self.climb)
            points += piece_points
            polys += piece_polys
            if after is not None:
                link_segments.append(len(points) - 1)
                here, here_poly, begin = after, after_poly, position
        status, reason = (PARTIAL, PARTIAL_REASON) if partial else (FOUND, "")
        return replace(self._result(status, points, polys, nodes_expanded, tuple(corridor), plan, reason),
                       links=tuple(link_segments))

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
        points, polys = [plan.start], [[plan.start_poly]]
        for _, _, v in string[1:-1]:
            points.append(tuple(self.mesh.vertices[v].tolist()))
            polys.append([p for p in vertex_polys[v] if p in on_corridor])
        points.append(goal)
        polys.append([goal_poly])
        return (points, polys), loose < 0 and self._certificate.nothing_inside(string)

    def _portal_line(self, e: int) -> tuple:
        """Portal edge e as `funnel.pull_string` takes it: left end, then right, walking out of its polygon."""
        right, left = self.graph.poly_vertices_l[e], self.graph.nxt_l[e]
        return (*self._vertex_xy[left], left, *self._vertex_xy[right], right)

    def _chain(self, plan: PathPlan, corridor: list[int], goal: tuple, goal_poly: int, known: float = math.inf,
               drawn: tuple | None = None):
        """(points, polygons) of the shortest valid chain start -> bend points -> goal: first over the
        corners near the corridor (or `drawn`, a valid path already known, such as the taut string);
        then, with uniform costs, over every corner a shorter path could bend at (inside the ellipse
        of that length about start and goal), which makes it exact up to the arcs' polygons. With
        area costs the path keeps to the corridor's polygons (and, failing that, to any the filter
        allows). Bend points are reflex wall corners and the vertices where allowed polygons meet
        excluded ones. None when no chain keeps clear of the walls."""
        if plan.uniform:
            allowed = plan.passable
            border = self._border(plan)
            mask = None if border is None else border[0]
        else:
            # No costlier polygon than the corridor crossed: the path does not cut through an area
            # the search paid to avoid.
            areas, costs = self.graph.areas_l, plan.costs
            top = max(costs[areas[p]] for p in corridor)
            allowed = [ok and costs[a] <= top for ok, a in zip(plan.passable, areas)]
            mask = refine.border_mask(self.mesh, self.graph, allowed)
        walk = self._walker(allowed)
        seen: dict[tuple, bool] = {}  # links tested in this query, by their ends
        corners, extra = ([], []) if drawn is not None else refine.corridor_corners(self.graph, corridor, allowed, mask)
        best = drawn
        if best is None and math.isfinite(known):
            best = self._chain_over(plan, corners, extra, allowed, walk, goal, goal_poly, known + LENGTH_TOL, seen)
        if best is None:
            # On slopes the shortest chain over corners may be longer than the search's polyline.
            best = self._chain_over(plan, corners, extra, allowed, walk, goal, goal_poly, math.inf, seen)
        if not plan.uniform:
            if best is None:  # draw as if costs were uniform
                return self._chain(replace(plan, uniform=True), corridor, goal, goal_poly)
            return best
        if best is not None and len(best[0]) <= 2:
            return best
        bound = math.inf if best is None else _length(best[0]) - LENGTH_TOL
        reach = refine.arc_reach(plan.d)
        wider = refine.ellipse_vertices(self.graph.reflex_ids, self.graph.reflex_xy, plan.start, goal, bound, reach)
        wider_extra = [] if border is None else refine.ellipse_vertices(border[1], border[2], plan.start, goal, bound, 0.0)
        if set(wider) <= set(corners) and set(wider_extra) <= set(extra):
            return best  # every corner a shorter path could bend at was already tried
        return self._chain_over(plan, wider, wider_extra, allowed, walk, goal, goal_poly, bound, seen) or best

    def _chain_over(self, plan: PathPlan, corners: list[int], extra: list[int], allowed: list[bool], walk, goal: tuple,
                    goal_poly: int, bound: float, seen: dict):
        """The shortest chain over the bend points of these reflex corners and extra vertices; `seen`
        keeps the links tested so far in this query, so a later pass does not walk them again."""
        data = self._radius_data(plan.d)
        nodes = [(plan.start, [plan.start_poly]), (goal, [goal_poly])]
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
                    refine.corner_points(self.index, self.graph, vertices, c, plan.d, self._walker(None),
                                         refine.arc_step(self.graph, c, plan.radius, plan.d)),
                )
            points = hit[1]
            for end in ends_near.get(c, ()):
                # A start or goal inside the polygon drawn about this corner's arc is reached
                # through points of its own (per query, so not kept with the corner's).
                points = points + refine.end_points(self.index, self.graph, self.mesh.vertices, c, plan.d,
                                                    self._walker(None), refine.arc_step(self.graph, c, plan.radius,
                                                                                        plan.d), end)
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

        chain = refine.shortest_chain(xyz, visible, pulls, cones, bound)
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

    # -- reachability ----------------------------------------------------------------------------

    def reachable(self, start, radius: float | None = None, filter: QueryFilter | None = None) -> reach.ReachableSet:
        """Every polygon an agent of `radius` can reach from start, through portals and crossings wide
        enough and areas the filter allows."""
        return reach.reachable(self, start, radius, filter)

    # -- surface ---------------------------------------------------------------------------------

    def raycast(self, start, end, filter: QueryFilter | None = None) -> surface.RaycastHit:
        """Walk the segment start -> end (XY) over the polygon graph from the polygon under start, as
        Detour's raycast; walls and polygons the filter excludes stop it."""
        return surface.raycast(self, start, end, filter)

    def move_along_surface(self, start, target, filter: QueryFilter | None = None) -> tuple[np.ndarray, list[int]]:
        """Move from start toward target staying on the mesh, sliding along walls (Detour's
        moveAlongSurface); the point reached and the polygons from start to it."""
        return surface.move_along_surface(self, start, target, filter)

    def random_point(self, rng: np.random.Generator | None = None, filter: QueryFilter | None = None) -> tuple[int, np.ndarray]:
        """A uniformly random point (by area seen from above) on the polygons the filter allows."""
        return surface.random_point(self, rng, filter)

    # -- helpers ---------------------------------------------------------------------------------

    def located(self, point, name: str) -> Location:
        """locate(point), with a NavMeshError naming the point when it is beyond the search extent."""
        loc = self.locate(point)
        if loc.polygon < 0:
            raise NavMeshError(self._too_far(name, loc))
        return loc

    def _too_far(self, name: str, loc: Location) -> str:
        return (f"{name} is {loc.distance:.3g} m from the navmesh, beyond the search extent "
                f"({self.extent[0]:g} m across, {self.extent[1]:g} m up or down)")

    def passable(self, f: QueryFilter) -> list[bool]:
        """Per polygon: does the filter let an agent onto it (area not excluded, flags admitted)?
        Kept per filter state, so a query costs nothing in proportion to the mesh's size."""
        excluded, inc, exc = f.excluded, f.include_flags, f.exclude_flags
        return self._cached(("passable", self._state(f)), lambda: [
            a not in excluded and bool(fl & inc) and not fl & exc for a, fl in zip(self.graph.areas_l, self._flags)])

    def _state(self, f: QueryFilter) -> tuple:
        """The filter's and the polygon flags' state: what cached answers are keyed by."""
        return f.key(), self._flags_version

    def _cached(self, key: tuple, make):
        """The value kept for a filter-state key, made (and the least recently used dropped) if absent."""
        if key in self._by_filter:
            self._by_filter.move_to_end(key)
            return self._by_filter[key]
        value = self._by_filter[key] = make()
        if len(self._by_filter) > FILTER_SLOTS:
            self._by_filter.popitem(last=False)
        return value

    def _walker(self, passable):
        test = None if passable is None else passable.__getitem__

        def walk(p: int, a, b, crossings: list | None = None):
            return walk_segment(self.index, p, a, b, test, crossings)

        return walk

    def _radius_data(self, d: float) -> _RadiusData:
        data = self._radii.get(d)
        if data is None:
            data = self._radii[d] = _RadiusData()
            if len(self._radii) > RADIUS_SLOTS:
                self._radii.popitem(last=False)
        else:
            self._radii.move_to_end(d)
        return data

    def _portal(self, data: _RadiusData, e: int, d: float) -> tuple[tuple, tuple]:
        hit = data.portals.get(e)
        if hit is None:
            hit = data.portals[e] = portal_ends(self.mesh, self.graph, e, d)
        return hit

    def _piece(self, r: float, f: QueryFilter, passable: list[bool]) -> np.ndarray:
        """Connected piece of each polygon for radius r through portals wide enough and polygons the
        filter allows (crossings ignored: two polygons in different pieces are certainly apart)."""

        def make() -> np.ndarray:
            mesh = self.mesh
            ok = np.array(passable, dtype=bool)
            e = np.flatnonzero((mesh.neighbors >= 0) & (np.asarray(self.graph.edge_clear) >= r - FITS_TOL))
            usable = [link for link, price in zip(mesh.links, self._link_costs(r, f)) if price is not None]
            u = np.concatenate([mesh.edge_polygon[e], [link.start_polygon for link in usable]]).astype(np.int64)
            v = np.concatenate([mesh.neighbors[e], [link.end_polygon for link in usable]]).astype(np.int64)
            keep = ok[u] & ok[v]
            return connected_components(mesh.polygon_count, u[keep], v[keep])

        return self._cached(("piece", r, self._state(f)), make)

    def _link_costs(self, r: float, f: QueryFilter) -> list:
        """Per off-mesh link: its cost per meter for this radius and filter, None where the filter
        excludes its area or the agent is wider than the link allows."""
        return [None if r > link.radius + FITS_TOL or link.area in f.excluded else f.cost(link.area) * link.cost
                for link in self.mesh.links]

    def _clear(self, poly: int, xyz: tuple, d: float, limit: float, passable) -> tuple[int, tuple] | None:
        """(polygon, point) nearest xyz that keeps d from every wall, within `limit` across."""
        got = refine.clear_point(self.index, self._walker(passable), poly, xyz, d, limit)
        if got is None:
            return None
        p, q = got
        return p, (float(q[0]), float(q[1]), float(q[2]))

    def _unreachable(self, reason: str, nodes_expanded: int = 0) -> PathResult:
        return PathResult(UNREACHABLE, np.zeros((0, 3)), np.zeros(0, dtype=np.int64), 0.0, nodes_expanded, (), reason)

    def _result(self, status: str, points, polys, nodes_expanded: int, corridor: tuple, plan: PathPlan,
                reason: str = "") -> PathResult:
        pts = np.array(points, dtype=np.float64).reshape(-1, 3)
        pts.flags.writeable = False
        polygons = np.array(polys, dtype=np.int64)
        polygons.flags.writeable = False
        return PathResult(status, pts, polygons, _length([tuple(p) for p in points]), nodes_expanded, corridor, reason,
                          math.dist(points[0], plan.asked[0]), math.dist(points[-1], plan.asked[1]))


def default_extent(mesh: NavMesh) -> tuple[float, float]:
    """The search extent for locating query points: across, twice the agent radius plus a cell (a
    point beside a wall is that far from the eroded navmesh at most); up or down, the agent height
    (a point at the agent's centre or head still finds its floor)."""
    p = mesh.params
    return 2.0 * float(p.agent_radius) + float(p.cell_size), float(p.agent_height)


def _check_extent(extent) -> tuple[float, float]:
    try:
        across, up = (float(v) for v in extent)
    except (TypeError, ValueError):
        raise NavMeshError(f"search extent must be (across, up or down) in meters, got {extent!r}") from None
    if not (math.isfinite(across) and math.isfinite(up) and across >= 0 and up >= 0):
        raise NavMeshError(f"search extent must be two finite numbers >= 0, got {extent!r}")
    return across, up
