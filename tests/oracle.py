"""Exact answers for path queries on random single-floor levels (shapely is the referee).

A level is a square floor with closed, outward-facing solids on it, as a designer models them:
rotated boxes, thin walls and polygonal pillars, taller than the agent. The free space for an
agent of radius r is the floor shrunk by r minus the obstacles grown by r. A path query is judged
against that exact free space and against the shortest path inside the baked navmesh.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString, Point, Polygon, box
from shapely.ops import unary_union

from blender_navmesh import AreaVolume
from levels import Scene

# Arcs of grown obstacles and shrunk navmeshes are polygons with this many segments per quarter.
QUAD_SEGS = 32
# RecastDemo-matched bake parameters at two scales: max_edge_error = 1.3 cs, region_min_area = 64 cs².
PARAMS = {
    "r0.6": dict(cell_size=0.3, agent_radius=0.6, max_edge_error=0.39, region_min_area=5.76),
    "r0.3": dict(cell_size=0.15, agent_radius=0.3, max_edge_error=0.195, region_min_area=1.44),
}


@dataclass
class Level:
    scene: Scene
    floor: Polygon
    obstacles: list  # footprints (shapely Polygons) of the solids standing on the floor
    height: float  # of the solids, so the floor's navmesh is told apart from their tops

    def free_space(self, r: float):
        """Exact positions of an agent of radius r on the floor."""
        grown = unary_union([o.buffer(r, quad_segs=QUAD_SEGS) for o in self.obstacles])
        return self.floor.buffer(-r, join_style="mitre").difference(grown)

    def geometry(self):
        """What the agent must keep its radius from: the obstacles and the floor's edge."""
        return unary_union([*self.obstacles, self.floor.exterior])

    def random_points(self, r: float, count: int, rng: np.random.Generator) -> np.ndarray:
        """count uniform points (z = 0) of the free space for radius r."""
        free = self.free_space(r)
        shapely.prepare(free)
        x0, y0, x1, y1 = free.bounds
        out = np.zeros((0, 2))
        while len(out) < count:
            xy = rng.uniform((x0, y0), (x1, y1), size=(4 * count, 2))
            out = np.concatenate([out, xy[shapely.contains_xy(free, xy[:, 0], xy[:, 1])]])
        return np.c_[out[:count], np.zeros(count)]


def _prism(scene: Scene, ring: list, height: float) -> None:
    """A closed vertical prism over a counter-clockwise ring of (x, y), outward-facing."""
    n = len(ring)
    verts = [(x, y, 0.0) for x, y in ring] + [(x, y, height) for x, y in ring]
    tris = [(0, k + 1, k) for k in range(1, n - 1)] + [(n, n + k, n + k + 1) for k in range(1, n - 1)]
    for k in range(n):
        j = (k + 1) % n
        tris += [(k, j, n + j), (k, n + j, n + k)]
    scene.add(verts, tris)


def random_level(seed: int, extent: float = 40.0, count: int = 18, height: float = 3.0) -> Level:
    """A floor of extent x extent m with `count` solids: rotated boxes, 0.3 m thin walls and
    5- to 11-sided pillars, placed at random (they may overlap one another)."""
    rng = np.random.default_rng(seed)
    scene = Scene().floor(0.0, 0.0, extent, extent)
    footprints = []
    for k in range(count):
        kind = k % 3
        cx, cy = rng.uniform(2.0, extent - 2.0, size=2)
        yaw = rng.uniform(0, math.pi)
        if kind == 0:
            sx, sy = rng.uniform(0.6, 3.0, size=2)
        elif kind == 1:
            sx, sy = rng.uniform(3.0, 10.0), 0.3
        if kind < 2:
            local = [(-sx / 2, -sy / 2), (sx / 2, -sy / 2), (sx / 2, sy / 2), (-sx / 2, sy / 2)]
        else:
            sides, rad = int(rng.integers(5, 12)), rng.uniform(0.3, 1.2)
            local = [
                (rad * math.cos(2 * math.pi * i / sides), rad * math.sin(2 * math.pi * i / sides)) for i in range(sides)
            ]
        c, s = math.cos(yaw), math.sin(yaw)
        ring = [(cx + c * x - s * y, cy + s * x + c * y) for x, y in local]
        _prism(scene, ring, height)
        footprints.append(Polygon(ring))
    return Level(scene, box(0.0, 0.0, extent, extent), footprints, height)


