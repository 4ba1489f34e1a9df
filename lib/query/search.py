"""A* over portal crossing points with clearance and area filters; time-sliced search; find_path."""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import NavMeshError
from ..navmesh import NavMesh
from ..components import connected_components
from .funnel import round_corners, string_pull
from .index import MeshIndex, get_index, walk_segment

IN_PROGRESS, FOUND, PARTIAL, UNREACHABLE = "in_progress", "found", "partial", "unreachable"
_PARTIAL_REASON = "goal is not reachable for this radius and filter; path ends at the closest reachable point"


@dataclass
class QueryFilter:
    """Like Detour's dtQueryFilter: a cost multiplier per area id (default 1) and excluded area ids."""

    area_cost: dict[int, float] = field(default_factory=dict)
    excluded: frozenset[int] | set[int] = frozenset()

    def __post_init__(self) -> None:
        for area, cost in self.area_cost.items():
            if not (math.isfinite(cost) and cost > 0):
                raise NavMeshError(f"area {area} has cost {cost}; costs must be finite and > 0")

    def cost(self, area: int) -> float:
        return float(self.area_cost.get(int(area), 1.0))

    def passable(self, area: int) -> bool:
        return int(area) not in self.excluded

    def min_cost(self) -> float:
        return min([1.0, *self.area_cost.values()])


DEFAULT_FILTER = QueryFilter()


@dataclass
class PathResult:
    """status 'found' / 'partial' / 'unreachable'; points (K, 3); polygon of each point; length in meters."""

    status: str
    points: np.ndarray
    polygons: np.ndarray
    length: float
    nodes_expanded: int
    corridor: list[int] = field(default_factory=list)
    reason: str = ""


def check_radius(mesh: NavMesh, radius: float | None) -> float:
    r0 = float(mesh.params.agent_radius)
    if radius is None:
        return r0
    r = float(radius)
    if not math.isfinite(r) or r < r0 - 1e-9:
        raise NavMeshError(f"agent radius {radius} is below the bake radius {r0}; rebake with a smaller radius")
    return r


class MeshGraph:
    """Per-mesh arrays the searches share: twins, clearances, boundary-corner flags."""

    def __init__(self, mesh: NavMesh, index: MeshIndex):
        self.index = index
        E = len(mesh.poly_vertices)
        nxt = mesh.edge_next_vertex
        key = {(int(u), int(w)): e for e, (u, w) in enumerate(zip(mesh.poly_vertices, nxt))}
        self.twin = np.array(
            [key.get((int(w), int(u)), -1) if mesh.neighbors[e] >= 0 else -1 for e, (u, w) in enumerate(zip(mesh.poly_vertices, nxt))],
            dtype=np.int64,
        )
        inf = np.full(E, math.inf)
        self.edge_clear = mesh.edge_clearance if mesh.edge_clearance is not None else np.where(mesh.neighbors >= 0, inf, 0.0)
        self.cross = mesh.cross_clearance
        self.cross_offsets = mesh.cross_offsets
        boundary = mesh.neighbors < 0
        corner = np.zeros(len(mesh.vertices), dtype=bool)
        corner[mesh.poly_vertices[boundary]] = True
        corner[nxt[boundary]] = True
        self.corner = corner
        self.nxt = nxt
        self.sizes = mesh.polygon_sizes
        self.portal_cache: dict[tuple[int, float], tuple] = {}
        # At the bake radius a portal is its whole edge: its ends for the A* loop, filled at once.
        portals = np.flatnonzero(mesh.neighbors >= 0)
        ends = zip(portals.tolist(), mesh.vertices[nxt[portals]].tolist(), mesh.vertices[mesh.poly_vertices[portals]].tolist())
        self.tuple_cache: dict[tuple[int, float], tuple] = {(e, 0.0): (tuple(left), tuple(right)) for e, left, right in ends}
        self.visible_cache: dict[tuple[int, int], bool] = {}
        self.component_cache: dict[tuple[float, frozenset], np.ndarray] = {}
        # Reflex wall corners (convex obstacle corners) are the only places a shortest path bends.
        starts = mesh.poly_vertices[boundary]
        ends = nxt[boundary]
        out_count = np.bincount(starts, minlength=len(mesh.vertices))
        incoming = np.full(len(mesh.vertices), -1)
        outgoing = np.full(len(mesh.vertices), -1)
        incoming[ends] = starts
        outgoing[starts] = ends
        v = mesh.vertices
        cand = np.flatnonzero(corner & (incoming >= 0) & (outgoing >= 0))
        a, b = v[incoming[cand], :2] - v[cand, :2], v[outgoing[cand], :2] - v[cand, :2]
        turn = -a[:, 0] * b[:, 1] + a[:, 1] * b[:, 0]
        self.reflex = np.zeros(len(v), dtype=bool)
        self.reflex[cand[turn < -1e-12]] = True
        self.reflex[out_count > 1] = True
        # The wall ends beside each single reflex corner (XY), to test whether a path can wrap it.
        single = self.reflex & (out_count == 1) & (incoming >= 0) & (outgoing >= 0)
        self.wall_sides = {int(c): (tuple(v[incoming[c], :2].tolist()), tuple(v[outgoing[c], :2].tolist()))
                           for c in np.flatnonzero(single)}
        owner = mesh.edge_polygon
        order = np.argsort(mesh.poly_vertices, kind="stable")
        cuts = np.searchsorted(mesh.poly_vertices[order], np.arange(len(v) + 1))
        self.vertex_polys = [owner[order[cuts[i] : cuts[i + 1]]] for i in range(len(v))]
        # Python lists for the A* inner loop: indexing numpy arrays per edge costs more than the work.
        self.offs_l = mesh.poly_offsets.tolist()
        self.nb_l = mesh.neighbors.tolist()
        self.areas_l = mesh.areas.tolist()
        self.twin_l = self.twin.tolist()
        self.edge_clear_l = np.asarray(self.edge_clear, dtype=np.float64).tolist()
        self.cross_l = None if self.cross is None else self.cross.tolist()
        self.cross_offsets_l = None if self.cross is None else self.cross_offsets.tolist()

    def components(self, mesh: NavMesh, r: float, excluded) -> np.ndarray:
        """Connected piece of each polygon for agents of radius r through portals wide enough and areas
        not excluded (crosses ignored, so two polygons in different pieces are certainly not joined)."""
        key = (r, frozenset(excluded))
        hit = self.component_cache.get(key)
        if hit is None:
            if len(self.component_cache) >= 32:
                self.component_cache.clear()
            e = np.flatnonzero((mesh.neighbors >= 0) & (self.edge_clear >= r - 1e-9))
            u, v = mesh.edge_polygon[e], mesh.neighbors[e]
            if excluded:
                blocked = np.isin(mesh.areas, list(excluded))
                keep = ~(blocked[u] | blocked[v])
                u, v = u[keep], v[keep]
            hit = self.component_cache[key] = connected_components(mesh.polygon_count, u, v)
        return hit

    def cross_ok(self, mesh: NavMesh, p: int, i: int, j: int, r: float) -> bool:
        if self.cross is None or i < 0:
            return True
        n = int(self.sizes[p])
        return bool(self.cross[self.cross_offsets[p] + i * n + j] >= r - 1e-9)


