"""Spatial index over polygon bounding boxes (uniform XY grid) and point location on the mesh."""
from __future__ import annotations

import math
import weakref

import numpy as np

from ..errors import NavMeshError
from ..navmesh import NavMesh

_INDEXES: dict[int, tuple[weakref.ref, "MeshIndex"]] = {}


class MeshIndex:
    """Per-mesh query data: polygon bboxes in a uniform XY grid, planes, detail triangles per polygon."""

    def __init__(self, mesh: NavMesh):
        if mesh.is_empty:
            raise NavMeshError(f"cannot query an empty navmesh ({mesh.empty_reason or 'no polygons'})")
        self.mesh = weakref.proxy(mesh)
        v = mesh.vertices
        offs = mesh.poly_offsets
        pv = v[mesh.poly_vertices]
        self.lo = np.minimum.reduceat(pv, offs[:-1], axis=0)
        self.hi = np.maximum.reduceat(pv, offs[:-1], axis=0)
        self.edge_poly = mesh.edge_polygon
        self.edge_a = pv
        self.edge_b = v[mesh.edge_next_vertex]
        # Newell normal per polygon gives the plane used when there is no detail mesh.
        a, b = self.edge_a, self.edge_b
        n = np.stack(
            [
                np.add.reduceat((a[:, 1] - b[:, 1]) * (a[:, 2] + b[:, 2]), offs[:-1]),
                np.add.reduceat((a[:, 2] - b[:, 2]) * (a[:, 0] + b[:, 0]), offs[:-1]),
                np.add.reduceat((a[:, 0] - b[:, 0]) * (a[:, 1] + b[:, 1]), offs[:-1]),
            ],
            axis=1,
        )
        self.area = 0.5 * n[:, 2]
        self.normal = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-18)
        self.centroid = np.add.reduceat(pv, offs[:-1], axis=0) / np.diff(offs)[:, None]
        self.detail_by_poly: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * mesh.polygon_count
        if len(mesh.detail_triangles):
            order = np.argsort(mesh.detail_polygons, kind="stable")
            cuts = np.searchsorted(mesh.detail_polygons[order], np.arange(mesh.polygon_count + 1))
            self.detail_by_poly = [order[cuts[p] : cuts[p + 1]] for p in range(mesh.polygon_count)]
        size = np.maximum(self.hi[:, :2] - self.lo[:, :2], 1e-6)
        self.cell = float(max(np.median(size), 1e-3)) * 2.0
        self.origin = self.lo[:, :2].min(axis=0)
        c0 = np.floor((self.lo[:, :2] - self.origin) / self.cell).astype(np.int64)
        c1 = np.floor((self.hi[:, :2] - self.origin) / self.cell).astype(np.int64)
        self.dims = c1.max(axis=0) + 1
        cells: dict[int, list[int]] = {}
        for p in range(mesh.polygon_count):
            for cx in range(c0[p, 0], c1[p, 0] + 1):
                for cy in range(c0[p, 1], c1[p, 1] + 1):
                    cells.setdefault(int(cx * self.dims[1] + cy), []).append(p)
        self.cells = {k: np.asarray(vs, dtype=np.int64) for k, vs in cells.items()}
        self._walk: tuple[list, list, list] | None = None
        self._detail: dict[int, list[tuple]] = {}

    def walk_lists(self) -> tuple[list, list, list]:
        """Polygon offsets, neighbours and XY edge endpoints (ax, ay, bx, by) as Python lists, built once."""
        if self._walk is None:
            ex = np.concatenate([self.edge_a[:, :2], self.edge_b[:, :2]], axis=1)
            self._walk = (self.mesh.poly_offsets.tolist(), self.mesh.neighbors.tolist(), [tuple(r) for r in ex.tolist()])
        return self._walk

    def _detail_tuples(self, p: int) -> list[tuple]:
        """Polygon p's detail triangles as flat float tuples (a, b, c), built on first use."""
        hit = self._detail.get(p)
        if hit is None:
            t = self.mesh.detail_vertices[self.mesh.detail_triangles[self.detail_by_poly[p]]]
            hit = self._detail[p] = [tuple(r) for r in t.reshape(-1, 9).tolist()]
        return hit

    def polygons_near(self, xy: np.ndarray, radius: float) -> np.ndarray:
        """Polygons whose XY bbox may lie within radius of xy (grid lookup)."""
        c0 = np.floor((xy - radius - self.origin) / self.cell).astype(np.int64)
        c1 = np.floor((xy + radius - self.origin) / self.cell).astype(np.int64)
        c0 = np.maximum(c0, 0)
        c1 = np.minimum(c1, self.dims - 1)
        found = [
            self.cells[k]
            for cx in range(c0[0], c1[0] + 1)
            for cy in range(c0[1], c1[1] + 1)
            if (k := int(cx * self.dims[1] + cy)) in self.cells
        ]
        if not found:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(found))

    def inside_xy(self, p: int, xy, eps: float = 1e-9) -> bool:
        offs, _, ex = self.walk_lists()
        x, y = float(xy[0]), float(xy[1])
        for c in range(offs[p], offs[p + 1]):
            ax, ay, bx, by = ex[c]
            if (bx - ax) * (y - ay) - (by - ay) * (x - ax) < -eps:
                return False
        return True

    def height(self, p: int, xy: np.ndarray) -> float:
        """Surface height of polygon p at xy: detail triangles when present, else the polygon plane."""
        tris = self._detail_tuples(p)
        if tris:
            x, y = float(xy[0]), float(xy[1])
            best, z = math.inf, 0.0
            for ax, ay, az, bx, by, bz, cx, cy, cz in tris:
                v0x, v0y, v1x, v1y, v2x, v2y = bx - ax, by - ay, cx - ax, cy - ay, x - ax, y - ay
                den = v0x * v1y - v1x * v0y
                if abs(den) < 1e-18:
                    den = 1e-18
                u = (v2x * v1y - v1x * v2y) / den
                w = (v0x * v2y - v2x * v0y) / den
                outside = max(-u, -w, u + w - 1)
                if outside < best:
                    best, z = outside, az + u * (bz - az) + w * (cz - az)
            return z
        n = self.normal[p]
        c = self.centroid[p]
        if abs(n[2]) < 1e-9:
            return float(c[2])
        return float(c[2] - (n[0] * (xy[0] - c[0]) + n[1] * (xy[1] - c[1])) / n[2])

    def closest_point(self, p: int, point: np.ndarray) -> np.ndarray:
        """Closest point of polygon p to point: its surface point above/below when inside in XY, else on an edge."""
        xy = point[:2]
        if self.inside_xy(p, xy):
            return np.array([xy[0], xy[1], self.height(p, xy)])
        s = slice(self.mesh.poly_offsets[p], self.mesh.poly_offsets[p + 1])
        return closest_on_segments(point, self.edge_a[s], self.edge_b[s])[0]

    def locate(self, point, search_radius: float | None = None) -> tuple[int, np.ndarray]:
        """Nearest polygon and nearest mesh point to a 3D point; (-1, point) when nothing is within reach."""
        point = np.asarray(point, dtype=np.float64).reshape(3)
        if not np.all(np.isfinite(point)):
            raise NavMeshError(f"query point {point.tolist()} has NaN or infinite coordinates")
        limit = math.inf if search_radius is None else float(search_radius)
        radius = self.cell
        span = float(np.linalg.norm(self.dims * self.cell)) + float(np.linalg.norm(point[:2] - self.origin))
        while True:
            r = min(radius, limit)
            cand = self.polygons_near(point[:2], r)
            best, best_d, best_pt = -1, math.inf, point
            if len(cand):
                gap = np.maximum(np.maximum(self.lo[cand] - point, point - self.hi[cand]), 0.0)
                lower = np.linalg.norm(gap, axis=1)
                for k in np.argsort(lower):
                    if lower[k] >= best_d:
                        break
                    q = self.closest_point(int(cand[k]), point)
                    d = float(np.linalg.norm(q - point))
                    if d < best_d:
                        best, best_d, best_pt = int(cand[k]), d, q
            if best >= 0 and best_d <= r:
                return best, best_pt
            if r >= limit or radius > span:
                return (best, best_pt) if best >= 0 and best_d <= limit else (-1, point)
            radius *= 2.0