def pillar_rows(seed: int, r: float) -> Level:
    """A 16 x 12 m floor with two staggered rows of four square pillars (0.3-0.5 m) whose bands of
    width r nearly touch (gaps of -4 to +4 cm between them), as a colonnade is modelled: the floor
    between neighbouring pillars is pinched to a strip a few millimetres wide, or closed."""
    rng = np.random.default_rng(seed)
    scene = Scene().floor(0.0, 0.0, 16.0, 12.0)
    centre = np.array([8.0, 6.0])
    yaw = rng.uniform(0, math.pi / 2)
    side = rng.uniform(0.3, 0.5)
    step, row = side + 2 * r + rng.uniform(-0.04, 0.04, size=2)
    footprints = []
    for j in range(2):
        for i in range(4):
            offset = np.array([(i - 1.5 + 0.5 * j) * step, (j - 0.5) * row]) + rng.uniform(-0.02, 0.02, size=2)
            a = yaw + rng.uniform(-0.2, 0.2)
            turn = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
            square = 0.5 * side * np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)])
            ring = [tuple(p) for p in centre + (offset + square) @ turn.T]
            _prism(scene, ring, 3.0)
            footprints.append(Polygon(ring))
    return Level(scene, box(0.0, 0.0, 16.0, 12.0), footprints, 3.0)


def painted_areas(seed: int, extent: float = 40.0, count: int = 6) -> list[AreaVolume]:
    """count area volumes for a random_level of that extent: rotated boxes 1.5 to 8 m across, each
    painting an area id from 1 to 5 on the floor under it. They leave the free space as it is, but
    cut the floor into regions whose borders meet the obstacles' bands."""
    rng = np.random.default_rng(10_000 + seed)
    volumes = []
    for k in range(count):
        cx, cy = rng.uniform(2.0, extent - 2.0, size=2)
        sx, sy = rng.uniform(1.5, 8.0, size=2)
        shell = Scene().box((cx, cy, -1.0), (sx, sy, 2.0), rng.uniform(0.0, 180.0))
        volumes.append(AreaVolume(shell.vertices, shell.triangles, int(rng.integers(1, 6)), f"area {k}"))
    return volumes


def floor_polygons(mesh, level: Level):
    """The navmesh polygons on the floor (not on the solids' tops), as one shapely geometry."""
    keep = []
    for p in range(mesh.polygon_count):
        v = mesh.vertices[mesh.polygon(p)]
        if v[:, 2].max() < 0.5 * level.height:
            keep.append(Polygon(v[:, :2]))
    return unary_union(keep)


