"""NavMeshQuery: every query on one NavMesh and the state they share, as Detour's dtNavMeshQuery.

The query owns the spatial index, the search graph, the per-radius portal and corner data, the
connected pieces per radius and filter, and a path cache. The NavMesh it reads is immutable, so
none of that can go stale; polygon flags and the default filter live here and take effect on the
next query. Every cache is bounded. Keep one query per mesh in a game loop; the module-level
functions in `lib.query` build a throwaway query per call.
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from dataclasses import dataclass, field, replace

import numpy as np

from ..components import connected_components
from ..errors import NavMeshError
from ..navmesh import NavMesh
from . import funnel, reach, refine, surface
from .draw import PathDrawing
from .filter import WALK_FLAG, QueryFilter, check_flags, checked_filter
from .graph import FITS_TOL, MeshGraph
from .index import QUERY_LIMIT, Location, MeshIndex, query_point
from .path import FOUND, PathPlan, PathResult, result, unreachable
from .search import PortalEnds, SlicedSearch
from .walk import walk_segment

# Radii whose portal and corner data are kept (least recently used dropped first).
RADIUS_SLOTS = 4
# Values derived from a filter state (what it admits, its borders, link prices and connected pieces
# per radius) kept: one filter at two radii uses about 16, and dropping them costs a rebuild in
# proportion to the mesh.
FILTER_SLOTS = 32
# Paths kept by default in the path cache.
PATH_CACHE_SIZE = 1024
# A segment ends on the same floor as its end point when the surface there is within the larger of
# the agent's climb and the detail's height error of it (two polygons of one floor that overlap seen
# from above may disagree by that error on a mesh baked with no climb), the error counting up to
# this much (m) and under half the agent's height: floors stacked that close are apart (fuzz case
# 432264, a level at 1/50 scale, took a floor 3.7 cm above another for the same one). At 5 cm on
# every mesh, a platform 3.1 cm over a floor, 2.4 climbs, was taken for the floor (62514).
MIN_CLIMB = 0.05
# A radius this close (relative) to the bake radius is the bake radius: float32 rounding, as in
# a Blender property.
SAME_RADIUS = 1e-6


@dataclass
class _RadiusData:
    """What the queries for one clearance d = r - r0 share: portal parts and corner points."""

    portals: PortalEnds
    corners: dict = field(default_factory=dict)


class NavMeshQuery(PathDrawing):
    """Path, location, raycast and reachability queries on one NavMesh.

    extent: (across, up or down) in meters, how far from the navmesh a query point may lie and still
    be located on it, as Detour's half-extents; default `default_extent(mesh)`.
    filter: the default QueryFilter (area costs, exclusions, flag masks) for queries given none;
    by default the navmesh's own area costs (NavMesh.area_costs).
    """

    def __init__(
        self,
        mesh: NavMesh,
        filter: QueryFilter | None = None,
        extent: tuple[float, float] | None = None,
        path_cache_size: int = PATH_CACHE_SIZE,
    ):
        self.mesh = mesh
        self.index = MeshIndex(mesh)
        self.graph = MeshGraph(mesh)
        self.filter = filter if filter is not None else QueryFilter(area_cost=dict(mesh.area_costs))
        self.extent = default_extent(mesh) if extent is None else _check_extent(extent)
        self.r0 = float(mesh.params.agent_radius)
        p = mesh.params
        self.climb = max(
            float(p.agent_max_climb), min(MIN_CLIMB, float(p.max_height_error), 0.5 * float(p.agent_height))
        )
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

    @property
    def extent(self) -> tuple[float, float]:
        """(across, up or down) in meters: how far from the navmesh a query point may lie."""
        return self._extent

    @extent.setter
    def extent(self, value: tuple[float, float]) -> None:
        self._extent = _check_extent(value)

    @property
    def filter(self) -> QueryFilter:
        """The QueryFilter of queries given none."""
        return self._filter

    @filter.setter
    def filter(self, value: QueryFilter) -> None:
        self._filter = checked_filter(value)

    def filter_for(self, filter: QueryFilter | None) -> QueryFilter:
        """The filter a query uses: its own when given (NavMeshError if it is not a valid
        QueryFilter), else the query object's."""
        return self._filter if filter is None else checked_filter(filter)

    def set_poly_flags(self, polygon: int, flags: int) -> None:
        """Set a polygon's flags (Detour's setPolyFlags); filters admit polygons by them."""
        p, value = self._polygon(polygon), check_flags(flags, "flags")
        if self._flags[p] != value:  # setting the flags a polygon has changes no answer
            self._flags[p] = value
            self._flags_version += 1

    def excluded_reason(self, name: str, p: int) -> str:
        """Why a query point on polygon p, which the filter excludes, goes nowhere."""
        area, flags = int(self.mesh.areas[p]), self._flags[p]
        return f"{name} lies on polygon {p} (area {area}, flags {flags:#x}), which the filter excludes"

    def poly_flags(self, polygon: int) -> int:
        """A polygon's flags (Detour's getPolyFlags)."""
        return self._flags[self._polygon(polygon)]

    def _polygon(self, polygon) -> int:
        """A polygon id of this navmesh; NavMeshError naming it otherwise."""
        try:
            p = operator.index(polygon)
        except TypeError:
            raise NavMeshError(f"polygon must be an integer id, got {polygon!r}") from None
        if not 0 <= p < self.mesh.polygon_count:
            raise NavMeshError(f"polygon {polygon} does not exist (the navmesh has {self.mesh.polygon_count})")
        return p

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
        # A number (a numpy scalar or 0-d array too): not a string float() would parse, nor a bool
        # (True is no 1 m agent).
        if isinstance(radius, (str, bytes, bool, np.bool_)):
            raise NavMeshError(f"agent radius must be a number of meters, got {radius!r}")
        try:
            r = float(radius)
        except (TypeError, ValueError):
            raise NavMeshError(f"agent radius must be a number of meters, got {radius!r}") from None
        if not math.isfinite(r) or r > QUERY_LIMIT:
            raise NavMeshError(f"agent radius must be a finite number of meters up to {QUERY_LIMIT:g}, got {radius}")
        if r < self.r0 - FITS_TOL:
            raise NavMeshError(
                f"agent radius {radius} is below the bake radius {self.r0}; rebake with a smaller radius"
            )
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
        f, state = self._filter_state(filter)
        r = self.check_radius(radius)
        s, g = query_point(start, "start"), query_point(goal, "goal")
        key = (s, g, r, state, self._extent)
        hit = self._paths.get(key)
        if hit is not None:
            self.cache_hits += 1
            self._paths.move_to_end(key)
            return hit
        self.cache_misses += 1
        search = SlicedSearch(self, (s, g, r), filter, (f, state))
        search.update()
        result = search.result()
        self._paths[key] = result
        if len(self._paths) > self.path_cache_size:
            self._paths.popitem(last=False)
        return result

    def search(self, start, goal, radius: float | None = None, filter: QueryFilter | None = None) -> SlicedSearch:
        """A time-sliced path search: call `update(max_iterations)` until its status is not
        'in_progress' (Detour's initSlicedFindPath / updateSlicedFindPath), then `result()`. Nothing
        is searched before the first update, and each update sees the filter and flags as they are
        then (a door closed since the search began makes it start again)."""
        self._filter_state(filter)  # a bad filter is named now, not at the first update
        return SlicedSearch(
            self, (query_point(start, "start"), query_point(goal, "goal"), self.check_radius(radius)), filter
        )

    def _plan(self, s: tuple, g: tuple, r: float, f: QueryFilter, state: tuple) -> PathPlan:
        """Everything a search needs (its ends located and cleared, the filter's costs and what it
        admits), or the answer itself where no search is needed. state: `_state(f)`, found once per
        query (the filter is read once, as the caches are keyed by it)."""
        d = r - self.r0
        passable = self.passable(f, state)
        everywhere = self._cached(("everywhere", state), lambda: all(passable))
        costs = [f.cost(a) for a in range(self._area_count)]
        data = self._radius_data(d)
        link_costs = self._link_costs(r, f, state)
        # A link cheaper per metre than walking (a zipline) can beat the straight line: the search's
        # distance estimate scales by the cheapest way to travel, links included.
        cheapest_link = min((c for c in link_costs if c is not None), default=math.inf)
        plan = PathPlan(
            r,
            d,
            passable,
            costs,
            f.uniform(),
            data.portals,
            self._walker(passable),
            state,
            everywhere,
            hscale=min(f.min_cost(), cheapest_link),
            link_costs=link_costs,
            open_edges=self._open_edges(r, passable, state),
        )
        across = self.extent[0]
        ends = []
        for name, xyz in (("start", s), ("goal", g)):
            loc = self.index.locate(xyz, self.extent)
            if loc.polygon < 0:
                far = unreachable(self._too_far(name, loc))
                plan.result = (
                    replace(far, start_distance=loc.distance)
                    if name == "start"
                    else replace(far, goal_distance=loc.distance)
                )
                return plan
            if not passable[loc.polygon]:
                plan.result = unreachable(self.excluded_reason(name, loc.polygon))
                return plan
            ends.append(loc)
        start = self._clear(ends[0].polygon, tuple(ends[0].point.tolist()), d, across + d, passable)
        if start is None:
            plan.result = unreachable(
                f"no point within {across + d:g} m of the start keeps an agent of radius {r:g} m off the navmesh's edge"
            )
            return plan
        piece = self._piece(r, f, passable, state)
        goal_poly, goal_xyz = ends[1].polygon, tuple(ends[1].point.tolist())
        plan.partial = piece[goal_poly] != piece[start[0]]
        if plan.partial:
            # The goal lies in another connected piece: head for the closest point that can be reached,
            # cleared of the walls within the start's piece (the nearest clear point may lie beyond a
            # door too narrow for the agent, in the goal's piece).
            label = int(piece[start[0]])
            goal_poly, _, q = self.index.nearest(goal_xyz, self._piece_polygons(r, f, passable, state)[label])
            goal_xyz = tuple(q.tolist())
            plan.reach = self._cached(("piece", r, label, state), lambda: (piece == label).tolist())
        toward = tuple(ends[1].point.tolist()) if plan.partial else None
        goal = self._clear(
            goal_poly, goal_xyz, d, math.inf if plan.partial else across + d, plan.reach or passable, toward
        )
        if goal is None:
            plan.result = unreachable(
                f"no point within {across + d:g} m of the goal keeps an agent of radius {r:g} m off the navmesh's edge"
            )
            return plan
        plan.start_poly, plan.start = start
        plan.goal_poly, plan.goal = goal
        plan.asked = (s, g)
        if not plan.partial and plan.uniform and cheapest_link >= 1.0:
            straight = self._straight(plan)
            if straight is not None:
                plan.result = straight
        return plan

    def _straight(self, plan: PathPlan) -> PathResult | None:
        """The segment itself when the goal is in plain sight and the segment keeps d from walls."""
        starts = self._holders(plan, plan.start_poly, plan.start, plan.passable)
        walk = plan.walk
        if not refine.segment_ok(self.index, walk, starts, plan.start, plan.goal, plan.d, self.climb):
            return None
        goals = self._holders(plan, plan.goal_poly, plan.goal, plan.passable)
        points, polys = refine.drape(self.index, walk, [plan.start, plan.goal], [starts, goals], self.climb)
        # The corridor is every polygon the segment crosses, start to goal, as a search's would be.
        corridor = [plan.start_poly]
        for p in starts:
            t, _, seen = walk(p, plan.start, plan.goal)
            if t == math.inf:
                corridor = list(seen)
                break
        if corridor[-1] != plan.goal_poly:
            corridor.append(plan.goal_poly)
        return result(FOUND, points, polys, 0, self._edge_joined(corridor, plan.passable), plan)

    def _edge_joined(self, polys: list[int], passable: list[bool]) -> tuple[int, ...]:
        """The polygons a segment crosses as a corridor of edge neighbours: where it passes from one
        to the next through a corner they share, a polygon beside both (edge to edge) goes between."""
        offs, nb = self.graph.offs_l, self.graph.nb_l

        def around(p: int) -> list[int]:
            return nb[offs[p] : offs[p + 1]]

        joined = polys[:1]
        for q in polys[1:]:
            p = joined[-1]
            if q not in around(p):
                beside = [r for r in around(p) if r >= 0 and passable[r] and q in around(r)]
                joined += beside[:1]
            joined.append(q)
        return tuple(joined)

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

    def random_point(
        self, rng: np.random.Generator | None = None, filter: QueryFilter | None = None
    ) -> tuple[int, np.ndarray]:
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
        return (
            f"{name} is {loc.distance:.3g} m from the navmesh, beyond the search extent "
            f"({self.extent[0]:g} m across, {self.extent[1]:g} m up or down)"
        )

    def passable(self, f: QueryFilter, state: tuple | None = None) -> list[bool]:
        """Per polygon: does the filter let an agent onto it (area not excluded, flags admitted)?
        Kept per filter state (`_state(f)`, found here unless given), so a query costs nothing in
        proportion to the mesh's size."""
        excluded, inc, exc = f.excluded, f.include_flags, f.exclude_flags
        return self._cached(
            ("passable", self._state(f) if state is None else state),
            lambda: [
                a not in excluded and bool(fl & inc) and not fl & exc for a, fl in zip(self.graph.areas_l, self._flags)
            ],
        )

    def _state(self, f: QueryFilter) -> tuple:
        """The filter's and the polygon flags' state: what cached answers are keyed by."""
        return f.key(), self._flags_version

    def _filter_state(self, filter: QueryFilter | None) -> tuple[QueryFilter, tuple]:
        """The filter a query uses (as `filter_for`) and its `_state`, reading the filter once."""
        if filter is not None and not isinstance(filter, QueryFilter):
            checked_filter(filter)  # raises, naming what was given
        f = self._filter if filter is None else filter
        return f, self._state(f)

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
        """walk(p, a, b, crossings=None): `walk_segment` over the polygons `passable` admits (all when
        None). Each walk is kept by (p, a, b) in the walker, as a query walks the same segment several
        times (tested, then draped); callers must not change the polygons list it returns."""
        test = None if passable is None else passable.__getitem__
        walks: dict[tuple, tuple] = {}

        def walk(p: int, a, b, crossings: list | None = None):
            if test is not None and not test(p):
                # No walk starts in a polygon the filter excludes: a path point on its border
                # (a corner it shares with passable ones) is placed on one of those.
                return 0.0, -1, [p]
            key = (p, a[0], a[1], b[0], b[1])
            got = walks.get(key)
            if got is None:
                entered: list[float] = []
                got = walks[key] = (*walk_segment(self.index, p, a, b, test, entered), entered)
            if crossings is not None:
                crossings += got[3]
            return got[0], got[1], got[2]

        return walk

    def _radius_data(self, d: float) -> _RadiusData:
        data = self._radii.get(d)
        if data is None:
            data = self._radii[d] = _RadiusData(PortalEnds(self.mesh, self.graph, d))
            if len(self._radii) > RADIUS_SLOTS:
                self._radii.popitem(last=False)
        else:
            self._radii.move_to_end(d)
        return data

    def _open_edges(self, r: float, passable: list[bool], state: tuple) -> list[bool]:
        """Per edge slot: is it a portal an agent of radius r fits through into a polygon the filter
        allows? Kept per radius and filter state, so the search tests one flag per edge it relaxes."""
        fits = r - FITS_TOL
        return self._cached(
            ("open edges", r, state),
            lambda: [q >= 0 and not c < fits and passable[q] for q, c in zip(self.graph.nb_l, self.graph.edge_clear_l)],
        )

    def _piece(self, r: float, f: QueryFilter, passable: list[bool], state: tuple) -> np.ndarray:
        """Connected piece of each polygon for radius r through portals wide enough and polygons the
        filter allows (crossings ignored: two polygons in different pieces are certainly apart)."""

        def make() -> np.ndarray:
            mesh = self.mesh
            ok = np.array(passable, dtype=bool)
            e = np.flatnonzero((mesh.neighbors >= 0) & (np.asarray(self.graph.edge_clear) >= r - FITS_TOL))
            usable = [link for link, price in zip(mesh.links, self._link_costs(r, f, state)) if price is not None]
            u = np.concatenate([mesh.edge_polygon[e], [link.start_polygon for link in usable]]).astype(np.int64)
            v = np.concatenate([mesh.neighbors[e], [link.end_polygon for link in usable]]).astype(np.int64)
            keep = ok[u] & ok[v]
            return connected_components(mesh.polygon_count, u[keep], v[keep])

        return self._cached(("piece", r, state), make)

    def _piece_polygons(self, r: float, f: QueryFilter, passable: list[bool], state: tuple) -> dict[int, np.ndarray]:
        """The polygon ids of each connected piece, by its label in `_piece`, so a query looks only
        at its own piece."""

        def make() -> dict[int, np.ndarray]:
            piece = self._piece(r, f, passable, state)
            order = np.argsort(piece, kind="stable")
            groups = np.split(order, np.flatnonzero(np.diff(piece[order])) + 1)
            return {int(piece[g[0]]): g for g in groups}

        return self._cached(("piece polygons", r, state), make)

    def _link_costs(self, r: float, f: QueryFilter, state: tuple) -> list:
        """Per off-mesh link: its cost per meter for this radius and filter, None where the filter
        excludes its area or the agent is wider than the link allows. Kept per radius and filter
        state (`_state(f)`), so a query costs nothing in proportion to the number of links."""
        return self._cached(
            ("link costs", r, state),
            lambda: [
                None if r > link.radius + FITS_TOL or link.area in f.excluded else f.cost(link.area) * link.cost
                for link in self.mesh.links
            ],
        )

    def _clear(
        self, poly: int, xyz: tuple, d: float, limit: float, passable, toward: tuple | None = None
    ) -> tuple[int, tuple] | None:
        """(polygon, point) nearest xyz (or `toward`) that keeps d from every wall, within `limit`
        across of xyz (refine.clear_point)."""
        got = refine.clear_point(self.index, self._walker(passable), poly, xyz, d, limit, toward)
        if got is None:
            return None
        p, q = got
        return p, (float(q[0]), float(q[1]), float(q[2]))


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
