"""The shortest path at the bake radius on one floor, pulled taut through the corridor.

At r = r0 the navmesh boundary is what keeps agents off walls, so the path through the search's
corridor is the string pulled taut through its portals (the funnel algorithm, as in Detour's
findStraightPath). Where it bends at a vertex with no wall inside the turn, the corridor is
rerouted around the vertex's other side (`reroute`) and the string pulled again. `PlanarCertificate`
says when the string is the shortest path of all, so `refine`'s visibility graph over corners is
not needed:
- it bends only at wall corners, each with the wall inside the turn, so it is locally shortest; on
  a flat domain a locally shortest path is the shortest of all paths that wind around the holes
  the same way;
- every shorter path lies in the ellipse of points whose distances to start and goal sum to less
  than the string's length, and a shorter path that winds differently encloses a whole hole of the
  navmesh together with the string. So when no hole lies wholly inside that ellipse, no two
  polygons of the navmesh inside it that connect to the start there overlap seen from above (the
  part of the floor a shorter path could use is flat; stacked floors elsewhere in the ellipse,
  reached only outside it, do not matter), and no off-mesh link ends there, no shorter path exists.
"""

from __future__ import annotations

import math

import numpy as np

from ..components import box_cells, connected_components, run_positions
from ..geometry import NONZERO_DIVISOR
from ..navmesh import NavMesh
from .graph import FITS_TOL

# Slack (m) on the ellipse's length: a hole or link this close outside it counts as inside.
ELLIPSE_TOL = 1e-6
# Two polygons overlap seen from above when they do by more than this (m) across.
OVERLAP_TOL = 1e-6
# A bend turning by less than this (sine of the angle) is straight, and needs no wall.
STRAIGHT_TURN = 1e-12
# Arcs of directions around a vertex overlap when they share more than this angle (radians).
ANGLE_TOL = 1e-9
# Polygon pairs tested for overlap per vectorised batch (bounds the batch's memory).
OVERLAP_BATCH = 20_000
START, GOAL = -1, -2
# Kinds of the places the ellipse test looks at.
LINK_END, OVERLAP, HOLE = 0, 1, 2
# Relative and absolute (m) slack on the slab of x the ellipse spans: rounding never leaves out a
# place the test itself would count as inside.
SLAB_MARGIN = 1e-9
TAU = 2.0 * math.pi


def pull_string(start: tuple, goal: tuple, portals: list[tuple]) -> list[tuple[float, float, int]]:
    """(x, y, vertex id) of the taut string from start (id START) through the portals to goal (id
    GOAL), in XY. portals: (left x, left y, left id, right x, right y, right id), left and right as
    seen walking along the corridor."""
    gx, gy = goal[0], goal[1]
    ports = [*portals, (gx, gy, GOAL, gx, gy, GOAL)]
    ax, ay, aid = start[0], start[1], START
    lx, ly, lid, rx, ry, rid = ax, ay, aid, ax, ay, aid
    apex_at = left_at = right_at = -1
    out = [(ax, ay, aid)]
    i = 0
    while i < len(ports):
        plx, ply, plid, prx, pry, prid = ports[i]
        # The right side narrows when the portal's right end lies left of (or on) apex -> right.
        if (rx - ax) * (pry - ay) - (ry - ay) * (prx - ax) >= 0.0:
            if (ax == rx and ay == ry) or (lx - ax) * (pry - ay) - (ly - ay) * (prx - ax) < 0.0:
                rx, ry, rid, right_at = prx, pry, prid, i
            else:  # it crosses the left side: the string bends at the left end
                ax, ay, aid, apex_at = lx, ly, lid, left_at
                _append(out, ax, ay, aid)
                rx, ry, rid, right_at = lx, ly, lid, left_at
                i = apex_at + 1
                continue
        if (lx - ax) * (ply - ay) - (ly - ay) * (plx - ax) <= 0.0:
            if (ax == lx and ay == ly) or (rx - ax) * (ply - ay) - (ry - ay) * (plx - ax) > 0.0:
                lx, ly, lid, left_at = plx, ply, plid, i
            else:
                ax, ay, aid, apex_at = rx, ry, rid, right_at
                _append(out, ax, ay, aid)
                lx, ly, lid, left_at = rx, ry, rid, right_at
                i = apex_at + 1
                continue
        i += 1
    _append(out, gx, gy, GOAL)
    return out


def _append(out: list, x: float, y: float, vid: int) -> None:
    if out[-1][0] != x or out[-1][1] != y:
        out.append((x, y, vid))