class ShortestPaths:
    """Exact shortest paths inside a polygonal domain (with holes) by Dijkstra over the visibility
    graph of its reflex vertices, where every shortest path bends."""

    def __init__(self, domain):
        self.domain = domain.buffer(1e-7)
        shapely.prepare(self.domain)
        rings = []
        for poly in getattr(domain, "geoms", [domain]):
            rings.append((np.asarray(poly.exterior.coords)[:-1], True))
            rings += [(np.asarray(h.coords)[:-1], False) for h in poly.interiors]
        nodes, sides = [], []
        for ring, outer in rings:
            ccw = shapely.LinearRing(ring).is_ccw
            prev, nxt = np.roll(ring, 1, axis=0), np.roll(ring, -1, axis=0)
            turn = np.cross(ring - prev, nxt - ring)
            # Reflex seen from inside the domain: a right turn on a counter-clockwise ring.
            reflex = turn < 0 if ccw == outer else turn > 0
            nodes.append(ring[reflex])
            sides.append(np.stack([prev[reflex], nxt[reflex]], axis=1))
        self.nodes = np.concatenate(nodes) if nodes else np.zeros((0, 2))
        n = len(self.nodes)
        i, j = np.triu_indices(n, 1)
        # A shortest path only runs between reflex vertices along lines that leave both vertices'
        # ring neighbours on one side (it wraps them); only those lines are tested for cover.
        side = np.concatenate(sides) if sides else np.zeros((0, 2, 2))
        ij = self.nodes[j] - self.nodes[i]
        tangent = np.ones(len(i), dtype=bool)
        for end in (i, j):
            rel = side[end] - self.nodes[end][:, None, :]
            s = ij[:, None, 0] * rel[..., 1] - ij[:, None, 1] * rel[..., 0]
            tangent &= ~(((s[:, 0] > 1e-12) & (s[:, 1] < -1e-12)) | ((s[:, 0] < -1e-12) & (s[:, 1] > 1e-12)))
        i, j = i[tangent], j[tangent]
        lines = shapely.linestrings(np.stack([self.nodes[i], self.nodes[j]], axis=1))
        ok = shapely.covers(self.domain, lines)
        w = np.linalg.norm(self.nodes[i] - self.nodes[j], axis=1)
        self.adj: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        for a, b, d in zip(i[ok].tolist(), j[ok].tolist(), w[ok].tolist()):
            self.adj[a].append((b, d))
            self.adj[b].append((a, d))

    def length(self, start, goal) -> float:
        """Shortest XY length from start to goal inside the domain (inf if either is outside)."""
        s, g = np.asarray(start, float)[:2], np.asarray(goal, float)[:2]
        if not (self.domain.covers(Point(s)) and self.domain.covers(Point(g))):
            return math.inf
        if self.domain.covers(LineString([s, g])):
            return float(np.linalg.norm(g - s))
        n = len(self.nodes)
        ends = []
        for p in (s, g):
            lines = shapely.linestrings(np.stack([np.broadcast_to(p, self.nodes.shape), self.nodes], axis=1))
            seen = shapely.covers(self.domain, lines)
            ends.append([(k, float(np.linalg.norm(self.nodes[k] - p))) for k in np.flatnonzero(seen)])
        to_goal = {k: d for k, d in ends[1]}
        best = math.inf
        dist = [math.inf] * n
        heap = []
        for k, d in ends[0]:
            dist[k] = d
            heap.append((d + float(np.linalg.norm(self.nodes[k] - g)), d, k))
        heapq.heapify(heap)
        while heap:
            f, d, k = heapq.heappop(heap)
            if f >= best:
                break
            if d > dist[k]:
                continue
            if k in to_goal:
                best = min(best, d + to_goal[k])
            for j, w in self.adj[k]:
                nd = d + w
                if nd < dist[j]:
                    dist[j] = nd
                    heapq.heappush(heap, (nd + float(np.linalg.norm(self.nodes[j] - g)), nd, j))
        return best


@dataclass
class PathVerdict:
    """What a found path does wrong, measured in XY (meters)."""

    through_obstacle: float  # length of the path inside obstacle footprints
    off_navmesh: float  # length of the path outside the navmesh (1 cm tolerance)
    clearance: float  # closest approach to the real geometry
    length: float  # the path's XY length


def judge(points: np.ndarray, level: Level, navmesh_shape, geometry=None) -> PathVerdict:
    xy = np.asarray(points, float)[:, :2]
    line = LineString(xy) if len(xy) > 1 else Point(xy[0])
    obstacles = unary_union(level.obstacles)
    inside = line.intersection(obstacles).length if len(xy) > 1 else 0.0
    off = line.difference(navmesh_shape.buffer(0.01)).length if len(xy) > 1 else 0.0
    geometry = geometry if geometry is not None else level.geometry()
    length = float(np.linalg.norm(np.diff(xy, axis=0), axis=1).sum())
    return PathVerdict(inside, off, float(line.distance(geometry)), length)
