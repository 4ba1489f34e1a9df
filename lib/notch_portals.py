"""Convex cells of one region by notch portals (NEOGEN-2D, Oliva 2016 Ch. 3).

A notch is a reflex corner of the region. A portal (a cut) from a notch into its area of interest,
the cone where the cut leaves both sides of the corner convex, resolves it. Portals that resolve
two notches at once are laid first, short and fat ones first; every notch left then gets the best
single portal: to a vertex, or through a new Steiner vertex to a wall edge or an earlier portal.
Once no notch is left, every cell the portals enclose is convex. Steiner vertices never go on a
border shared with another region, where the neighbour would see a T-junction.

Cells may exceed the polygon vertex limit and some portals turn out inessential; the polygon stage
splits and merges them (lib.polygons).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from .progress import SILENT, Progress
from .triangulate import BoxBins

# A corner is a notch when its interior angle exceeds pi by more than this (radians).
_REFLEX_EPS = 1e-9
# A portal's score is its length divided by this floor at worst, so very acute corners are avoided
# but still possible when nothing else resolves the notch.
_MIN_QUALITY = 0.1
# A cell with area / perimeter² at or below this is degenerate (a zero-width sliver): give up.
_MIN_FATNESS = 1e-9
# Regions with at most this many vertices are searched whole; larger ones in windows around each
# notch, and two-notch partners only within this many windows.
_WHOLE_REGION_VERTICES = 400
_PARTNER_WINDOWS = 4
# Vertex candidates are tested for visibility this many at a time, nearest first.
_CAST_BATCH = 24
# A visibility test casts against the edges within this fraction of the search window first, and
# doubles the reach only for rays nothing has blocked yet (most are blocked near the notch).
_FIRST_CAST_WINDOW = 0.25
# Portals that resolve two notches count as this fraction of their length when ranked, portals to
# a new vertex as this multiple (a new vertex joins two cells and uses up their vertex budget).
_TWO_NOTCH_BONUS = 0.5
_STEINER_COST = 3.0


@dataclass
class Cells:
    """The convex cells of one region.

    cells: vertex id lists, counter-clockwise; ids below the caller's point count are its own.
    steiner: (K, 3) new points, numbered from the caller's point count on.
    """

    cells: list[list[int]]
    steiner: np.ndarray


def notch_cells(
    rings: list[list[int]], points, fixed: set[tuple[int, int]], snap: float, progress: Progress = SILENT
) -> Cells | None:
    """Cut a region (outer ring counter-clockwise, holes clockwise, ids into `points`, N (x, y, z)
    rows: an array or a list, only the region's own rows are read) into convex cells; None when the
    outline defeats the construction (the caller falls back).

    fixed: directed ring edges shared with another region (never split).
    snap: a Steiner vertex closer than this to an existing vertex is not made (no tiny edges).
    """
    graph = _Graph(points, rings, fixed, snap)
    if graph.broken:
        return None
    graph.lay_two_notch_portals(progress.span(0.0, 0.5))
    if not graph.lay_single_portals(progress.span(0.5, 1.0)):
        return None
    cells = graph.faces()
    if cells is None:
        return None
    steiner = np.array([graph.xyz[v] for v in range(len(points), graph.next_id)], dtype=np.float64).reshape(-1, 3)
    return Cells(cells, steiner)


@dataclass
class _Target:
    """Where a portal from a notch ends: at vertex `vertex`, or at a new point on edge `edge`."""

    score: float
    vertex: int | None
    edge: tuple[int, int] | None = None
    point: tuple[float, float] | None = None
    t: float = 0.0


class _Graph:
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
        self.eps = 1e-9 * scale
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

    # --- arrays ---------------------------------------------------------------------------------

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

    # --- geometry -----------------------------------------------------------------------------

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
        tol = 1e-12 * nd
        return (a[0] * d[:, 1] - a[1] * d[:, 0] <= tol * na) & (d[:, 0] * b[1] - d[:, 1] * b[0] <= tol * nb)

    def _cast(self, v: int, dirs: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """First of the edges `rows` each unit ray from v meets: (distance, edge row, parameter along
        the edge). Edges at v are ignored. A ray that meets nothing gets distance inf."""
        a, b, ends = self._edge_a[rows], self._edge_b[rows], self._edge_ends[rows]
        if not len(rows):
            return np.full(len(dirs), np.inf), np.zeros(len(dirs), dtype=np.int64), np.zeros(len(dirs))
        o = np.array(self.xyz[v][:2])
        e = b - a
        w0 = a - o
        den = dirs[:, 0, None] * e[None, :, 1] - dirs[:, 1, None] * e[None, :, 0]
        s_num = w0[None, :, 0] * e[None, :, 1] - w0[None, :, 1] * e[None, :, 0]
        t_num = w0[None, :, 0] * dirs[:, 1, None] - w0[None, :, 1] * dirs[:, 0, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = s_num / den
            t = t_num / den
        parallel = np.abs(den) <= 1e-12 * np.hypot(e[:, 0], e[:, 1])[None, :]
        hit = ~parallel & (s > self.eps) & (t >= -1e-12) & (t <= 1 + 1e-12)
        # A ray running along an edge meets it at its nearer end.
        along = parallel & (np.abs(t_num) <= self.eps)
        if along.any():
            sa = w0[None, :, 0] * dirs[:, 0, None] + w0[None, :, 1] * dirs[:, 1, None]
            sb = sa + e[None, :, 0] * dirs[:, 0, None] + e[None, :, 1] * dirs[:, 1, None]
            near = np.where((sa > self.eps) & ((sa <= sb) | (sb <= self.eps)), sa, sb)
            ok = along & (near > self.eps)
            s = np.where(ok, near, s)
            t = np.where(ok, np.where(near == sa, 0.0, 1.0), t)
            hit |= ok
        hit &= ~((ends[:, 0] == v) | (ends[:, 1] == v))[None, :]
        s = np.where(hit, s, np.inf)
        first = np.argmin(s, axis=1)
        picked = np.arange(len(dirs))
        return s[picked, first], rows[first], t[picked, first]

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

    # --- choosing portals ---------------------------------------------------------------------

    def _quality(self, v: int, d: tuple[float, float], corner: tuple[int, int], at_end: tuple) -> float:
        """Smallest corner angle the portal makes, as a fraction of a right angle (at most 1)."""
        u, w = corner
        angles = [_angle_between(d, self._dir(v, u)), _angle_between(d, self._dir(v, w))]
        back = (-d[0], -d[1])
        angles += [_angle_between(back, e) for e in at_end]
        return max(min(min(angles) / (0.5 * math.pi), 1.0), _MIN_QUALITY)

    def _vertex_targets(
        self, notch: tuple[int, int, int], two_notch_only: bool, radius: float
    ) -> list[tuple[float, int]]:
        """Visible vertices within `radius` in the notch's cone as (score, vertex), best first (only
        the best one unless two_notch_only, which keeps every partner: a taken best leaves the next)."""
        u, v, w = notch
        a, b = self._dir(v, u), self._dir(v, w)
        near_v = self._near_vertices(v, radius)
        ids = self._vertex_ids[near_v]
        to_pts = self._vertex_xy[near_v] - self.xyz[v][:2]
        in_cone = self._in_cone(a, b, to_pts) & (ids != v) & np.any(to_pts != 0.0, axis=1)
        if two_notch_only:
            in_cone[in_cone] &= self._cone_faces_back(near_v[in_cone], to_pts[in_cone])
        cand_ids, cand_d = ids[in_cone], to_pts[in_cone]
        length = np.hypot(cand_d[:, 0], cand_d[:, 1])
        order = np.argsort(length)
        cand_ids, cand_d, length = cand_ids[order], cand_d[order], length[order]
        found = []
        bound = math.inf
        # Nearest first, a batch at a time: a far vertex cannot beat a near portal already found.
        # Every partner is wanted, so they are all cast at once.
        batch_size = max(len(cand_ids), 1) if two_notch_only else _CAST_BATCH
        for lo in range(0, len(cand_ids), batch_size):
            if length[lo] * _TWO_NOTCH_BONUS >= bound:
                break
            batch = slice(lo, lo + batch_size)
            visible = lo + np.flatnonzero(self._visible(v, cand_d[batch] / length[batch, None], length[batch]))
            for k in visible:
                if length[k] * _TWO_NOTCH_BONUS >= bound:
                    break
                p = int(cand_ids[k])
                d = (float(cand_d[k, 0]), float(cand_d[k, 1]))
                score = self._vertex_score(notch, p, d, float(length[k]), two_notch_only)
                if score is not None:
                    found.append((score, p))
                    if not two_notch_only:
                        bound = min(bound, score)
        return sorted(found)

    def _cone_faces_back(self, rows: np.ndarray, to_pts: np.ndarray) -> np.ndarray:
        """Per vertex row: may a portal from here resolve a notch there too? A quick filter before
        the exact test: its reflex corner's cone must hold the way back (-to_pts); vertices with
        several reflex corners pass."""
        a, b, several = self._corner_a[rows], self._corner_b[rows], self._corner_several[rows]
        d = -to_pts
        na, nb, nd = np.hypot(*a.T), np.hypot(*b.T), np.hypot(*d.T)
        tol = 1e-12 * nd
        inside = (a[:, 0] * d[:, 1] - a[:, 1] * d[:, 0] <= tol * na) & (
            d[:, 0] * b[:, 1] - d[:, 1] * b[:, 0] <= tol * nb
        )
        return (inside & (na > 0) & (nb > 0)) | several

    def _vertex_score(self, notch, p: int, d: tuple[float, float], length: float, two_notch_only: bool) -> float | None:
        """Score of the portal from the notch to vertex p along d (None if it is not wanted)."""
        u, v, w = notch
        back = (-d[0], -d[1])
        corner_p = self._corner_at(p, back)
        if corner_p is None:
            return None
        up, wp, angle_p = corner_p
        a_p, b_p = self._dir(p, up), self._dir(p, wp)
        two = angle_p > math.pi + _REFLEX_EPS and bool(self._in_cone(a_p, b_p, np.array([back]))[0])
        if two_notch_only and not two:
            return None
        quality = self._quality(v, d, (u, w), (a_p, b_p))
        return length / quality * (_TWO_NOTCH_BONUS if two else 1.0)

    def _partners(self, notch: tuple[int, int, int]) -> list[tuple[float, int]]:
        """Notches this one can share a portal with, nearest first: all of them in a small region,
        else those within a few search windows (a long portal rarely beats two short ones)."""
        return self._vertex_targets(notch, True, min(_PARTNER_WINDOWS * self.window, self.extent))

    def _best_target(self, notch: tuple[int, int, int]) -> _Target | None:
        """The best portal from this notch on the current graph, or None if none can be laid.

        Searched within a window that widens until the best found beats anything outside it (any
        portal longer than the window scores at least _TWO_NOTCH_BONUS times the window)."""
        radius = self.window
        while True:
            best = self._best_target_within(notch, radius)
            if radius >= self.extent or (best is not None and best.score <= _TWO_NOTCH_BONUS * radius):
                return best
            radius = min(max(2 * radius, best.score / _TWO_NOTCH_BONUS if best else 0.0), self.extent)

    def _best_target_within(self, notch: tuple[int, int, int], radius: float) -> _Target | None:
        u, v, w = notch
        a, b = self._dir(v, u), self._dir(v, w)
        vx, vy = self.xyz[v][:2]
        best: _Target | None = None
        to_vertex = self._vertex_targets(notch, False, radius)
        if to_vertex:
            best = _Target(to_vertex[0][0], to_vertex[0][1])

        # Rays into the cone: along both edge extensions, its bisector, and perpendicular to each
        # edge whose foot lies in the cone; each ends where it first meets an edge.
        near_e = self._near_edges(v, radius)
        sa, sb = self._edge_a[near_e], self._edge_b[near_e]
        na, nb = math.hypot(*a), math.hypot(*b)
        ext = np.array([[-a[0] / na, -a[1] / na], [-b[0] / nb, -b[1] / nb]])
        bis = ext[0] + ext[1]
        rays = [ext, bis[None] / max(np.hypot(*bis), 1e-300)]
        e = sb - sa
        elen2 = np.maximum((e**2).sum(1), 1e-300)
        t = ((vx - sa[:, 0]) * e[:, 0] + (vy - sa[:, 1]) * e[:, 1]) / elen2
        foot = sa + np.clip(t, 0.0, 1.0)[:, None] * e - (vx, vy)
        flen = np.hypot(foot[:, 0], foot[:, 1])
        ok = (t > 0) & (t < 1) & (flen > self.eps) & (flen <= radius)
        ok &= self._in_cone(a, b, foot)
        if ok.any():
            rays.append(foot[ok] / flen[ok, None])
        rays = np.concatenate(rays)
        dist, edge_row, t_hit = self._cast(v, rays, near_e)
        for k in np.argsort(dist):
            if dist[k] > radius or (best is not None and dist[k] * _STEINER_COST >= best.score):
                break
            row = int(edge_row[k])
            key = (int(self._edge_ends[row, 0]), int(self._edge_ends[row, 1]))
            if self.kind[key] == "fixed":
                continue
            pa, pb = self.xyz[key[0]][:2], self.xyz[key[1]][:2]
            edge_len = math.hypot(pb[0] - pa[0], pb[1] - pa[1])
            tk = float(t_hit[k])
            if tk * edge_len < self.snap or (1.0 - tk) * edge_len < self.snap:
                continue  # next to a vertex: the vertex candidates cover it
            d = (float(rays[k, 0] * dist[k]), float(rays[k, 1] * dist[k]))
            ed = (pb[0] - pa[0], pb[1] - pa[1])
            quality = self._quality(v, d, (u, w), (ed, (-ed[0], -ed[1])))
            score = float(dist[k]) / quality * _STEINER_COST
            if best is None or score < best.score:
                best = _Target(score, None, key, (vx + d[0], vy + d[1]), tk)
        return best

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

    def lay_two_notch_portals(self, progress: Progress = SILENT) -> None:
        """Portals between two notches, each inside the other's cone, best (short, fat) first."""
        notches = self.notches()
        found = []
        for k, notch in enumerate(notches):
            progress.at(0.5 * k / len(notches))
            found += [(score, notch, p) for score, p in self._partners(notch)]
        pairs = sorted(found)
        for k, (_, notch, p) in enumerate(pairs):
            progress.at(0.5 + 0.5 * k / len(pairs))
            if not self._is_notch(notch) or not self._sees(notch[1], p):
                continue  # a portal laid since resolved or reshaped this corner, or blocks the view
            d = self._dir(notch[1], p)
            if self._vertex_score(notch, p, d, math.hypot(*d), two_notch_only=True) is not None:
                self._lay(notch[1], _Target(0.0, p))

    def lay_single_portals(self, progress: Progress = SILENT) -> bool:
        """Resolve every remaining notch with its best portal, best first; False if one cannot be.

        Queued scores go stale as portals are laid: the best queued notch is scored afresh and laid
        only if it still beats the next one in the queue. A score taken since the last portal was
        laid is still fresh, and its target is laid without searching again."""
        queue: list[tuple[float, int, tuple[int, int, int], int, _Target | None]] = [
            (0.0, k, notch, -1, None) for k, notch in enumerate(self.notches())
        ]
        counter = len(queue)
        laid = 0
        for _ in range(8 * len(self.xyz) + 16):
            progress.at(laid / max(counter, 1))
            while queue and not self._is_notch(queue[0][2]):
                heapq.heappop(queue)
            if not queue:
                return not self._reflex
            _, order, notch, scored_at, target = heapq.heappop(queue)
            if scored_at != laid:
                target = self._best_target(notch)
                if target is None:
                    return False
                if queue and target.score > queue[0][0] + 1e-12:
                    heapq.heappush(queue, (target.score, order, notch, laid, target))
                    continue
            assert target is not None  # a score taken since the last portal comes with its target
            for x in self._lay(notch[1], target):
                for corner in self._reflex.get(x, ()):
                    heapq.heappush(queue, (0.0, counter, corner, -1, None))
                    counter += 1
            laid += 1
        return False

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
    return dist < length - 1e-9 * np.maximum(length, 1.0)


def _reserve(rows: np.ndarray, count: int) -> np.ndarray:
    """The array, or a copy with room for at least `count` rows (capacity doubles: appends stay linear)."""
    if len(rows) >= count:
        return rows
    grown = np.zeros((max(count, 2 * len(rows)), *rows.shape[1:]), dtype=rows.dtype)
    grown[: len(rows)] = rows
    return grown


def _angle_between(d: tuple[float, float], e: tuple[float, float]) -> float:
    return abs(math.atan2(d[0] * e[1] - d[1] * e[0], d[0] * e[0] + d[1] * e[1]))