_GRAPHS: dict[int, tuple] = {}


def get_graph(mesh: NavMesh) -> MeshGraph:
    index = get_index(mesh)
    hit = _GRAPHS.get(id(mesh))
    if hit is not None and hit[0] is index:
        return hit[1]
    graph = MeshGraph(mesh, index)
    _GRAPHS[id(mesh)] = (index, graph)
    return graph


def _crossing_point(x: tuple, goal: tuple, a: tuple, b: tuple) -> tuple:
    """Point of portal a-b minimising |x - y| + |y - goal| (in XY; height along the portal).

    Plain float tuples: this runs once per A* edge and numpy's per-call overhead dominates there."""
    abx, aby = b[0] - a[0], b[1] - a[1]
    dx, dy = goal[0] - x[0], goal[1] - x[1]
    den = dx * aby - dy * abx
    if abs(den) > 1e-12:
        wx, wy = a[0] - x[0], a[1] - x[1]
        t = (dx * wy - dy * wx) / den
        s = (abx * wy - aby * wx) / den
        if 0.0 <= t <= 1.0 and s >= 0.0:
            return (a[0] + t * abx, a[1] + t * aby, a[2] + t * (b[2] - a[2]))
    da = math.dist(a, x) + math.dist(goal, a)
    db = math.dist(b, x) + math.dist(goal, b)
    return a if da <= db else b


def _near_walls(mesh: NavMesh, graph: MeshGraph, e: int) -> np.ndarray:
    """Wall edge slots of the portal's two polygons and their neighbours."""
    near = {int(graph.index.edge_poly[e]), int(mesh.neighbors[e])}
    for p in list(near):
        near.update(int(q) for q in mesh.neighbors[mesh.poly_offsets[p] : mesh.poly_offsets[p + 1]] if q >= 0)
    slots = np.concatenate([np.arange(mesh.poly_offsets[p], mesh.poly_offsets[p + 1]) for p in near])
    return slots[mesh.neighbors[slots] < 0]


