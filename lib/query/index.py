"""Spatial index over polygon bounding boxes (uniform XY grid) and point location on the mesh."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..components import box_cells, partners
from ..errors import NavMeshError
from ..geometry import NONZERO_DIVISOR, UPRIGHT_NZ, point_segment_xy
from ..navmesh import NavMesh

# Query points and radii are within this (m) of the origin: far beyond any level, and near enough
# that squared distances stay finite.
QUERY_LIMIT = 1e9
# Slack (m) on the search extent of `locate`, so a point exactly at its edge counts as inside.
LOCATE_TOL = 1e-9
# Relative rounding of a distance computed two ways (across only, or in 3D): a polygon farther
# across than the best so far by more than this cannot be nearer in 3D.
NORM_ROUNDING = 1e-12
# A point counts as inside a polygon, seen from above, while its cross product with each edge (m²,
# the edge's length times the point's distance outside it) is above -INSIDE_TOL: rounding.
INSIDE_TOL = 1e-9
# A point whose cross product with an edge of its polygon (as INSIDE_TOL) is below this lies on
# that edge, and every polygon holding it is a place a segment from it may leave through.
ON_EDGE_TOL = 1e-6
# Polygons holding one point on their shared edge or corner have their surface there this close (m).
HOLD_HEIGHT_TOL = 1e-6
# The index grids' cells are at least this wide (m), so a mesh of tiny polygons gets a finite grid.
MIN_GRID_CELL = 1e-3
# A detail triangle whose top-view area is below this share of its edges' squared lengths is a sliver.
SLIVER_TOL = 1e-12
# A polygon's detail triangles lie in one plane when their height coefficients agree to this share
# of the largest (rounding of one plane computed from different corners).
ONE_PLANE_TOL = 1e-12
# A point this little outside (in barycentric terms) a detail triangle on the polygon's outline is on
# it: a path's sample where it enters a polygon, off the edge by rounding.
ON_OUTLINE_TOL = 1e-9
# A polygon whose detail surface stays this close (m, vertically) to its plane counts as planar: a
# path's height across it is taken as linear (refine.CHORD_TOL leaves room for twice this).
PLANAR_TOL = 0.001
# The query's height tolerances (PLANAR_TOL here, refine's DRAPE_TOL) are those of a mesh baked
# with max_height_error at least this (m); a finer mesh scales them down with its error, so a
# miniature level keeps its hills (at 1:100, a fixed 2 cm drew a path straight through a ridge).
HEIGHT_TOLS_AT = 0.2
# Cells (each way from its centre) of the start grid a detail triangle is entered in.
START_SPAN = 2
# u0 of a detail triangle with no area seen from above: no point is ever inside it.
FLAT_ROW = -1e30
# A detail edge's end this close (m) to a line lies on it: a height profile along a polygon's
# outline takes the ends of the edges it runs along.
ON_LINE_TOL = 1e-9
# Where a line enters such a sliver, the triangle beyond it is the one holding the line's point this
# far on (a fraction of the line's length).
SLIVER_STEP = 1e-9


@dataclass(frozen=True)
class Location:
    """Where a query point lands: its polygon (-1 if none is within the search extent), the surface
    point there (the input point when none), and how far that is from the input point (m)."""

    polygon: int
    point: np.ndarray
    distance: float


def query_point(point, name: str = "query point") -> tuple[float, float, float]:
    """A query point as a float tuple; a NavMeshError naming it for anything but three finite numbers
    within QUERY_LIMIT of the origin."""
    if type(point) is tuple and len(point) == 3 and all(type(c) is float for c in point):
        xyz = point  # already a float tuple (a query passing its own ends on)
    else:
        try:
            arr = np.asarray(point, dtype=np.float64).reshape(3)
        except (TypeError, ValueError):
            raise NavMeshError(f"{name} must be three numbers (x, y, z), got {point!r}") from None
        xyz = (float(arr[0]), float(arr[1]), float(arr[2]))
    if not all(map(math.isfinite, xyz)):
        raise NavMeshError(f"{name} {list(xyz)} has NaN or infinite coordinates")
    if max(map(abs, xyz)) > QUERY_LIMIT:
        raise NavMeshError(f"{name} {list(xyz)} lies more than {QUERY_LIMIT:g} m from the origin, on no level")
    return xyz


class MeshIndex:
    """Per-mesh query data: polygon bboxes in a uniform XY grid, planes, detail triangles per polygon."""

    def __init__(self, mesh: NavMesh):
        if not isinstance(mesh, NavMesh):
            raise NavMeshError(f"a navmesh query needs a NavMesh, got {type(mesh).__name__}")
        if mesh.is_empty:
            raise NavMeshError(f"cannot query an empty navmesh ({mesh.empty_reason or 'no polygons'})")
        self.mesh = mesh
        # How much finer than HEIGHT_TOLS_AT the mesh's heights are: the query's height tolerances' factor.
        self.height_scale = min(1.0, float(mesh.params.max_height_error) / HEIGHT_TOLS_AT)
        v = mesh.vertices
        offs = mesh.poly_offsets
        pv = v[mesh.poly_vertices]
        self.lo = np.minimum.reduceat(pv, offs[:-1], axis=0)
        self.hi = np.maximum.reduceat(pv, offs[:-1], axis=0)
        if len(mesh.detail_triangles):
            # The detail surface may rise above or dip below a polygon's corners (rolling ground).
            tri = mesh.detail_vertices[mesh.detail_triangles]
            np.minimum.at(self.lo, mesh.detail_polygons, tri.min(axis=1))
            np.maximum.at(self.hi, mesh.detail_polygons, tri.max(axis=1))
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
        self.normal = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), NONZERO_DIVISOR)
        self.centroid = np.add.reduceat(pv, offs[:-1], axis=0) / np.diff(offs)[:, None]
        # Polygons whose surface is one plane to within PLANAR_TOL: heights along a line across them
        # are linear, so a path needs no points inside them to follow the floor.
        off_plane = np.zeros(mesh.polygon_count)
        if len(mesh.detail_triangles):
            owner = np.repeat(mesh.detail_polygons, 3)
            corners = mesh.detail_vertices[mesh.detail_triangles.ravel()]
            nz = np.maximum(np.abs(self.normal[owner, 2]), UPRIGHT_NZ)
            gap = np.abs(np.einsum("ij,ij->i", corners - self.centroid[owner], self.normal[owner])) / nz
            np.maximum.at(off_plane, owner, gap)
        self.planar_l = (off_plane <= PLANAR_TOL * self.height_scale).tolist()
        self.detail_by_poly: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * mesh.polygon_count
        if len(mesh.detail_triangles):
            order = np.argsort(mesh.detail_polygons, kind="stable")
            cuts = np.searchsorted(mesh.detail_polygons[order], np.arange(mesh.polygon_count + 1))
            self.detail_by_poly = [order[cuts[p] : cuts[p + 1]] for p in range(mesh.polygon_count)]
        self.cell = float(max(np.median(self.hi[:, :2] - self.lo[:, :2]), MIN_GRID_CELL))
        self.origin = self.lo[:, :2].min(axis=0)
        c0 = np.floor((self.lo[:, :2] - self.origin) / self.cell).astype(np.int64)
        c1 = np.floor((self.hi[:, :2] - self.origin) / self.cell).astype(np.int64)
        self.dims = c1.max(axis=0) + 1
        self.extent = float(np.linalg.norm(self.dims * self.cell))
        cells: dict[int, list[int]] = {}
        for p, (x0, y0, x1, y1) in enumerate(np.concatenate([c0, c1], axis=1).tolist()):
            for cx in range(x0, x1 + 1):
                for cy in range(y0, y1 + 1):
                    cells.setdefault(cx * int(self.dims[1]) + cy, []).append(p)
        self.cells = cells
        # Plain Python copies for per-query work: a query touches few polygons, and numpy's per-call
        # overhead would cost more than the arithmetic there.
        self.box_l = np.concatenate([self.lo, self.hi], axis=1).tolist()
        self.seg_l = [tuple(r) for r in np.concatenate([self.edge_a, self.edge_b], axis=1).tolist()]
        self.offs_l = mesh.poly_offsets.tolist()
        self._walk: tuple[list, list, list] | None = None
        self._edge_boxes: list[tuple] | None = None
        self._edge_lengths: list[float] | None = None
        # Per polygon: detail triangle rows, the triangles across their edges, the one plane (or None).
        self._detail: list[tuple[list[tuple], list[tuple], tuple | None]] = []
        self._detail_start: list[int] = []
        self._detail_edges: tuple[list[tuple], list[int]] | None = None

    def walk_lists(self) -> tuple[list, list, list]:
        """Polygon offsets, neighbours and XY edges as start and direction (ax, ay, ux, uy), as Python
        lists built once."""
        if self._walk is None:
            ex = np.concatenate([self.edge_a[:, :2], self.edge_b[:, :2] - self.edge_a[:, :2]], axis=1)
            self._walk = (
                self.mesh.poly_offsets.tolist(),
                self.mesh.neighbors.tolist(),
                [tuple(r) for r in ex.tolist()],
            )
        return self._walk

    def edge_lengths(self) -> list[float]:
        """Each edge's length seen from above, as a Python list built once (the walks' tolerances
        scale with it)."""
        if self._edge_lengths is None:
            self._edge_lengths = np.hypot(*(self.edge_b[:, :2] - self.edge_a[:, :2]).T).tolist()
        return self._edge_lengths

    def edge_boxes(self) -> list[tuple]:
        """Each edge's XY bounding box (x0, y0, x1, y1), as a Python list built once."""
        if self._edge_boxes is None:
            a, b = self.edge_a[:, :2], self.edge_b[:, :2]
            self._edge_boxes = [tuple(r) for r in np.concatenate([np.minimum(a, b), np.maximum(a, b)], axis=1).tolist()]
        return self._edge_boxes

    def _build_detail_maps(self) -> None:
        """Every polygon's detail triangles as affine maps of (x, y), in one vectorised pass: rows
        (u0, ux, uy, w0, wx, wy, z0, zx, zy) giving a triangle's barycentric coordinates u, w (of
        its second and third corners) and its height; the triangles across each triangle's edges
        (for walking to the one holding a point); and the polygon's plane where all its
        triangles lie in one."""
        mesh = self.mesh
        t = mesh.detail_vertices[mesh.detail_triangles].reshape(-1, 3, 3)
        a, e1, e2 = t[:, 0], t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]
        den = e1[:, 0] * e2[:, 1] - e2[:, 0] * e1[:, 1]
        # A triangle with no area seen from above holds no point: it never wins, and were it the only
        # one its height would be its mean, not an extrapolation.
        flat = np.abs(den) <= SLIVER_TOL * (
            np.einsum("ij,ij->i", e1[:, :2], e1[:, :2]) + np.einsum("ij,ij->i", e2[:, :2], e2[:, :2])
        )
        den = np.where(flat, 1.0, den)
        # u = ((x - ax) e2y - e2x (y - ay)) / den,  w = (e1x (y - ay) - (x - ax) e1y) / den
        ux, uy = np.where(flat, 0.0, e2[:, 1] / den), np.where(flat, 0.0, -e2[:, 0] / den)
        wx, wy = np.where(flat, 0.0, -e1[:, 1] / den), np.where(flat, 0.0, e1[:, 0] / den)
        u0 = np.where(flat, FLAT_ROW, -(ux * a[:, 0] + uy * a[:, 1]))
        w0 = np.where(flat, 0.0, -(wx * a[:, 0] + wy * a[:, 1]))
        zx = ux * e1[:, 2] + wx * e2[:, 2]
        zy = uy * e1[:, 2] + wy * e2[:, 2]
        z0 = np.where(flat, t[:, :, 2].mean(axis=1), a[:, 2] + u0 * e1[:, 2] + w0 * e2[:, 2])
        rows = [tuple(r) for r in np.stack([u0, ux, uy, w0, wx, wy, z0, zx, zy], axis=1).tolist()]
        across = _triangles_across(mesh.detail_triangles, mesh.detail_polygons)
        planes = np.stack([z0, zx, zy], axis=1)
        # Each triangle's position in its polygon's list, and its neighbours' positions.
        local = np.zeros(len(across), dtype=np.int64)
        for tri in self.detail_by_poly:
            local[tri] = np.arange(len(tri))
        across = np.where(across >= 0, local[np.maximum(across, 0)], -1)
        # The walks start at the triangle whose centre is nearest the polygon's.
        owner = mesh.detail_polygons
        gap = np.hypot(*(t[:, :, :2].mean(axis=1) - self.centroid[owner, :2]).T)
        nearest = np.lexsort((gap, owner))
        heads = np.ones(len(nearest), dtype=bool)
        heads[1:] = owner[nearest][1:] != owner[nearest][:-1]
        start = np.zeros(mesh.polygon_count, dtype=np.int64)
        start[owner[nearest[heads]]] = local[nearest[heads]]
        self._detail_start = start.tolist()
        self._build_start_grid(t[~flat, :, :2], owner[~flat], local[~flat])
        self._detail = []
        for tri in self.detail_by_poly:
            nbr = across[tri]
            solid = planes[tri][~flat[tri]]
            one = len(solid) and np.ptp(solid, axis=0).max() <= ONE_PLANE_TOL * (1.0 + np.abs(solid).max())
            self._detail.append(
                (
                    [rows[k] for k in tri.tolist()],
                    [tuple(n) for n in nbr.tolist()],
                    tuple(solid[0].tolist()) if one else None,
                )
            )

    def _build_start_grid(self, corners: np.ndarray, owner: np.ndarray, local: np.ndarray) -> None:
        """A uniform XY grid, cells about a detail triangle's size: per (cell, polygon), a triangle of
        the polygon that overlaps the cell, where walks to the triangle holding a point start (a step
        or two instead of crossing the polygon from its middle). Triangles far larger than a cell
        are entered only in the cells within START_SPAN of their centre."""
        lo, hi = corners.min(axis=1), corners.max(axis=1)
        self._start_cell = float(max(np.median((hi - lo).max(axis=1)) if len(lo) else 1.0, MIN_GRID_CELL))
        self._start_origin = (float(self.origin[0]), float(self.origin[1]))
        c0 = np.floor((lo - self.origin) / self._start_cell).astype(np.int64)
        c1 = np.floor((hi - self.origin) / self._start_cell).astype(np.int64)
        mid = (c0 + c1) // 2
        c0, c1 = np.maximum(c0, mid - START_SPAN), np.minimum(c1, mid + START_SPAN)
        self._start_rows = int(c1[:, 1].max()) + 1 if len(c1) else 1
        self._start_polygons = self.mesh.polygon_count
        tri, cx, cy = box_cells(c0, c1)
        keys = (cx * self._start_rows + cy) * self._start_polygons + owner[tri]
        self._start_grid = dict(zip(keys.tolist(), local[tri].tolist()))

    def _start(self, p: int, x: float, y: float) -> int:
        """The detail triangle of polygon p to start a walk to (x, y) from (see _build_start_grid)."""
        cell = self._start_cell
        cx = math.floor((x - self._start_origin[0]) / cell)
        cy = math.floor((y - self._start_origin[1]) / cell)
        return self._start_grid.get((cx * self._start_rows + cy) * self._start_polygons + p, self._detail_start[p])

    def polygons_near(self, xy, radius: float) -> list[int]:
        """Polygons whose XY bbox may lie within radius of xy (grid lookup)."""
        ox, oy, cell = float(self.origin[0]), float(self.origin[1]), self.cell
        nx, ny = int(self.dims[0]), int(self.dims[1])
        x, y = float(xy[0]), float(xy[1])
        x0, y0 = max(math.floor((x - radius - ox) / cell), 0), max(math.floor((y - radius - oy) / cell), 0)
        x1, y1 = min(math.floor((x + radius - ox) / cell), nx - 1), min(math.floor((y + radius - oy) / cell), ny - 1)
        if x0 == x1 and y0 == y1:
            return self.cells.get(x0 * ny + y0, [])
        found: set[int] = set()
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                found.update(self.cells.get(cx * ny + cy, ()))
        return list(found)

    def holders(self, p: int, point: tuple) -> list[int]:
        """Polygon p, which holds point, and the polygons joined to it there that hold it too: sharing
        a corner with p, holding point seen from above within ON_EDGE_TOL, their surface there at
        p's (within HOLD_HEIGHT_TOL: both take an edge's heights from its shared points). Only a
        point on p's edge or corner (a start cleared onto the edge of the agent's band, a key spot
        on a vertex) lies in several, and a segment from it leaves through whichever it heads into.
        A polygon of another floor there, overlapping p or a step off it, is not one of them."""
        if self.inside_xy(p, point, -ON_EDGE_TOL):
            return [p]
        offs, pv = self.mesh.poly_offsets, self.mesh.poly_vertices
        corners = set(pv[offs[p] : offs[p + 1]].tolist())
        level = self.height(p, point)
        found = [p]
        for q in self.polygons_near(point, ON_EDGE_TOL):
            if (
                q != p
                and not corners.isdisjoint(pv[offs[q] : offs[q + 1]].tolist())
                and self.inside_xy(q, point, ON_EDGE_TOL)
                and abs(self.height(q, point) - level) <= HOLD_HEIGHT_TOL
            ):
                found.append(q)
        return found

    def inside_xy(self, p: int, xy, eps: float = INSIDE_TOL) -> bool:
        offs, _, ex = self.walk_lists()
        x, y = float(xy[0]), float(xy[1])
        for ax, ay, ux, uy in ex[offs[p] : offs[p + 1]]:
            if ux * (y - ay) - uy * (x - ax) < -eps:
                return False
        return True

    def surface_profile(self, p: int, ax: float, ay: float, dx: float, dy: float, t0: float, t1: float):
        """Heights of polygon p's surface along the line (ax + t dx, ay + t dy) from t0 to t1: (ts, zs)
        at t0 and wherever the line crosses into another detail triangle before t1. The surface is
        linear in between (one triangle), so these are exactly the points where it may bend.
        Walked from triangle to triangle; where that walk cannot follow the line (along the
        polygon's outline), from the polygon's detail edges (`_edge_profile`)."""
        z, k = self._surface(p, ax + t0 * dx, ay + t0 * dy, -1)
        ts, zs = [t0], [z]
        rows, across, plane = self._detail[p]
        if plane is not None or not rows:
            return ts, zs
        box = self.box_l[p]
        z_lo, z_hi = box[2], box[5]  # as _within_box, inline: once per detail triangle crossed
        # Plain comparisons instead of min/max calls, and each value computed once: this loop runs
        # once per detail triangle a path crosses, the most of any query's loops on rolling ground.
        t = last = t0
        for _ in range(len(rows)):
            u0, ux, uy, w0, wx, wy, z0, zx, zy = rows[k]
            # Barycentric coordinates along the line: c(t) = c_at + t c_rate; the line leaves the
            # triangle where a falling one reaches 0, across the edge facing that corner.
            u_at, u_rate = u0 + ux * ax + uy * ay, ux * dx + uy * dy
            w_at, w_rate = w0 + wx * ax + wy * ay, wx * dx + wy * dy
            out, side = t1, -1
            if u_rate < 0.0:
                at = -u_at / u_rate
                if at < out:
                    out, side = at, 1
            if w_rate < 0.0:
                at = -w_at / w_rate
                if at < out:
                    out, side = at, 2
            v_rate = -u_rate - w_rate
            if v_rate < 0.0:
                at = (u_at + w_at - 1.0) / v_rate
                if at < out:
                    out, side = at, 0
            if side < 0:
                break  # the line stays in this triangle up to t1
            beyond = across[k][side]
            if beyond < 0:
                if out < t1 - ON_LINE_TOL / math.sqrt(dx * dx + dy * dy):
                    # Out of the polygon before the line is: it runs along the outline, where the
                    # triangles' barycentric rates vanish and the walk cannot follow it.
                    return self._edge_profile(p, ax, ay, dx, dy, t0, t1, z)
                break  # it leaves the polygon by rounding
            if not t > out:
                t = out
            x, y = ax + t * dx, ay + t * dy
            if t > last:
                height = z0 + zx * x + zy * y
                if z_lo > height:
                    height = z_lo
                if z_hi < height:
                    height = z_hi
                ts.append(t)
                zs.append(height)
                last = t
            k = beyond
            if rows[k][0] == FLAT_ROW:
                # A sliver seen from above: find the triangle just beyond it.
                k = self._surface(p, x + SLIVER_STEP * dx, y + SLIVER_STEP * dy, k)[1]
        else:
            return self._edge_profile(p, ax, ay, dx, dy, t0, t1, z)  # the walk went round in circles
        return ts, zs

    def _edge_profile(self, p: int, ax: float, ay: float, dx: float, dy: float, t0: float, t1: float, z0: float):
        """`surface_profile` from polygon p's detail edges instead of walking its triangles: where
        the line (length > 0) meets each edge, or an edge's end on the line (within ON_LINE_TOL),
        between t0 (height z0) and t1. Slower, as every edge is tested, but it follows a line along
        edges."""
        rows, offsets = self.detail_edges()
        length2 = dx * dx + dy * dy
        on = ON_LINE_TOL * math.sqrt(length2)
        found = []
        for x0, y0, h0, ex, ey, ez in rows[offsets[p] : offsets[p + 1]]:
            x0, y0 = x0 - ax, y0 - ay
            side0 = dx * y0 - dy * x0
            side1 = side0 + dx * ey - dy * ex
            if side0 > on and side1 > on or side0 < -on and side1 < -on:
                continue  # both ends on one side of the line
            if -on <= side0 <= on:
                found.append(((dx * x0 + dy * y0) / length2, h0))
            if -on <= side1 <= on:
                found.append(((dx * (x0 + ex) + dy * (y0 + ey)) / length2, h0 + ez))
            elif not -on <= side0 <= on:
                u = side0 / (side0 - side1)
                found.append(((dx * (x0 + u * ex) + dy * (y0 + u * ey)) / length2, h0 + u * ez))
        ts, zs = [t0], [z0]
        for t, z in sorted(found):
            if ts[-1] < t < t1:
                ts.append(t)
                zs.append(z)
        return ts, zs

    def detail_edges(self) -> tuple[list[tuple], list[int]]:
        """Every polygon's detail triangle edges once, built on first use: rows (x0, y0, z0, x1 - x0,
        y1 - y0, z1 - z0) grouped by polygon, and each polygon's first row (P + 1 offsets)."""
        if self._detail_edges is None:
            mesh = self.mesh
            tri = mesh.detail_triangles.reshape(-1, 3)
            a, b = tri.ravel(), np.roll(tri, -1, axis=1).ravel()
            owner = np.repeat(mesh.detail_polygons, 3)
            key = np.unique(np.stack([owner, np.minimum(a, b), np.maximum(a, b)], axis=1), axis=0)
            p0, p1 = mesh.detail_vertices[key[:, 1]], mesh.detail_vertices[key[:, 2]]
            offsets = np.searchsorted(key[:, 0], np.arange(mesh.polygon_count + 1)).tolist()
            self._detail_edges = ([tuple(r) for r in np.concatenate([p0, p1 - p0], axis=1).tolist()], offsets)
        return self._detail_edges

    def height(self, p: int, xy) -> float:
        """Surface height of polygon p at xy: the detail triangle holding xy (or the nearest one in
        barycentric terms) when there is a detail mesh, else the polygon plane."""
        return self._surface(p, float(xy[0]), float(xy[1]), -1)[0]

    def _surface(self, p: int, x: float, y: float, hint: int) -> tuple[float, int]:
        """(height, detail triangle) of polygon p at (x, y): walked from triangle `hint` across the
        edge the point lies beyond, as in a triangulation's visibility walk, until a triangle holds
        it (from the start grid's triangle for the point's cell when hint is -1); a point outside every
        triangle takes the one it is least outside of."""
        if not self._detail:
            self._build_detail_maps()
        rows, across, plane = self._detail[p]
        if plane is not None:
            return self._within_box(p, plane[0] + plane[1] * x + plane[2] * y), hint
        if not rows:
            n, c = self.normal[p], self.centroid[p]
            if abs(n[2]) < UPRIGHT_NZ:
                return float(c[2]), 0
            return float(c[2] - (n[0] * (x - c[0]) + n[1] * (y - c[1])) / n[2]), 0
        k = hint if hint >= 0 else self._start(p, x, y)
        came = -1
        for _ in range(len(rows)):
            u0, ux, uy, w0, wx, wy, z0, zx, zy = rows[k]
            u, w = u0 + ux * x + uy * y, w0 + wx * x + wy * y
            v = 1.0 - u - w
            if u >= 0.0 and w >= 0.0 and v >= 0.0:
                return self._within_box(p, z0 + zx * x + zy * y), k
            # Across the edge facing the corner whose coordinate is the most negative.
            step = across[k][0] if v <= u and v <= w else (across[k][1] if u <= w else across[k][2])
            if step < 0:
                if min(u, w, v) >= -ON_OUTLINE_TOL:
                    return self._within_box(p, z0 + zx * x + zy * y), k
                break
            if step == came:
                # Back to the triangle it came from: a point on their shared edge that rounding puts
                # outside both. The walk would go back and forth to the end; the scan decides now.
                break
            came, k = k, step
        best, z = math.inf, 0.0
        for k, (u0, ux, uy, w0, wx, wy, z0, zx, zy) in enumerate(rows):
            u, w = u0 + ux * x + uy * y, w0 + wx * x + wy * y
            outside = max(-u, -w, u + w - 1.0)
            if outside < best:
                best, z, hint = outside, z0 + zx * x + zy * y, k
        return self._within_box(p, z), hint

    def _within_box(self, p: int, z: float) -> float:
        """A height clamped to polygon p's surface range: a point just outside its detail triangles
        is extrapolated from the nearest, which must not run off on a sliver."""
        box = self.box_l[p]
        return min(max(z, box[2]), box[5])

    def closest_point(self, p: int, point) -> np.ndarray:
        """Closest point of polygon p's surface to point: the surface point above or below it when
        inside in XY, else the surface at the nearest point of its edges in XY, as Detour's
        closestPointOnPoly. Not the nearest in 3D to the straight line between an edge's ends: the
        detail surface leaves that line along a long edge over a ramp's foot or rolling ground, and
        the 3D nearest point would lie metres along the edge from the point's own place."""
        return np.array(self._closest(p, float(point[0]), float(point[1])))

    def _closest(self, p: int, x: float, y: float) -> tuple[float, float, float]:
        """`closest_point` as a float tuple."""
        qx, qy = self._closest_xy(p, x, y)
        return qx, qy, self._surface(p, qx, qy, -1)[0]

    def _closest_xy(self, p: int, x: float, y: float) -> tuple[float, float]:
        """The XY of `closest_point`: (x, y) itself when polygon p holds it seen from above, else the
        nearest point of p's edges."""
        if self.inside_xy(p, (x, y)):
            return x, y
        best, out = math.inf, (x, y)
        for ax, ay, _, bx, by, _ in self.seg_l[self.offs_l[p] : self.offs_l[p + 1]]:
            d, qx, qy = point_segment_xy(x, y, ax, ay, bx - ax, by - ay)
            if d < best:
                best, out = d, (qx, qy)
        return out

    def locate(self, point, extent: tuple[float, float]) -> Location:
        """The nearest polygon and surface point within `extent` = (across, up or down) of a 3D point,
        as Detour's findNearestPoly with its half-extents; polygon -1 when none is that close, with the
        distance to the nearest polygon anywhere."""
        xyz = query_point(point)
        x, y, z = xyz
        across, up = float(extent[0]), float(extent[1])
        best: tuple[int, float, tuple] = (-1, math.inf, xyz)
        bounds = []
        for p in self.polygons_near(xyz, across):
            lz, hz = self.box_l[p][2], self.box_l[p][5]
            if z < lz - up - LOCATE_TOL or z > hz + up + LOCATE_TOL:
                continue
            bounds.append((self._box_gap2(p, x, y, z), p))
        # Nearest boxes first: a box farther than the best polygon so far cannot hold a nearer point.
        bounds.sort()
        for lower2, p in bounds:
            if lower2 >= best[1] * best[1]:
                break
            qx, qy = self._closest_xy(p, x, y)
            across_gap = math.hypot(qx - x, qy - y)
            if across_gap > across + LOCATE_TOL or across_gap > best[1] * (1.0 + NORM_ROUNDING):
                continue  # beyond the extent, or farther across alone than the best: no height needed
            q = (qx, qy, self._surface(p, qx, qy, -1)[0])
            dist = math.dist(q, xyz)
            if abs(q[2] - z) <= up + LOCATE_TOL and dist < best[1]:
                best = (p, dist, q)
        if best[0] >= 0:
            return Location(best[0], np.array(best[2]), best[1])
        return Location(-1, np.array(xyz), self.nearest(xyz)[1])

    def nearest(self, point, among: np.ndarray | None = None) -> tuple[int, float, np.ndarray]:
        """(polygon, distance, closest point) over the whole mesh, however far; `among` (polygon ids)
        restricts it. With `among`, its polygons are taken in order of their boxes' distance, found
        in one vectorised pass over them (the answer may lie far from the point)."""
        xyz = query_point(point)
        if among is not None:
            gap = np.maximum(np.maximum(self.lo[among] - xyz, np.array(xyz) - self.hi[among]), 0.0)
            lower = np.einsum("ij,ij->i", gap, gap)
            found, nearest, point = -1, math.inf, xyz
            lower_l, among_l = lower.tolist(), among.tolist()
            for k in np.argsort(lower).tolist():
                if lower_l[k] >= nearest * nearest:
                    break
                q = self._closest(among_l[k], xyz[0], xyz[1])
                d = math.dist(q, xyz)
                if d < nearest:
                    found, nearest, point = among_l[k], d, q
            return found, nearest, np.array(point)
        seen: set[int] = set()
        # The polygons over or under the point's own grid cell first: for a point on the mesh one of
        # them holds it, and its distance bounds the search that follows to a tiny radius.
        best = self._nearest(self.polygons_near(xyz, 0.0), xyz, (-1, math.inf, np.array(xyz)), seen)
        radius = best[1] if best[0] >= 0 else self.cell
        span = self.extent + math.dist(xyz[:2], self.origin)
        while True:
            best = self._nearest(self.polygons_near(xyz, radius), xyz, best, seen)
            if (best[0] >= 0 and best[1] <= radius) or radius > span:
                return best
            radius = max(2.0 * radius, self.cell)

    def _box_gap2(self, p: int, x: float, y: float, z: float) -> float:
        """Squared distance from (x, y, z) to polygon p's bounding box (0 inside it)."""
        lx, ly, lz, hx, hy, hz = self.box_l[p]
        gx = lx - x if x < lx else (x - hx if x > hx else 0.0)
        gy = ly - y if y < ly else (y - hy if y > hy else 0.0)
        gz = lz - z if z < lz else (z - hz if z > hz else 0.0)
        return gx * gx + gy * gy + gz * gz

    def _nearest(self, cand: list[int], xyz: tuple, best: tuple, seen: set[int]) -> tuple:
        """(polygon, distance, closest point): `best` improved by the candidates not yet in `seen`,
        nearest bounding boxes first; the polygons measured are added to `seen`."""
        bounds = sorted((self._box_gap2(p, *xyz), p) for p in cand if p not in seen)
        for lower2, p in bounds:
            if lower2 >= best[1] * best[1]:
                break
            seen.add(p)
            q = self.closest_point(p, xyz)
            d = math.dist(q.tolist(), xyz)
            if d < best[1]:
                best = (p, d, q)
        return best


def _triangles_across(triangles: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """(T, 3): the triangle of the same polygon across the edge facing each triangle's first,
    second and third corner (-1 on the polygon's outline)."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    # Edge facing corner 0 is b-c, facing 1 is c-a, facing 2 is a-b.
    lo = np.concatenate([np.minimum(b, c), np.minimum(c, a), np.minimum(a, b)])
    hi = np.concatenate([np.maximum(b, c), np.maximum(c, a), np.maximum(a, b)])
    partner = partners(np.tile(owner, 3), lo, hi)
    across = np.where(partner >= 0, partner % len(triangles), -1)
    return across.reshape(3, -1).T.copy()