class PlanarCertificate:
    """What the certificate needs of one mesh, built once per query object: the navmesh's boundary
    pieces that may be holes, the pairs of polygons that overlap seen from above, a circle about
    each polygon, the off-mesh links' ends, and the walls at each boundary vertex."""

    def __init__(self, mesh: NavMesh):
        v = mesh.vertices[:, :2]
        boundary = np.flatnonzero(mesh.neighbors < 0)
        tail, head = mesh.poly_vertices[boundary], mesh.edge_next_vertex[boundary]
        self._xy = v
        self._outgoing: dict[int, list[int]] = {}
        self._incoming: dict[int, list[int]] = {}
        for a, b in zip(tail.tolist(), head.tolist()):
            self._outgoing.setdefault(a, []).append(b)
            self._incoming.setdefault(b, []).append(a)
        self._gaps: dict[int, list[tuple[float, float]]] = {}
        self._holes = _possible_holes(v, tail, head)
        self._layer_center, self._layer_radius, self._layer_pairs = overlaps(mesh)
        lo = np.minimum.reduceat(v[mesh.poly_vertices], mesh.poly_offsets[:-1], axis=0)
        hi = np.maximum.reduceat(v[mesh.poly_vertices], mesh.poly_offsets[:-1], axis=0)
        self._poly_circle = [
            (x, y, 0.5 * math.hypot(w, h)) for x, y, w, h in np.concatenate([0.5 * (lo + hi), hi - lo], axis=1).tolist()
        ]
        self._offs, self._neighbors = mesh.poly_offsets.tolist(), mesh.neighbors.tolist()
        self._link_ends = np.array(
            [end[:2] for link in mesh.links for end in (link.start, link.end)], dtype=np.float64
        ).reshape(-1, 2)
        # What the ellipse test looks at, in one array sorted by x, so a query measures only the
        # slab of x the ellipse spans, in one pass: the link ends, the overlaps' circles and the
        # holes' centres, each with how far (in sum of distances) its circle reaches in from its
        # centre (twice its radius; none for a point), its kind and its index among its kind.
        spots = np.concatenate([self._link_ends, self._layer_center, self._holes[0]])
        reach = np.concatenate(
            [np.zeros(len(self._link_ends)), 2.0 * self._layer_radius, np.zeros(len(self._holes[0]))]
        )
        counts = [len(self._link_ends), len(self._layer_center), len(self._holes[0])]
        kind = np.repeat(np.arange(3), counts)
        index = np.concatenate([np.arange(n) for n in counts])
        order = np.argsort(spots[:, 0], kind="stable")
        self._spot_x, self._spot_y, self._spot_reach = spots[order, 0], spots[order, 1], reach[order]
        self._spot_kind, self._spot_index = kind[order], index[order]
        self._spot_max_reach = float(reach.max()) if len(reach) else 0.0

    def loose_bend(self, string: list[tuple[float, float, int]]) -> int:
        """The first vertex where this string (from `pull_string`) bends without a wall inside the
        turn, so a path around its other side is shorter; -1 when every bend wraps a wall (the
        string is then locally shortest)."""
        for (px, py, _), (x, y, vid), (nx, ny, _) in zip(string, string[1:], string[2:]):
            ix, iy, ox, oy = x - px, y - py, nx - x, ny - y
            turn = ix * oy - iy * ox
            if abs(turn) <= STRAIGHT_TURN * math.hypot(ix, iy) * math.hypot(ox, oy):
                continue
            back, out = math.atan2(-iy, -ix), math.atan2(oy, ox)
            # The inside of the turn, counterclockwise from its first direction to its second.
            inside = (out, back) if turn > 0.0 else (back, out)
            if not any(_arcs_overlap(*inside, *gap) for gap in self._wall_gaps(vid)):
                return vid
        return -1

    def _wall_gaps(self, vid: int) -> list[tuple[float, float]]:
        """The directions around vertex vid where there is no navmesh, as counterclockwise arcs
        (from, to): each runs from a boundary edge arriving at vid to the next one leaving it
        (polygons are counterclockwise, so the navmesh lies left of its boundary edges)."""
        gaps = self._gaps.get(vid)
        if gaps is None:
            x, y = self._xy[vid].tolist()
            arrive = [math.atan2(py - y, px - x) for px, py in self._xy[self._incoming.get(vid, [])].tolist()]
            leave = [math.atan2(py - y, px - x) for px, py in self._xy[self._outgoing.get(vid, [])].tolist()]
            gaps = self._gaps[vid] = [(a, a + min((b - a) % TAU for b in leave)) for a in arrive] if leave else []
        return gaps

    def nothing_inside(self, string: list[tuple[float, float, int]], start_poly: int) -> bool:
        """No hole, link end, or pair of overlapping polygons of the floor connected to start_poly
        inside the ellipse about the string's ends whose length is the string's: a locally shortest
        string is then the shortest path."""
        s, g = string[0][:2], string[-1][:2]
        length = sum(math.dist(a[:2], b[:2]) for a, b in zip(string, string[1:])) + ELLIPSE_TOL

        def focal(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            return np.hypot(x - s[0], y - s[1]) + np.hypot(x - g[0], y - g[1])

        # A spot's distances to s and g sum to at least twice its distance to their midpoint, so one
        # the ellipse can hold lies within half of (length + its reach) of it, in x too.
        half = 0.5 * (length + self._spot_max_reach) * (1.0 + SLAB_MARGIN) + SLAB_MARGIN
        mid = 0.5 * (s[0] + g[0])
        lo, hi = np.searchsorted(self._spot_x, [mid - half, mid + half]).tolist()
        if lo >= hi:
            return True
        inside = focal(self._spot_x[lo:hi], self._spot_y[lo:hi]) - self._spot_reach[lo:hi] <= length
        kind, index = self._spot_kind[lo:hi][inside], self._spot_index[lo:hi][inside]
        if (kind == LINK_END).any():
            return False
        near = index[kind == OVERLAP]
        if len(near):
            floor = self._floor_inside(start_poly, s, g, length)
            if any(a in floor and b in floor for a, b in self._layer_pairs[near].tolist()):
                return False
        pieces = self._holes[1]
        for k in index[kind == HOLE].tolist():
            if focal(pieces[k][:, 0], pieces[k][:, 1]).max() <= length:
                return False
        return True

    def _floor_inside(self, start_poly: int, s: tuple, g: tuple, length: float) -> set[int]:
        """The polygons that may meet the ellipse (points whose distances to s and g sum to at most
        length) and connect to start_poly through such polygons: every polygon a path shorter than
        length from s to g can cross. A polygon's circle is tested, so this may hold a few more."""
        offs, nb, circle = self._offs, self._neighbors, self._poly_circle
        floor, todo = {start_poly}, [start_poly]
        while todo:
            p = todo.pop()
            for q in nb[offs[p] : offs[p + 1]]:
                if q < 0 or q in floor:
                    continue
                x, y, radius = circle[q]
                if math.hypot(x - s[0], y - s[1]) + math.hypot(x - g[0], y - g[1]) - 2.0 * radius <= length:
                    floor.add(q)
                    todo.append(q)
        return floor


def reroute(graph, portals: list[int], v: int, r: float) -> list[int] | None:
    """The portal edges of the corridor with its run around vertex v (the portals that end at v)
    taken around v's other side, or None where that side is not open to an agent of radius r or
    the new run meets the corridor elsewhere."""
    pv, nxt, nb, owner = graph.poly_vertices_l, graph.nxt_l, graph.nb_l, graph.owner_l
    run = [i for i, e in enumerate(portals) if v in (pv[e], nxt[e])]
    if not run or run[-1] - run[0] != len(run) - 1:
        return None
    a, b = run[0], run[-1]
    here, last = owner[portals[a]], nb[portals[b]]
    # Crossing an edge that arrives at v turns counterclockwise about v; the other way round the
    # corridor crosses the edges that leave v.
    leave = nxt[portals[a]] == v
    kept = {owner[e] for e in portals[:a]} | {nb[e] for e in portals[b + 1 :]}
    around: list[int] = []
    while here != last:
        lo, hi = graph.offs_l[here], graph.offs_l[here + 1]
        e = next((j for j in range(lo, hi) if (pv[j] if leave else nxt[j]) == v), -1)
        if e < 0 or nb[e] < 0 or graph.edge_clear_l[e] < r - FITS_TOL or len(around) > len(graph.vertex_polys[v]):
            return None
        around.append(e)
        here = nb[e]
        if here in kept:
            return None
    rerouted = portals[:a] + around + portals[b + 1 :]
    entry = -1 if a == 0 else graph.twin_l[rerouted[a - 1]]
    for k in range(a, min(a + len(around) + 1, len(rerouted))):
        p = owner[rerouted[k]]
        if entry >= 0 and not graph.cross_ok(p, entry - graph.offs_l[p], rerouted[k] - graph.offs_l[p], r):
            return None
        entry = graph.twin_l[rerouted[k]]
    return rerouted


def _arcs_overlap(a0: float, a1: float, b0: float, b1: float) -> bool:
    """Do the counterclockwise arcs a0 -> a1 and b0 -> b1 share more than ANGLE_TOL?"""
    la, lb = (a1 - a0) % TAU, (b1 - b0) % TAU
    return (la > ANGLE_TOL and (a0 - b0) % TAU < lb - ANGLE_TOL) or (
        lb > ANGLE_TOL and (b0 - a0) % TAU < la - ANGLE_TOL
    )


def _possible_holes(xy: np.ndarray, tail: np.ndarray, head: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """(centroid of each, XY points of each) for the pieces of the boundary (edges joined at shared
    vertices) that may bound a hole: all but simple counterclockwise loops, which bound a piece of
    navmesh from outside and so enclose no hole."""
    if len(tail) == 0:
        return np.zeros((0, 2)), []
    label = connected_components(len(xy), tail, head)[tail]
    order = np.argsort(label, kind="stable")
    cuts = np.flatnonzero(np.diff(label[order])) + 1
    centers, pieces = [], []
    for edges in np.split(order, cuts):
        a, b = tail[edges], head[edges]
        simple = len(np.unique(a)) == len(a) == len(np.unique(b))
        area = float(np.sum(xy[a, 0] * xy[b, 1] - xy[b, 0] * xy[a, 1]))
        if simple and area > 0.0:
            continue
        points = xy[np.unique(a)]
        centers.append(points.mean(axis=0))
        pieces.append(points)
    return np.array(centers, dtype=np.float64).reshape(-1, 2), pieces


def overlaps(mesh: NavMesh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, radius, the two polygons (P, 2)) of a circle about each place where two polygons
    overlap seen from above (floors stacked): about the common part of their boxes. Pairs whose
    boxes meet are tested by separating axes, in batches."""
    n = mesh.polygon_count
    offs = mesh.poly_offsets
    sizes = np.diff(offs)
    width = int(sizes.max()) if n else 0
    # Corners padded to a common count by repeating the last one (projections are unchanged).
    slot = np.minimum(np.arange(width)[None, :], sizes[:, None] - 1) + offs[:-1, None]
    corners = mesh.vertices[mesh.poly_vertices[slot], :2]  # (n, width, 2)
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    edge = np.roll(corners, -1, axis=1) - corners
    normal = np.stack([-edge[..., 1], edge[..., 0]], axis=2)
    length = np.linalg.norm(normal, axis=2)
    normal /= np.maximum(length, NONZERO_DIVISOR)[..., None]
    real = length > 0.0  # a repeated corner's edge has no normal to separate along
    first, second = _box_pairs(lo, hi)
    centers, radii, pairs = [np.zeros((0, 2))], [np.zeros(0)], [np.zeros((0, 2), dtype=np.int64)]
    for k in range(0, len(first), OVERLAP_BATCH):
        i, j = first[k : k + OVERLAP_BATCH], second[k : k + OVERLAP_BATCH]
        axes = np.concatenate([normal[i], normal[j]], axis=1)  # (P, 2w, 2)
        pi = np.einsum("pad,pvd->pav", axes, corners[i])
        pj = np.einsum("pad,pvd->pav", axes, corners[j])
        apart = (pi.max(axis=2) <= pj.min(axis=2) + OVERLAP_TOL) | (pj.max(axis=2) <= pi.min(axis=2) + OVERLAP_TOL)
        apart &= np.concatenate([real[i], real[j]], axis=1)
        both = ~apart.any(axis=1)
        low, high = np.maximum(lo[i[both]], lo[j[both]]), np.minimum(hi[i[both]], hi[j[both]])
        centers.append(0.5 * (low + high))
        radii.append(0.5 * np.hypot(*(high - low).T))
        pairs.append(np.stack([i[both], j[both]], axis=1))
    return np.concatenate(centers), np.concatenate(radii), np.concatenate(pairs)


def _box_pairs(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i < j) of XY boxes that overlap by more than OVERLAP_TOL, found through a
    uniform grid of cells the size of a typical box (pairs sharing a cell)."""
    if len(lo) < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    size = max(float(np.median(np.max(hi - lo, axis=1))), OVERLAP_TOL)
    c0 = np.floor((lo - lo.min(axis=0)) / size).astype(np.int64)
    c1 = np.floor((hi - lo.min(axis=0)) / size).astype(np.int64)
    box, cx, cy = box_cells(c0, c1)
    cell = cx * (int(c1[:, 1].max()) + 1) + cy
    order = np.lexsort((box, cell))
    cell, box = cell[order], box[order]
    # Each entry pairs with the later entries of its cell.
    end = np.searchsorted(cell, cell, side="right")
    later = end - np.arange(len(cell)) - 1
    first = np.repeat(np.arange(len(cell)), later)
    second = run_positions(later) + first + 1
    i, j = box[first], box[second]
    pair = np.unique(i * len(lo) + j)
    i, j = pair // len(lo), pair % len(lo)
    meet = (np.minimum(hi[i, 1], hi[j, 1]) - np.maximum(lo[i, 1], lo[j, 1]) > OVERLAP_TOL) & (
        np.minimum(hi[i, 0], hi[j, 0]) - np.maximum(lo[i, 0], lo[j, 0]) > OVERLAP_TOL
    )
    return i[meet], j[meet]