def _wall_dist(pts: np.ndarray, wa: np.ndarray, wb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """XY distance from each point to the nearest wall segment, and that nearest wall point."""
    v = wb - wa
    t = np.clip(np.einsum("smk,mk->sm", pts[:, None, :] - wa[None], v) / np.maximum(np.einsum("ij,ij->i", v, v), 1e-18), 0, 1)
    q = wa[None] + t[..., None] * v[None]
    dist = np.linalg.norm(pts[:, None, :] - q, axis=2)
    k = np.argmin(dist, axis=1)
    rows = np.arange(len(pts))
    return dist[rows, k], q[rows, k]


_PORTAL_SAMPLES = 65


def portal_ends(mesh: NavMesh, graph: MeshGraph, e: int, d: float):
    """Left and right ends (walking out of the edge's polygon) of the part of portal e at least d from
    nearby walls, plus the wall point each end was cut against (None where the end is the original
    vertex and not a wall corner)."""
    key = (e, d)
    hit = graph.portal_cache.get(key)
    if hit is not None:
        return hit
    u, w = int(mesh.poly_vertices[e]), int(graph.nxt[e])
    right, left = mesh.vertices[u], mesh.vertices[w]
    rc = mesh.vertices[u] if graph.corner[u] else None
    lc = mesh.vertices[w] if graph.corner[w] else None
    out = (left, right, lc, rc)
    walls = _near_walls(mesh, graph, e) if d > 0 else np.zeros(0, dtype=np.int64)
    if len(walls):
        wa, wb = graph.index.edge_a[walls, :2], graph.index.edge_b[walls, :2]
        ts = np.linspace(0.0, 1.0, _PORTAL_SAMPLES)
        line = lambda t: right[None, :2] + np.asarray(t)[:, None] * (left[:2] - right[:2])[None]  # noqa: E731
        dist, _ = _wall_dist(line(ts), wa, wb)
        ok = dist >= d - 1e-9
        if ok.any():
            k = int(np.argmax(dist))
            i0 = k
            while i0 > 0 and ok[i0 - 1]:
                i0 -= 1
            i1 = k
            while i1 < len(ts) - 1 and ok[i1 + 1]:
                i1 += 1
            t0 = _refine(line, wa, wb, d, ts[i0], ts[i0 - 1]) if i0 > 0 else 0.0
            t1 = _refine(line, wa, wb, d, ts[i1], ts[i1 + 1]) if i1 < len(ts) - 1 else 1.0
            new_r, new_l = right + t0 * (left - right), right + t1 * (left - right)
            if i0 > 0:
                q = _wall_dist(line([t0]), wa, wb)[1][0]
                rc = np.array([q[0], q[1], new_r[2]])
            if i1 < len(ts) - 1:
                q = _wall_dist(line([t1]), wa, wb)[1][0]
                lc = np.array([q[0], q[1], new_l[2]])
            out = (new_l, new_r, lc, rc)
        else:
            mid = right + float(ts[int(np.argmax(dist))]) * (left - right)
            out = (mid, mid, lc, rc)
    graph.portal_cache[key] = out
    return out


def _side_wall_point(mesh: NavMesh, graph: MeshGraph, e: int, prev, here, nxt, left: bool, d: float):
    """Nearest wall point within 2d of a bend, on the side the path turns around; None if there is none."""
    walls = _near_walls(mesh, graph, e)
    if not len(walls):
        return None
    wa, wb = graph.index.edge_a[walls, :2], graph.index.edge_b[walls, :2]
    v = wb - wa
    t = np.clip(np.einsum("ij,ij->i", here[None, :2] - wa, v) / np.maximum(np.einsum("ij,ij->i", v, v), 1e-18), 0, 1)
    q = wa + t[:, None] * v
    dist = np.linalg.norm(q - here[None, :2], axis=1)
    direction = np.asarray(nxt[:2]) - np.asarray(prev[:2])
    rel = q - here[None, :2]
    side = direction[0] * rel[:, 1] - direction[1] * rel[:, 0]
    ok = (dist < 2 * d) & ((side > 0) if left else (side < 0))
    if not ok.any():
        return None
    k = int(np.flatnonzero(ok)[np.argmin(dist[ok])])
    return np.array([q[k, 0], q[k, 1], here[2]])


def portal_tuple(mesh: NavMesh, graph: MeshGraph, e: int, d: float) -> tuple[tuple, tuple]:
    """portal_ends' left and right as float tuples, cached, for the A* inner loop."""
    key = (e, d)
    hit = graph.tuple_cache.get(key)
    if hit is None:
        left, right, _, _ = portal_ends(mesh, graph, e, d)
        hit = graph.tuple_cache[key] = (tuple(left.tolist()), tuple(right.tolist()))
    return hit


def _refine(line, wa, wb, d: float, t_ok: float, t_bad: float) -> float:
    """Bisect between an allowed and a forbidden portal parameter for the point at distance d."""
    for _ in range(40):
        mid = 0.5 * (t_ok + t_bad)
        if _wall_dist(line([mid]), wa, wb)[0][0] >= d:
            t_ok = mid
        else:
            t_bad = mid
    return t_ok


class SlicedSearch:
    """A* whose nodes are portal crossing points, advanced by `update(max_iterations)` and pollable."""

    def __init__(self, mesh: NavMesh, start, goal, radius: float | None = None, filter: QueryFilter | None = None):
        self.mesh = mesh
        self.graph = get_graph(mesh)
        self.filter = filter or DEFAULT_FILTER
        self.radius = check_radius(mesh, radius)
        self.d = self.radius - float(mesh.params.agent_radius)
        index = self.graph.index
        self.start_poly, self.start = index.locate(start)
        self.goal_poly, self.goal = index.locate(goal)
        self.nodes_expanded = 0
        self.status = IN_PROGRESS
        self.reason = ""
        self._result: PathResult | None = None
        # Node (portal edge slot; -1 start, -2 goal) -> (g, parent node, polygon entered, crossing point, entry edge index).
        self._nodes: dict[int, tuple[float, int, int, tuple, int]] = {}
        self._closed: set[int] = set()
        self._heap: list = []
        self._hscale = self.filter.min_cost()
        if self.start_poly < 0 or self.goal_poly < 0:
            self._finish(UNREACHABLE, "start or goal is not on the navmesh")
            return
        if not self.filter.passable(mesh.areas[self.start_poly]):
            self._finish(UNREACHABLE, "start polygon's area is excluded by the filter")
            return
        piece = self.graph.components(mesh, self.radius, self.filter.excluded)
        self._partial = piece[self.goal_poly] != piece[self.start_poly] or not self.filter.passable(mesh.areas[self.goal_poly])
        if self._partial:
            # The goal lies in another connected piece: head straight for the closest point that can be reached.
            self.goal_poly, self.goal = index.locate(goal, among=piece == piece[self.start_poly])
        self._goal_t = tuple(self.goal.tolist())
        if not self._partial and self.d == 0.0 and all(c == 1.0 for c in self.filter.area_cost.values()):
            if self._straight():
                return
        start_t = tuple(self.start.tolist())
        self._best_node, self._best_h = -1, math.dist(start_t, self._goal_t)
        self._nodes[-1] = (0.0, -1, self.start_poly, start_t, -1)
        heapq.heappush(self._heap, (0.0, 0.0, -1))

    def _straight(self) -> bool:
        """Finish at once when the goal is in plain sight: with uniform costs at the bake radius the
        straight segment over the mesh is the shortest path (no detour can be shorter)."""
        areas, excluded = self.graph.areas_l, self.filter.excluded
        passable = (lambda q: areas[q] not in excluded) if excluded else None  # noqa: E731
        _, edge, visited = walk_segment(self.mesh, self.graph.index, self.start_poly, self.start, self.goal, passable)
        if edge >= 0 or visited[-1] != self.goal_poly:
            return False
        self.status = FOUND
        points = np.stack([self.start, self.goal])
        length = float(np.linalg.norm(self.goal - self.start))
        self._result = PathResult(FOUND, points, np.array([self.start_poly, self.goal_poly], dtype=np.int64), length, 0, visited)
        return True

    def update(self, max_iterations: int = 1 << 30) -> str:
        """Expand up to max_iterations nodes; returns the status (in_progress, found, partial, unreachable)."""
        mesh, graph, f, r = self.mesh, self.graph, self.filter, self.radius
        offs, nb, clear, areas, twin = graph.offs_l, graph.nb_l, graph.edge_clear_l, graph.areas_l, graph.twin_l
        cross, tuples, excluded = graph.cross_l, graph.tuple_cache, f.excluded
        nodes, closed, heap, goal, hscale = self._nodes, self._closed, self._heap, self._goal_t, self._hscale
        it = 0
        while self.status == IN_PROGRESS and it < max_iterations:
            if not heap:
                self._finish_partial()
                break
            _, g, node = heapq.heappop(heap)
            if node in closed or g > nodes[node][0]:
                continue
            closed.add(node)
            it += 1
            self.nodes_expanded += 1
            if node == -2:
                if self._partial:
                    self._finish(PARTIAL, _PARTIAL_REASON)
                else:
                    self._finish(FOUND)
                break
            _, _, p, x, entry = nodes[node]
            h = math.dist(x, goal)
            if h < self._best_h:
                self._best_node, self._best_h = node, h
            cost = f.cost(areas[p])
            if p == self.goal_poly:
                g2 = g + cost * h
                if -2 not in nodes or g2 < nodes[-2][0]:
                    nodes[-2] = (g2, node, p, goal, -1)
                    heapq.heappush(heap, (g2, g2, -2))
            a, b = offs[p], offs[p + 1]
            row = graph.cross_offsets_l[p] + entry * (b - a) - a if cross is not None and entry >= 0 else -1
            for e in range(a, b):
                q = nb[e]
                if q < 0 or e - a == entry or clear[e] < r - 1e-9 or (excluded and areas[q] in excluded) or e in closed:
                    continue
                if row >= 0 and cross[row + e] < r - 1e-9:
                    continue
                ends = tuples.get((e, self.d)) or portal_tuple(mesh, graph, e, self.d)
                y = _crossing_point(x, goal, ends[0], ends[1])
                g2 = g + cost * math.dist(y, x)
                old = nodes.get(e)
                if old is None or g2 < old[0]:
                    tw = twin[e]
                    nodes[e] = (g2, node, q, y, tw - offs[q] if tw >= 0 else -1)
                    heapq.heappush(heap, (g2 + hscale * math.dist(y, goal), g2, e))
        return self.status

    def _finish_partial(self) -> None:
        node = self._best_node
        p = self._nodes[node][2]
        target = self.graph.index.closest_point(p, self.goal)
        self._finish(PARTIAL, _PARTIAL_REASON, node, target)

    def _finish(self, status: str, reason: str = "", node: int = -2, end: np.ndarray | None = None) -> None:
        self.status, self.reason = status, reason
        if status == UNREACHABLE:
            self._result = PathResult(status, np.zeros((0, 3)), np.zeros(0, dtype=np.int64), 0.0, self.nodes_expanded, [], reason)
            return
        chain = []
        while node != -1:
            chain.append(node)
            node = self._nodes[node][1]
        chain.reverse()
        portals = [n for n in chain if n >= 0]
        end = self.goal if end is None else end
        areas, excluded = self.graph.areas_l, self.filter.excluded
        passable = (lambda q: areas[q] not in excluded) if excluded else None  # noqa: E731
        uniform = all(c == 1.0 for c in self.filter.area_cost.values())
        self._result = build_path(self.mesh, self.graph, self.start, end, self.start_poly, portals, self.d, passable, uniform)
        self._result.status, self._result.reason = status, reason
        self._result.nodes_expanded = self.nodes_expanded

    def result(self) -> PathResult:
        """The path once the search has finished (raises while it is in progress)."""
        if self._result is None:
            raise NavMeshError("search is still in progress; call update() until status is not 'in_progress'")
        return self._result


def _pull(mesh: NavMesh, graph: MeshGraph, start, end, corridor: list[int], portals: list[int], d: float):
    """Funnel through the corridor's portals, then round bends to keep d from wall corners."""
    lefts, rights, lcs, rcs = [], [], [], []
    for e in portals:
        sl, sr, lc, rc = portal_ends(mesh, graph, e, d)
        lefts.append(sl), rights.append(sr), lcs.append(lc), rcs.append(rc)
    pts, idx, side = string_pull(np.asarray(start, float), np.asarray(end, float), lefts, rights)
    corners = [lcs[i] if s == "L" else rcs[i] if s == "R" else None for i, s in zip(idx, side)]
    if d > 0:
        # A bend forced by a neighbouring portal's cut still turns around the nearest wall point.
        for k, (i, s) in enumerate(zip(idx, side)):
            if s and corners[k] is None:
                corners[k] = _side_wall_point(mesh, graph, portals[i], pts[k - 1], pts[k], pts[k + 1], s == "L", d)
    pts, keep = round_corners(pts, corners, side, d)
    polys = [corridor[0] if idx[k] < 0 else corridor[min(idx[k] + 1, len(corridor) - 1)] for k in keep]
    return [np.asarray(x, dtype=np.float64) for x in pts], polys


def build_path(mesh: NavMesh, graph: MeshGraph, start, end, start_poly: int, portals: list[int], d: float, passable=None, uniform: bool = True) -> PathResult:
    """Funnel through the corridor given by portal edge slots. For the bake radius with uniform costs,
    the visibility-graph refinement then gives the exact shortest path. Otherwise shortcut and
    re-funnel through the corridor the shortcuts cross while that changes it (the funnel is exact
    within one corridor), and keep d from wall points."""
    corridor = [start_poly] + [int(mesh.neighbors[e]) for e in portals]
    pts, polys = _pull(mesh, graph, start, end, corridor, portals, d)
    exact = d <= 0 and uniform
    refined = _corner_refine(mesh, graph, pts, polys, passable) if exact else None
    if refined is None:
        for _ in range(3):
            pts, polys, walked = shortcut(mesh, graph, pts, polys, d, passable)
            if walked is None or walked == corridor:
                break
            candidate = _portals_of(mesh, walked)
            new_pts, new_polys = _pull(mesh, graph, start, end, walked, candidate, d)
            if _length(new_pts) > _length(pts) + 1e-9:
                break
            corridor, pts, polys = walked, new_pts, new_polys
        if d > 0:
            pts, polys = _enforce_clearance(mesh, graph, pts, polys, d, passable)
        elif exact:
            # Shortcuts shrink the ellipse of corners that could still shorten the path.
            refined = _corner_refine(mesh, graph, pts, polys, passable)
    if refined is not None:
        pts, polys = refined
    arr = np.array(pts, dtype=np.float64).reshape(-1, 3)
    return PathResult(FOUND, arr, np.array(polys, dtype=np.int64), _length(pts), 0, corridor)


_MAX_REFINE_CORNERS = 80
# Heights within this (m) count as one level floor for the corner refinement.
_LEVEL = 1e-6


def _visible(mesh: NavMesh, graph: MeshGraph, from_polys, a: np.ndarray, b: np.ndarray, passable) -> bool:
    for p in from_polys:
        _, edge, visited = walk_segment(mesh, graph.index, int(p), a, b, passable)
        if edge < 0 and _ends_on(mesh, graph.index, visited[-1], b):
            return True
    return False


def _corner_refine(mesh: NavMesh, graph: MeshGraph, pts: list, polys: list[int], passable) -> tuple[list, list[int]] | None:
    """Shortest path over the visibility graph of the reflex wall corners that could shorten it (those
    inside the ellipse |c - start| + |c - goal| < current length); exact for r = r0. A straight path is
    returned as it is; None when more than _MAX_REFINE_CORNERS qualify (too costly to be exact).

    A* with lazy edges: a visibility test (a walk over the mesh) runs only when an edge is popped, and
    only paths strictly shorter than the current one are pushed; the heuristic is consistent, so the
    first visible pop of a node is its shortest distance."""
    if len(pts) <= 2:
        return pts, polys
    s, g = pts[0], pts[-1]
    length = _length(pts)
    rv = np.flatnonzero(graph.reflex)
    pos = mesh.vertices[rv]
    rv = rv[np.linalg.norm(pos - s, axis=1) + np.linalg.norm(pos - g, axis=1) < length - 1e-9]
    if len(rv) > _MAX_REFINE_CORNERS:
        return None
    nodes = [s, g] + [mesh.vertices[v] for v in rv]
    xyz = [tuple(map(float, node)) for node in nodes]
    # On a level floor a shortest path only bends around wall corners; on slopes a 3D-shorter path
    # may swing the other way around a corner to save climbing, so every bend is tried there.
    level = max(c[2] for c in xyz) - min(c[2] for c in xyz) <= _LEVEL
    sides = [None, None] + ([graph.wall_sides.get(int(v)) for v in rv] if level else [None] * len(rv))
    node_polys = [[polys[0]], [polys[-1]]] + [graph.vertex_polys[v] for v in rv]
    n = len(nodes)
    to_goal = [math.dist(c, xyz[1]) for c in xyz]
    parent = [-1] * n
    done = [False] * n
    heap = [(to_goal[0], 0.0, 0, -1)]
    while heap:
        _, dist, j, i = heapq.heappop(heap)
        if done[j] or (i >= 0 and not _corner_visible(mesh, graph, rv, node_polys, nodes, i, j, passable)):
            continue
        done[j], parent[j] = True, i
        if j == 1:
            break
        for k in range(1, n):
            if not done[k]:
                nd = dist + math.dist(xyz[j], xyz[k])
                if nd + to_goal[k] < length - 1e-9 and _wraps(xyz, sides, i, j, k):
                    heapq.heappush(heap, (nd + to_goal[k], nd, k, j))
    if not done[1]:
        return pts, polys
    chain = [1]
    while chain[-1] != 0:
        chain.append(int(parent[chain[-1]]))
    chain.reverse()
    out_polys = [polys[0]] + [int(node_polys[k][0]) for k in chain[1:-1]] + [polys[-1]]
    return [np.asarray(nodes[k], dtype=np.float64) for k in chain], out_polys


def _wraps(xyz: list, sides: list, i: int, j: int, k: int) -> bool:
    """Can a shortest path run i -> j -> k? It bends only around corners: at corner j it must turn
    toward the wall there, and at corner k the line j -> k must touch the wall without entering it
    (both wall ends on one side). Corners whose walls are unknown pass."""
    if k >= 2 and sides[k] is not None and _side(xyz[j], xyz[k], sides[k]) is None:
        return False
    if j >= 2 and i >= 0 and sides[j] is not None:
        side = _side(xyz[i], xyz[j], sides[j])
        if side is None:
            return False
        (ax, ay), (bx, by), (cx, cy) = xyz[i][:2], xyz[j][:2], xyz[k][:2]
        bend = (bx - ax) * (cy - by) - (by - ay) * (cx - bx)
        if bend * side < 0 or _side(xyz[k], xyz[j], sides[j]) is None:
            return False
    return True


def _side(p: tuple, c: tuple, walls: tuple) -> float | None:
    """Which side of the line p -> c both wall ends at corner c lie on (+ left, - right, 0 along),
    or None when they straddle it (the line enters the wall)."""
    dx, dy = c[0] - p[0], c[1] - p[1]
    scale = 1e-12 * (abs(dx) + abs(dy)) ** 2
    s1 = dx * (walls[0][1] - c[1]) - dy * (walls[0][0] - c[0])
    s2 = dx * (walls[1][1] - c[1]) - dy * (walls[1][0] - c[0])
    if (s1 > scale and s2 < -scale) or (s1 < -scale and s2 > scale):
        return None
    return s1 if abs(s1) > scale else s2


def _corner_visible(mesh: NavMesh, graph: MeshGraph, rv: np.ndarray, node_polys: list, nodes: list, i: int, j: int, passable) -> bool:
    """Straight walk between refinement nodes i and j over the mesh; corner-to-corner answers depend on
    the mesh alone and are cached across queries."""
    if i < 2 or j < 2 or passable is not None:
        return _visible(mesh, graph, node_polys[i], nodes[i], nodes[j], passable)
    key = (int(rv[i - 2]), int(rv[j - 2]))
    seen = graph.visible_cache.get(key)
    if seen is None:
        seen = graph.visible_cache[key] = _visible(mesh, graph, node_polys[i], nodes[i], nodes[j], None)
    return seen


def _closest_wall(mesh: NavMesh, graph: MeshGraph, p: int, a: np.ndarray, b: np.ndarray, passable):
    """Nearest wall point (XY) to segment a-b among walls near the polygons it crosses, and its distance."""
    _, _, visited = walk_segment(mesh, graph.index, p, a, b, passable)
    near = set(visited)
    for q in visited:
        near.update(int(n) for n in mesh.neighbors[mesh.poly_offsets[q] : mesh.poly_offsets[q + 1]] if n >= 0)
    slots = np.concatenate([np.arange(mesh.poly_offsets[q], mesh.poly_offsets[q + 1]) for q in near])
    slots = slots[mesh.neighbors[slots] < 0]
    if not len(slots):
        return None, np.inf
    wa, wb = graph.index.edge_a[slots, :2], graph.index.edge_b[slots, :2]
    # Segment-segment distance (they do not cross: the walk reached b) is attained at an endpoint.
    ends = np.concatenate([wa, wb])
    d_ends, _ = _wall_dist(ends, a[None, :2], b[None, :2])
    d_ab, q_ab = _wall_dist(np.stack([a[:2], b[:2]]), wa, wb)
    k = int(np.argmin(d_ends))
    if d_ends[k] <= d_ab.min():
        return ends[k], float(d_ends[k])
    j = int(np.argmin(d_ab))
    return q_ab[j], float(d_ab[j])


def _enforce_clearance(mesh: NavMesh, graph: MeshGraph, pts: list, polys: list[int], d: float, passable, rounds: int = 64):
    """Where a segment passes closer than d to a wall point c, bend it on the two tangents to the circle (c, d)."""
    pts, polys = list(pts), list(polys)
    k = 0
    while k < len(pts) - 1 and rounds > 0:
        c, dist = _closest_wall(mesh, graph, polys[k], pts[k], pts[k + 1], passable)
        if c is None or dist >= d - 1e-9:
            k += 1
            continue
        rounds -= 1
        a, b = pts[k], pts[k + 1]
        cc = np.array([c[0], c[1], 0.5 * (a[2] + b[2])])
        left = _cross2(a, b, cc) > 0
        margin = d * (1 + 1e-7)
        # A bend that itself sits too close to the wall point is pushed straight away from it first.
        for m in (k, k + 1):
            off = pts[m][:2] - c
            if 0 < m < len(pts) - 1 and np.linalg.norm(off) < margin:
                off = off / max(float(np.linalg.norm(off)), 1e-12)
                push = d * (1 + 1e-5)  # just outside the tangent circle so tangents from it exist
                pts[m] = np.array([c[0] + off[0] * push, c[1] + off[1] * push, pts[m][2]])
                break
        else:
            m = -1
        if m >= 0:
            k = max(m - 1, 0)
            continue
        bent = round_corners([a, 0.5 * (a + b), b], [None, cc, None], ["", "L" if left else "R", ""], margin)[0][1]
        if np.allclose(bent, 0.5 * (a + b)):
            k += 1
            continue
        p, _ = graph.index.locate(bent)
        pts.insert(k + 1, bent)
        polys.insert(k + 1, p if p >= 0 else polys[k])
    return pts, polys


def _cross2(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    return float((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))


def _length(pts: list) -> float:
    xyz = [tuple(map(float, q)) for q in pts]
    return sum(math.dist(a, b) for a, b in zip(xyz[:-1], xyz[1:]))


def _portals_of(mesh: NavMesh, corridor: list[int]) -> list[int]:
    """Edge slots crossed between consecutive corridor polygons."""
    out = []
    for p, q in zip(corridor[:-1], corridor[1:]):
        a, b = int(mesh.poly_offsets[p]), int(mesh.poly_offsets[p + 1])
        out.append(a + int(np.flatnonzero(mesh.neighbors[a:b] == q)[0]))
    return out


def _loop_free(polys: list[int]) -> list[int]:
    """Drop repeats and loops from a polygon walk (a point on a shared vertex can revisit polygons)."""
    out: list[int] = []
    where: dict[int, int] = {}
    for p in polys:
        if p in where:
            cut = where[p]
            for q in out[cut + 1 :]:
                where.pop(q, None)
            del out[cut + 1 :]
            continue
        where[p] = len(out)
        out.append(p)
    return out


def _wall_distance(mesh: NavMesh, graph: MeshGraph, polys: list[int], a: np.ndarray, b: np.ndarray) -> float:
    """XY distance from segment a-b to the wall edges of the given polygons and their neighbours."""
    near = set(polys)
    for p in polys:
        near.update(int(q) for q in mesh.neighbors[mesh.poly_offsets[p] : mesh.poly_offsets[p + 1]] if q >= 0)
    slots = np.concatenate([np.arange(mesh.poly_offsets[p], mesh.poly_offsets[p + 1]) for p in near])
    slots = slots[mesh.neighbors[slots] < 0]
    if len(slots) == 0:
        return math.inf
    wa, wb = graph.index.edge_a[slots, :2], graph.index.edge_b[slots, :2]

    def point_seg(pt, s0, s1):
        v = s1 - s0
        t = np.clip(np.einsum("ij,ij->i", pt - s0, v) / np.maximum(np.einsum("ij,ij->i", v, v), 1e-18), 0, 1)
        return np.linalg.norm(pt - (s0 + t[:, None] * v), axis=1)

    a2, b2 = np.broadcast_to(a[:2], wa.shape), np.broadcast_to(b[:2], wa.shape)
    return float(min(point_seg(a[:2], wa, wb).min(), point_seg(b[:2], wa, wb).min(), point_seg(wa, a2, b2).min(), point_seg(wb, a2, b2).min()))


def _ends_on(mesh: NavMesh, index: MeshIndex, p: int, pt: np.ndarray) -> bool:
    """The walk's last polygon holds pt (XY inside, surface within a climb step): same floor."""
    xy = pt[:2]
    return index.inside_xy(p, xy, 1e-6) and abs(index.height(p, xy) - pt[2]) <= max(mesh.params.agent_max_climb, 0.05)


def shortcut(mesh: NavMesh, graph: MeshGraph, pts: list, polys: list[int], d: float, passable=None):
    """Greedy final improvement: from each kept point jump to the farthest later point reachable in a
    straight line over the surface that stays d from walls (fixes corridors A* chose sub-optimally).

    Returns the kept points, their polygons and the polygons the kept segments cross (None if a
    segment could not be walked)."""
    out_p, out_poly = [pts[0]], [polys[0]]
    walked: list[int] | None = [polys[0]]
    i = 0
    while i < len(pts) - 1:
        j = len(pts) - 1
        here = out_poly[-1]
        while j > i:
            t, edge, visited = walk_segment(mesh, graph.index, here, pts[i], pts[j], passable)
            ok = edge < 0 and _ends_on(mesh, graph.index, visited[-1], pts[j])
            if ok and (d <= 0 or _wall_distance(mesh, graph, visited, pts[i], pts[j]) >= d - 1e-9):
                if walked is not None:
                    walked += visited[1:]
                out_p.append(pts[j]), out_poly.append(visited[-1])
                break
            if j == i + 1:
                walked = None
                out_p.append(pts[j]), out_poly.append(polys[j])
                break
            j -= 1
        i = j
    return out_p, out_poly, None if walked is None else _loop_free(walked)


def find_path(mesh: NavMesh, start, goal, radius: float | None = None, filter: QueryFilter | None = None) -> PathResult:
    """Shortest path for an agent of `radius` (>= bake radius) from start to goal, world frame."""
    search = SlicedSearch(mesh, start, goal, radius, filter)
    search.update()
    return search.result()
