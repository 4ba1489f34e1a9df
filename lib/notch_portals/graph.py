"""The planar graph of a region for the notch portals: ring half-edges and portals, with vertex
and edge arrays binned on a grid, and the ray casts and visibility tests the portal search asks."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..geometry import meeting_boxes
from ..triangulate import BoxBins

# A corner is a notch when its interior angle exceeds pi by more than this (radians).
_REFLEX_EPS = 1e-9
# A cell with area / perimeter² at or below this is degenerate (a zero-width sliver): give up.
_MIN_FATNESS = 1e-9
# Relative tolerance of the ray casts: a direction within this share of its length of a wedge's
# side splits it, a ray within it of parallel to an edge misses it, and a hit within it of an edge's
# ends is on the edge.
_SPLIT_TOL = 1e-12
# Distances along a ray within this share of the coordinates' size (or of the ray's length, at least
# 1 m) are float noise: a hit that near the ray's start or target touches, it does not block.
_CAST_NOISE = 1e-9
# Regions with at most this many vertices are searched whole; larger ones in windows around each
# notch, and two-notch partners only within this many windows.
_WHOLE_REGION_VERTICES = 400
# A visibility test casts against the edges within this fraction of the search window first, and
# doubles the reach only for rays nothing has blocked yet (most are blocked near the notch).
_FIRST_CAST_WINDOW = 0.25
# Rays paired with edges at once, and ray and edge pairs tested at once, by _visible_many (its
# arrays stay within a few MB).
_RAY_CHUNK = 2048
_PAIR_CHUNK = 1 << 16


@dataclass
class _Target:
    """Where a portal from a notch ends: at vertex `vertex`, or at a new point on edge `edge`."""

    score: float
    vertex: int | None
    edge: tuple[int, int] | None = None
    point: tuple[float, float] | None = None
    t: float = 0.0


class PlanarGraph:
    """Planar graph of the region: ring half-edges (interior on their left) and portals (both ways).

    Vertex and edge coordinates also live in growing arrays, binned on a grid of the window's size,
    so every search looks only at the vertices and edges within a window around its notch, widened
    until the best portal is certain.
    """

    def __init__(self, points, rings: list[list[int]], fixed: set[tuple[int, int]], snap: float):
        self.snap = snap
        self.next_id = len(points)
        self.xyz: dict[int, tuple[float, float, float]] = {}
        self.out: dict[int, list[int]] = {}
        self.inn: dict[int, list[int]] = {}
        # Undirected edge (min, max) -> "wall", "fixed" (shared with another region) or "portal".
        self.kind: dict[tuple[int, int], str] = {}
        self.broken = False
        ids = list(dict.fromkeys(v for ring in rings for v in ring))
        # Rows [0, _vertex_count) and [0, _edge_count) are in use; the arrays grow by doubling.
        self._vertex_count = len(ids)
        self._vertex_ids = np.array(ids, dtype=np.int64)
        self._vertex_xy = np.array([points[v][:2] for v in ids], dtype=np.float64).reshape(-1, 2)
        self._vertex_row = {v: row for row, v in enumerate(ids)}
        # Per vertex row: the vectors to both ends of its first reflex corner (zero when it has
        # none), and whether it has several; kept by _update_corners.
        self._corner_a = np.zeros((len(ids), 2))
        self._corner_b = np.zeros((len(ids), 2))
        self._corner_several = np.zeros(len(ids), dtype=bool)
        self._edge_row: dict[tuple[int, int], int] = {}
        self._edge_count = 0
        self._edge_ends = np.zeros((0, 2), dtype=np.int64)
        self._edge_a = np.zeros((0, 2))
        self._edge_b = np.zeros((0, 2))
        self._edge_box = np.zeros((0, 4))  # per edge row: min x, min y, max x, max y
        for v in ids:
            x, y, z = (float(c) for c in points[v])
            self.xyz[v] = (x, y, z)
            self.out[v], self.inn[v] = [], []
        new_edges = []
        for ring in rings:
            for k, a in enumerate(ring):
                b = ring[(k + 1) % len(ring)]
                key = (min(a, b), max(a, b))
                if key in self.kind or a == b:
                    self.broken = True  # an edge walked twice: a zero-width slit the cells cannot hold
                    return
                self.kind[key] = "fixed" if (a, b) in fixed else "wall"
                self.out[a].append(b)
                self.inn[b].append(a)
                new_edges.append(key)
        scale = max(float(np.abs(self._vertex_xy).max(initial=0.0)), 1.0)
        self.eps = _CAST_NOISE * scale
        self.extent = float(np.ptp(self._vertex_xy, axis=0).max(initial=0.0)) * 1.5 + 1.0
        starts = np.array([self.xyz[a][:2] for a, _ in new_edges]).reshape(-1, 2)
        ends = np.array([self.xyz[b][:2] for _, b in new_edges]).reshape(-1, 2)
        lengths = np.hypot(*(ends - starts).T)
        # First search window: a few typical edge lengths; the whole region when it is small.
        typical = 4.0 * float(np.median(lengths)) if len(lengths) else 1.0
        self.window = self.extent if len(ids) <= _WHOLE_REGION_VERTICES else min(typical, self.extent)
        self._first_cast = self.window if self.window >= self.extent else _FIRST_CAST_WINDOW * self.window
        self._vertex_bins, self._edge_bins = BoxBins(self.window), BoxBins(self.window)
        self._vertex_bins.add(np.arange(len(ids)), np.hstack([self._vertex_xy, self._vertex_xy]))
        self._add_edges(new_edges)
        self._reflex: dict[int, list[tuple[int, int, int]]] = {}
        for v in self.xyz:
            self._update_corners(v)

    def _add_vertex(self, v: int) -> None:
        row = self._vertex_count
        self._vertex_count += 1
        for name in ("_vertex_ids", "_vertex_xy", "_corner_a", "_corner_b", "_corner_several"):
            setattr(self, name, _reserve(getattr(self, name), self._vertex_count))
        self._vertex_ids[row], self._vertex_xy[row] = v, self.xyz[v][:2]
        self._vertex_row[v] = row
        self._vertex_bins.add(np.array([row]), np.tile(self._vertex_xy[row], 2)[None])

    def _add_edges(self, keys: list[tuple[int, int]]) -> None:
        base, self._edge_count = self._edge_count, self._edge_count + len(keys)
        for name in ("_edge_ends", "_edge_a", "_edge_b", "_edge_box"):
            setattr(self, name, _reserve(getattr(self, name), self._edge_count))
        for k, key in enumerate(keys):
            self._edge_row[key] = base + k
        rows = np.arange(base, self._edge_count)
        a = np.array([self.xyz[a][:2] for a, _ in keys]).reshape(-1, 2)
        b = np.array([self.xyz[b][:2] for _, b in keys]).reshape(-1, 2)
        self._edge_ends[rows] = np.array(keys, dtype=np.int64).reshape(-1, 2)
        self._edge_a[rows], self._edge_b[rows] = a, b
        self._edge_box[rows] = np.hstack([np.minimum(a, b), np.maximum(a, b)])
        self._edge_bins.add(rows, self._edge_box[rows])

    def _near_vertices(self, v: int, radius: float) -> np.ndarray:
        """Vertex rows within `radius` of v, in increasing order."""
        if radius >= self.extent:
            return np.arange(self._vertex_count)
        x, y = self.xyz[v][:2]
        rows = self._vertex_bins.meeting(x - radius, y - radius, x + radius, y + radius)
        xy = self._vertex_xy[rows]
        return rows[np.hypot(xy[:, 0] - x, xy[:, 1] - y) <= radius]

    def _near_edges(self, v: int, radius: float) -> np.ndarray:
        """Edge rows whose box meets the square of half-side `radius` around v, in increasing order."""
        if radius >= self.extent:
            return np.arange(self._edge_count)
        x, y = self.xyz[v][:2]
        return self._edges_meeting(x - radius, y - radius, x + radius, y + radius)

    def _edges_meeting(self, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
        """Edge rows whose box meets the box x0..x1, y0..y1, in increasing order."""
        rows = self._edge_bins.meeting(x0, y0, x1, y1)
        box = self._edge_box[rows]
        return rows[(box[:, 0] <= x1) & (box[:, 2] >= x0) & (box[:, 1] <= y1) & (box[:, 3] >= y0)]

    def _dir(self, v: int, w: int) -> tuple[float, float]:
        return self.xyz[w][0] - self.xyz[v][0], self.xyz[w][1] - self.xyz[v][1]

    def _next(self, u: int, v: int) -> tuple[int, float]:
        """The half-edge v->w after u->v around the face on its left, and the face's corner angle at v
        (measured clockwise from v->u to v->w)."""
        ax, ay = self._dir(v, u)
        base = math.atan2(ay, ax)
        best, best_angle = -1, math.inf
        for w in self.out[v]:
            dx, dy = self._dir(v, w)
            angle = (base - math.atan2(dy, dx)) % (2 * math.pi)
            if angle <= 0.0:
                angle = 2 * math.pi
            if angle < best_angle:
                best, best_angle = w, angle
        return best, best_angle

    def notches(self) -> list[tuple[int, int, int]]:
        """Every face corner (u, v, w) whose angle at v is reflex."""
        return [notch for corners in self._reflex.values() for notch in corners]

    def _is_notch(self, notch: tuple[int, int, int]) -> bool:
        return notch in self._reflex.get(notch[1], ())

    def _update_corners(self, v: int) -> None:
        """Recompute the reflex corners at v (after an edge at v was added or split)."""
        corners = []
        for u in self.inn[v]:
            w, angle = self._next(u, v)
            if angle > math.pi + _REFLEX_EPS:
                corners.append((u, v, w))
        if corners:
            self._reflex[v] = corners
        else:
            self._reflex.pop(v, None)
        row = self._vertex_row[v]
        u, _, w = corners[0] if corners else (v, v, v)
        self._corner_a[row], self._corner_b[row] = self._dir(v, u), self._dir(v, w)
        self._corner_several[row] = len(corners) > 1

    def _corner_at(self, v: int, d: tuple[float, float]) -> tuple[int, int, float] | None:
        """The face corner (u, w, angle) at v whose wedge the direction d leaves v through."""
        base_d = math.atan2(d[1], d[0])
        for u in self.inn[v]:
            w, angle = self._next(u, v)
            ax, ay = self._dir(v, u)
            into = (math.atan2(ay, ax) - base_d) % (2 * math.pi)
            if 0.0 < into < angle:
                return u, w, angle
        return None

    @staticmethod
    def _in_cone(a: tuple[float, float], b: tuple[float, float], d: np.ndarray) -> np.ndarray:
        """Directions d (D, 2) that split the reflex wedge from a clockwise to b into two convex parts."""
        na, nb = math.hypot(*a), math.hypot(*b)
        nd = np.hypot(d[:, 0], d[:, 1])
        tol = _SPLIT_TOL * nd
        return (a[0] * d[:, 1] - a[1] * d[:, 0] <= tol * na) & (d[:, 0] * b[1] - d[:, 1] * b[0] <= tol * nb)

    @staticmethod
    def _splits(a: tuple[float, float], b: tuple[float, float], d: tuple[float, float]) -> bool:
        """_in_cone for one direction d, in plain floats (numpy's per-call cost is most of it)."""
        tol = _SPLIT_TOL * math.hypot(*d)
        return a[0] * d[1] - a[1] * d[0] <= tol * math.hypot(*a) and d[0] * b[1] - d[1] * b[0] <= tol * math.hypot(*b)

    def _cast(self, v: int, dirs: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """First of the edges `rows` each unit ray from v meets: (distance, edge row, parameter along
        the edge). Edges at v are ignored. A ray that meets nothing gets distance inf."""
        if not len(rows):
            return np.full(len(dirs), np.inf), np.zeros(len(dirs), dtype=np.int64), np.zeros(len(dirs))
        ox, oy = self.xyz[v][:2]
        s, t = self._ray_hits(v, ox, oy, dirs[:, 0, None], dirs[:, 1, None], rows)
        first = np.argmin(s, axis=1)
        picked = np.arange(len(dirs))
        return s[picked, first], rows[first], t[picked, first]

    def _ray_hits(self, v, ox, oy, dx, dy, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where unit rays (dx, dy) from vertices v at (ox, oy) meet edges `rows`, all broadcast
        together: (distance along the ray, inf where it misses or the edge ends at v; parameter
        along the edge)."""
        a, b, ends = self._edge_a[rows], self._edge_b[rows], self._edge_ends[rows]
        ex, ey = b[:, 0] - a[:, 0], b[:, 1] - a[:, 1]
        wx, wy = a[:, 0] - ox, a[:, 1] - oy
        den = dx * ey - dy * ex
        s_num = wx * ey - wy * ex
        t_num = wx * dy - wy * dx
        parallel = np.abs(den) <= _SPLIT_TOL * np.hypot(ex, ey)
        # Parallel pairs are divided by 1 (no warnings): they are no hit, or meet along the edge.
        den = np.where(parallel, 1.0, den)
        s = s_num / den
        t = t_num / den
        hit = ~parallel & (s > self.eps) & (t >= -_SPLIT_TOL) & (t <= 1 + _SPLIT_TOL)
        # A ray running along an edge meets it at its nearer end.
        along = parallel & (np.abs(t_num) <= self.eps)
        if along.any():
            sa = wx * dx + wy * dy
            sb = sa + ex * dx + ey * dy
            near = np.where((sa > self.eps) & ((sa <= sb) | (sb <= self.eps)), sa, sb)
            ok = along & (near > self.eps)
            s = np.where(ok, near, s)
            t = np.where(ok, np.where(near == sa, 0.0, 1.0), t)
            hit |= ok
        hit &= (ends[:, 0] != v) & (ends[:, 1] != v)
        return np.where(hit, s, np.inf), t

    def _visible(self, v: int, dirs: np.ndarray, length: np.ndarray) -> np.ndarray:
        """Per unit direction (D, 2): nothing lies between v and the point `length` (D,) along it.

        Cast against the edges in a small window first, then in ever wider ones only for the rays
        neither blocked yet nor shorter than the window (which holds all their blockers): most
        rays are blocked near v."""
        seen = np.zeros(len(dirs), dtype=bool)
        todo = np.arange(len(dirs))
        radius = self._first_cast
        while len(todo):
            radius = min(radius, self.extent)
            dist, _, _ = self._cast(v, dirs[todo], self._near_edges(v, radius))
            blocked = _blocked(dist, length[todo])
            done = blocked | (length[todo] <= radius) | (radius >= self.extent)
            seen[todo[done & ~blocked]] = True
            todo = todo[~done]
            radius *= 2
        return seen

    def _visible_many(self, v: np.ndarray, dirs: np.ndarray, length: np.ndarray) -> np.ndarray:
        """_visible for rays from many vertices at once: per ray k, nothing lies between vertex v_k
        and the point length_k along the unit direction dirs_k. Each ray is tested against the
        edges whose boxes meet its own (any blocker's box holds the point where it blocks), the
        pairs a chunk at a time."""
        origin = np.array([self.xyz[x][:2] for x in v.tolist()], dtype=np.float64).reshape(-1, 2)
        end = origin + dirs * length[:, None]
        margin = 2.0 * self.eps
        boxes = np.hstack([np.minimum(origin, end) - margin, np.maximum(origin, end) + margin])
        blocked = np.zeros(len(v), dtype=bool)
        for first in range(0, len(v), _RAY_CHUNK):
            ray, row = meeting_boxes(boxes[first : first + _RAY_CHUNK], self._edge_box[: self._edge_count])
            ray += first
            for lo in range(0, len(ray), _PAIR_CHUNK):
                r, e = ray[lo : lo + _PAIR_CHUNK], row[lo : lo + _PAIR_CHUNK]
                s, _ = self._ray_hits(v[r], origin[r, 0], origin[r, 1], dirs[r, 0], dirs[r, 1], e)
                blocked[r[_blocked(s, length[r])]] = True
        return ~blocked

    def _clear(self, v: int, d: np.ndarray, length: float) -> bool:
        """Nothing lies between v and the point `length` along the unit direction d."""
        x, y = self.xyz[v][:2]
        ex, ey = x + d[0] * length, y + d[1] * length
        rows = self._edges_meeting(
            min(x, ex) - self.eps, min(y, ey) - self.eps, max(x, ex) + self.eps, max(y, ey) + self.eps
        )
        dist, _, _ = self._cast(v, d[None], rows)
        return not _blocked(dist, np.array([length]))[0]

    def _sees(self, v: int, p: int) -> bool:
        """Nothing lies between v and vertex p (and p is not v's twin on another floor, at its very place)."""
        d = self._dir(v, p)
        length = math.hypot(*d)
        if length == 0.0:
            return False
        return self._clear(v, np.array([d[0] / length, d[1] / length]), length)

    def _lay(self, v: int, target: _Target) -> set[int]:
        """Add the portal from v to the target, splitting the target edge for a Steiner vertex;
        returns the vertices whose corners changed."""
        p = target.vertex
        touched = {v}
        if p is None:
            assert target.edge is not None and target.point is not None  # a target is a vertex or a point on an edge
            a, b = target.edge
            p = self.next_id
            self.next_id += 1
            za, zb = self.xyz[a][2], self.xyz[b][2]
            self.xyz[p] = (target.point[0], target.point[1], za + target.t * (zb - za))
            self.out[p], self.inn[p] = [], []
            self._add_vertex(p)
            kind = self.kind.pop((a, b))
            for x, y in ((a, b), (b, a)):
                if y in self.out[x]:
                    self.out[x].remove(y)
                    self.inn[y].remove(x)
                    self.out[x].append(p)
                    self.inn[p].append(x)
                    self.out[p].append(y)
                    self.inn[y].append(p)
            first = (min(a, p), max(a, p))
            row = self._edge_row.pop((a, b))
            self._edge_row[first] = row
            self._edge_ends[row] = first
            self._edge_a[row], self._edge_b[row] = self.xyz[first[0]][:2], self.xyz[first[1]][:2]
            self._edge_box[row] = (
                *np.minimum(self._edge_a[row], self._edge_b[row]),
                *np.maximum(self._edge_a[row], self._edge_b[row]),
            )  # still in its bins
            second = (min(b, p), max(b, p))
            self.kind[first] = self.kind[second] = kind
            self._add_edges([second])
            touched |= {a, b}
        self.out[v].append(p)
        self.inn[p].append(v)
        self.out[p].append(v)
        self.inn[v].append(p)
        key = (min(v, p), max(v, p))
        self.kind[key] = "portal"
        self._add_edges([key])
        touched.add(p)
        for x in touched:
            self._update_corners(x)
        return touched

    def faces(self) -> list[list[int]] | None:
        """Trace the cells (faces left of every half-edge); None unless all are convex and positive."""
        seen: set[tuple[int, int]] = set()
        cells = []
        for a, outs in self.out.items():
            for b in outs:
                if (a, b) in seen:
                    continue
                cell, u, v = [], a, b
                while (u, v) not in seen:
                    seen.add((u, v))
                    cell.append(v)
                    w, angle = self._next(u, v)
                    if angle > math.pi + _REFLEX_EPS or w < 0:
                        return None
                    u, v = v, w
                if (u, v) != (a, b) or len(cell) < 3 or len(set(cell)) != len(cell):
                    return None
                xy = [self.xyz[c][:2] for c in cell]
                area = 0.5 * sum(xy[k - 1][0] * xy[k][1] - xy[k][0] * xy[k - 1][1] for k in range(len(xy)))
                perimeter = sum(math.dist(xy[k - 1], xy[k]) for k in range(len(xy)))
                if area <= _MIN_FATNESS * perimeter * perimeter:
                    return None
                cells.append(cell)
        return cells


def _blocked(dist: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Rays whose first hit (dist) comes before their target `length` away (beyond float noise)."""
    return dist < length - _CAST_NOISE * np.maximum(length, 1.0)


def _reserve(rows: np.ndarray, count: int) -> np.ndarray:
    """The array, or a copy with room for at least `count` rows (capacity doubles: appends stay linear)."""
    if len(rows) >= count:
        return rows
    grown = np.zeros((max(count, 2 * len(rows)), *rows.shape[1:]), dtype=rows.dtype)
    grown[: len(rows)] = rows
    return grown