def closest_on_segments(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """Closest point to `point` over segments a->b (3D) and the index of that segment."""
    ab = b - a
    t = np.clip(np.einsum("ij,ij->i", point - a, ab) / np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-18), 0, 1)
    q = a + t[:, None] * ab
    k = int(np.argmin(np.linalg.norm(q - point, axis=1)))
    return q[k], k


def get_index(mesh: NavMesh) -> MeshIndex:
    """The mesh's index, built once and kept while the mesh lives."""
    hit = _INDEXES.get(id(mesh))
    if hit is not None and hit[0]() is mesh:
        return hit[1]
    index = MeshIndex(mesh)
    key = id(mesh)
    _INDEXES[key] = (weakref.ref(mesh, lambda _ref: _INDEXES.pop(key, None)), index)
    return index


def locate(mesh: NavMesh, point, search_radius: float | None = None) -> tuple[int, np.ndarray]:
    """Nearest polygon id and nearest point on the mesh (world frame) to `point`; -1 if none within search_radius."""
    return get_index(mesh).locate(point, search_radius)


def walk_segment(mesh: NavMesh, index: MeshIndex, p: int, s: np.ndarray, e: np.ndarray, passable=None):
    """Walk s->e (XY) through the polygon graph from polygon p.

    Returns (t, edge, visited): t = inf and edge = -1 when the walk reaches e, else the fraction where
    it leaves through a wall edge slot (or an edge into an impassable or already visited polygon).
    Plain Python floats over lists cached on the index: a walk touches few edges, so numpy's per-call
    overhead would dominate.
    """
    offs, nb, ex = index.walk_lists()
    sx, sy = float(s[0]), float(s[1])
    dx, dy = float(e[0]) - sx, float(e[1]) - sy
    visited = [p]
    seen = {p}
    t_enter = 0.0

    def ok(q: int) -> bool:
        return q >= 0 and q not in seen and (passable is None or passable(q))

    while True:
        a0, a1 = offs[p], offs[p + 1]
        ts = []
        best, k = math.inf, -1
        for c in range(a0, a1):
            ax, ay, bx, by = ex[c]
            ux, uy = bx - ax, by - ay
            den = uy * dx - ux * dy
            if den > 1e-15:
                t = (uy * (ax - sx) - ux * (ay - sy)) / den
                if t < t_enter - 1e-9:
                    t = math.inf
            else:
                t = math.inf
            ts.append(t)
            if t < best:
                best, k = t, c
        if k < 0 or best >= 1.0:
            return math.inf, -1, visited
        # Through a vertex two edges tie: leave by one that leads on.
        for c in range(a0, a1):
            if ts[c - a0] <= best + 1e-9 and ok(nb[c]):
                k = c
                break
        q = nb[k]
        if not ok(q):
            return ts[k - a0], k, visited
        visited.append(q)
        seen.add(q)
        p, t_enter = q, ts[k - a0]
