"""Polygons cut in two where their floor's relief is too much for one detail surface.

Detour numbers a polygon's detail triangles with a byte, so a surface holds at most
detail.refine.MAX_TRIANGLES of them; a polygon large for its floor's relief (open rolling ground
baked at radius 0 can be one polygon 40 m across) then keeps floor farther than max_height_error
from its surface. Recast's tiles bound its polygons; here such a polygon is cut across its middle
into two convex halves, and the detail stage builds their surfaces again.

A cut ends at corners or inside walls. A polygon with no such cut (a near-triangle whose walls are
a few centimetres long and whose long sides are portals, on open rolling ground) may end its cut
inside a portal: the neighbour across it gets the cut's end as a corner too, on its straight edge,
so the two still meet corner to corner; only a neighbour with fewer than max_verts_per_poly corners
can take it.
"""

from __future__ import annotations

import numpy as np

from ..geometry import signed_area
from ..navmesh import PolyMesh

# Where a cut may end along a wall edge, as fractions of the edge (a portal edge is shared with a
# neighbour, so a cut ends at one of its corners).
_WALL_FRACTIONS = (0.25, 0.5, 0.75)
# A polygon is cut only where the smaller half is at least this wide on average (its area over the
# cut's length, in cells): a thinner half would be a sliver.
MIN_HALF_WIDTH = 2.0


def split_rough(mesh: PolyMesh, rough) -> tuple[PolyMesh, list[int]]:
    """(the mesh with each polygon of `rough` that has a cut replaced by its two halves, the ids of
    the polygons cut). The first half keeps the polygon's id, the second is added at the end, and
    the polygons across its edges point to the half that holds each edge. Walls a cut ends on are
    split there; no other polygon changes, and every vertex keeps its id. The mesh itself and []
    when no polygon can be cut."""
    points = [tuple(v) for v in mesh.vertices.tolist()]
    polys = [mesh.polygon(p).tolist() for p in range(mesh.polygon_count)]
    neighbours = [mesh.neighbors[mesh.poly_offsets[p] : mesh.poly_offsets[p + 1]].tolist() for p in range(len(polys))]
    regions, areas = mesh.regions.tolist(), mesh.areas.tolist()
    min_width = MIN_HALF_WIDTH * float(mesh.params.cell_size)
    max_verts = mesh.params.max_verts_per_poly
    cut_ids = []
    for p in map(int, rough):
        ring_xyz = np.array([points[v] for v in polys[p]])
        cut = _best_cut(ring_xyz, neighbours[p], max_verts, min_width)
        if cut is None:
            room = {q: max_verts - len(polys[q]) for q in neighbours[p] if q >= 0}
            cut = _best_cut(ring_xyz, neighbours[p], max_verts, min_width, room)
        if cut is None:
            continue
        cut_ids.append(p)
        ring, across = polys[p], dict(zip(zip(polys[p], polys[p][1:] + polys[p][:1]), neighbours[p]))
        ids = {}
        for point, k in zip(cut[2], cut[3]):
            ids[point] = len(points)
            points.append(point)
            a, b = ring[k], ring[(k + 1) % len(ring)]
            q = across[(a, b)]
            if q >= 0:  # inside a portal: the neighbour's edge b -> a gets the point too
                j = next(j for j, v in enumerate(polys[q]) if v == b and polys[q][(j + 1) % len(polys[q])] == a)
                polys[q].insert(j + 1, ids[point])
                neighbours[q].insert(j + 1, p)
                across[(a, ids[point])] = across[(ids[point], b)] = q
        halves = [[ring[c] if isinstance(c, int) else ids[c] for c in half] for half in cut[:2]]
        second = len(polys)
        for h, half in enumerate(halves):
            edges = list(zip(half, half[1:] + half[:1]))
            other = second if h == 0 else p
            chord = {(halves[0][-1], halves[0][0]), (halves[1][-1], halves[1][0])}
            nbs = [other if e in chord else across.get(e, -1) for e in edges]
            if h == 0:
                polys[p], neighbours[p] = half, nbs
                continue
            polys.append(half)
            neighbours.append(nbs)
            regions.append(regions[p])
            areas.append(areas[p])
            for (a, b), q in zip(edges, nbs):
                if 0 <= q != p:
                    j = next(j for j, v in enumerate(polys[q]) if v == b and polys[q][(j + 1) % len(polys[q])] == a)
                    neighbours[q][j] = second
    if not cut_ids:
        return mesh, []
    sizes = [len(poly) for poly in polys]
    halved = PolyMesh(
        vertices=np.array(points, dtype=np.float64),
        poly_offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        poly_vertices=np.array([v for poly in polys for v in poly], dtype=np.int64),
        neighbors=np.array([q for nbs in neighbours for q in nbs], dtype=np.int64),
        regions=np.array(regions, dtype=np.int64),
        areas=np.array(areas, dtype=np.int64),
        params=mesh.params,
    )
    return halved, cut_ids


def _best_cut(
    ring: np.ndarray, neighbours: list[int], max_verts: int, min_width: float, room: dict[int, int] | None = None
):
    """(first half, second half, new points, the edge of each new point) of the convex polygon ring
    (n, 3) cut by the chord whose smaller half is widest on average (area over the chord's length),
    each half at most max_verts corners; None when no half would be min_width wide. A half lists,
    counter-clockwise, ring indices and, for a cut's end inside an edge, that point (a tuple, among
    the new points). A cut ends inside walls only, or also inside portals to the polygons of `room`
    (polygon: how many corners it can take), each end one of those corners."""
    n = len(ring)
    room = room or {}
    inside = [k for k in range(n) if neighbours[k] < 0 or room.get(neighbours[k], 0) > 0]
    ends = sorted([(k, 0.0) for k in range(n)] + [(k, f) for k in inside for f in _WALL_FRACTIONS])
    best, best_width = None, min_width
    for i, (k1, f1) in enumerate(ends):
        for k2, f2 in ends[i + 1 :]:
            q1, q2 = neighbours[k1] if f1 else -1, neighbours[k2] if f2 else -1
            if q1 >= 0 and q1 == q2 and room[q1] < 2:
                continue
            a, b = _at(ring, k1, f1), _at(ring, k2, f2)
            # Corners strictly between the ends, each way round; ends on one edge leave a half of two.
            first = [a, *range(k1 + 1, k2 + (1 if f2 else 0)), b]
            second = [b, *(j % n for j in range(k2 + 1, k1 + n + (1 if f1 else 0))), a]
            if not (3 <= len(first) <= max_verts and 3 <= len(second) <= max_verts):
                continue
            length = float(np.hypot(*(_xy(ring, a) - _xy(ring, b))))
            smaller = min(signed_area(np.array([_xy(ring, c) for c in half])) for half in (first, second))
            if smaller > best_width * length:
                new = [(c, k) for c, k in ((a, k1), (b, k2)) if isinstance(c, tuple)]
                best, best_width = (first, second, [c for c, _ in new], [k for _, k in new]), smaller / length
    return best


def _at(ring: np.ndarray, k: int, f: float):
    """Corner k (its index) when f is 0, else the point f of the way along edge k (a tuple)."""
    if f == 0.0:
        return k
    return tuple((ring[k] + f * (ring[(k + 1) % len(ring)] - ring[k])).tolist())


def _xy(ring: np.ndarray, c) -> np.ndarray:
    return ring[c, :2] if isinstance(c, int) else np.array(c[:2])
