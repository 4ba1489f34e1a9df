"""Polygon stage: region outlines with holes -> few convex polygons (Recast: rcBuildPolyMesh).

Each region is cut into convex cells by notch portals (lib.notch_portals, NEOGEN-2D). Cells over
max_verts_per_poly are cut into pieces, the pieces merged Hertel-Mehlhorn style across inessential
portals (longest first), and a local search then replaces any three adjacent polygons that one
chord can cut into two. Triangulating (holes bridged into the outer ring, ear clipping) and merging
is the fallback for outlines the portals cannot handle. Vertices are welded across regions by exact
coordinates, so shared borders (bitwise-identical in both outlines, never given new vertices) join
without T-junctions. Slivers (narrower than SLIVER_WIDTH cells, or needle-shaped) are avoided
throughout: wall corners thinner than that are cut off the outline first, decompositions compare
by their slivers, and a sliver left is regrouped with its neighbours or, if that thin, cut off.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Set as AbstractSet
from typing import cast

import numpy as np

from .contours import RegionOutline
from .geometry import cross_many, distances_to_segment, is_straight, min_width, narrower_than, signed_area, turn
from .navmesh import PolyMesh
from .notch_portals import notch_cells
from .params import BakeParams
from .progress import SILENT, Progress
from .triangulate import (
    NEEDLE_FATNESS,
    SLIVER_WIDTH,
    bridge_holes,
    delaunay_flips,
    ear_clip,
    simple_hole,
)

log = logging.getLogger(__name__)

# No Steiner vertex closer than this many cell sizes to an existing vertex (no tiny edges).
_STEINER_SNAP = 0.25
# Outline points this close (m) are welded into one vertex.
_WELD = 1e-9
# A vertex closer than this (m, in 3D) to another polygon's edge, and more than _INSIDE_EDGE of
# the edge's length from its ends, lies inside that edge (a T-junction to weld).
_ON_EDGE = 1e-7
_INSIDE_EDGE = 1e-6


def build_polygons(outlines: list[RegionOutline], params: BakeParams, progress: Progress = SILENT) -> PolyMesh:
    """Decompose every region outline into convex polygons and weld them into one PolyMesh (empty
    when no outline can hold a polygon)."""
    maxv = int(params.max_verts_per_poly)
    vertex_index: dict[tuple, int] = {}
    points: list[tuple] = []
    rings_idx: list[list[list[int]]] = []
    for outline in outlines:
        region_rings = []
        # Within a region, one vertex per top-view point: two of its layers can meet at one point
        # at two heights (the detail stage puts each vertex on its floor).
        in_region: dict[tuple, int] = {}
        for ring in outline.rings:
            ring = np.asarray(ring, dtype=np.float64).reshape(-1, 3)
            idx = []
            # Points within _WELD of each other are one vertex: rings of a region that pinches to
            # zero width meet there, and float noise must not leave two vertices a hair apart.
            for p, key in zip(map(tuple, ring.tolist()), map(tuple, np.round(ring / _WELD).tolist())):
                if key not in vertex_index:
                    vertex_index[key] = in_region.get(key[:2], len(points))
                    if vertex_index[key] == len(points):
                        points.append(p)
                in_region.setdefault(key[:2], vertex_index[key])
                idx.append(vertex_index[key])
            region_rings.append(idx)
        rings_idx.append(region_rings)
    xy = np.array([p[:2] for p in points], dtype=np.float64).reshape(-1, 2)
    uses = np.zeros(len(points), dtype=np.int64)
    for region_rings in rings_idx:
        for idx in region_rings:
            np.add.at(uses, idx, 1)

    polys: list[list[int]] = []
    regions: list[int] = []
    areas: list[int] = []
    snap = _STEINER_SNAP * params.cell_size
    thin = SLIVER_WIDTH * params.cell_size
    # Each region's share of the stage grows with its ring points (the work is about linear in them).
    weight = np.cumsum([0] + [sum(len(r) for r in rings) for rings in rings_idx], dtype=np.float64)
    weight /= max(weight[-1], 1.0)
    for k, (outline, region_rings) in enumerate(zip(outlines, rings_idx)):
        part = progress.span(weight[k], weight[k + 1])
        part.at(0.0)
        shared = {
            (idx[k], idx[(k + 1) % len(idx)])
            for idx, nb in zip(region_rings, outline.ring_neighbors)
            for k in np.flatnonzero(np.asarray(nb).reshape(-1) >= 0)
        }
        rings = [
            _drop_free_collinear(idx, np.asarray(nb).reshape(-1), xy, uses, params.max_edge_len)
            for idx, nb in zip(region_rings, outline.ring_neighbors)
        ]
        rings = rings[:1] + [simple_hole(h, xy, outline.region) for h in rings[1:] if len(h) >= 3]
        rings = [r for r in (_clean_ring(r, xy) for r in rings) if r is not None]
        rings = _trim_thin_corners(rings, xy, uses, shared, thin)
        if not rings or signed_area(xy[rings[0]]) <= 0:
            log.warning("region %d dropped: its outer ring has no area or is not counter-clockwise", outline.region)
            continue
        # Notch portals; triangulation and merging where the portals cannot be laid or leave slivers.
        found = _decompose_by_portals(rings, points, xy, shared, maxv, snap, thin, part.span(0.0, 0.5))
        found_key = None if found is None else _quality_key(found[0], _extended(xy, found[1]), thin)
        if found_key is None or found_key[0]:
            fallback = _decompose(rings, xy, maxv, thin, part.span(0.5, 1.0))
            if found_key is None or (fallback is not None and _quality_key(fallback[0], xy, thin) < found_key):
                found = fallback
        if found is None:
            log.warning("region %d dropped: its outline could not be decomposed (self-intersecting?)", outline.region)
            continue
        region_polys, steiner = found
        if len(steiner):
            points.extend(map(tuple, steiner.tolist()))
            xy = _extended(xy, steiner)
        region_polys = _widen_slivers(region_polys, xy, maxv, thin)
        polys.extend(region_polys)
        regions.extend([outline.region] * len(region_polys))
        areas.extend([outline.area] * len(region_polys))

    vertices = np.array(points, dtype=np.float64).reshape(-1, 3)
    polys = _drop_straight_vertices(polys, xy, params.max_edge_len)
    polys, source = _weld_t_junctions(polys, vertices, maxv, thin)
    regions, areas = [regions[p] for p in source], [areas[p] for p in source]
    return PolyMesh.from_polygons(polys, regions, areas, vertices, params)


def _widen_slivers(polys: list[list[int]], xy: np.ndarray, maxv: int, thin: float) -> list[list[int]]:
    """One region's polygons with slivers (_is_sliver) repaired where that is possible.

    A sliver is merged with a neighbour (across its longest edges first: a sliver lies along its
    longest edge), or with all of them, and the group is decomposed again over the same outline,
    so no other polygon sees a change; kept if that leaves no sliver. One that no regrouping
    repairs, that is narrower than `thin` and lies on the floor's edge (a spike of the outline, or
    the floor between two walls all but touching) is cut off: its neighbours see a wall there."""
    current: list[list[int] | None] = list(polys)
    owner = {(poly[k - 1], poly[k]): p for p, poly in enumerate(polys) for k in range(len(poly))}
    for s in [p for p, poly in enumerate(polys) if _is_sliver(xy[poly], thin)]:
        poly = current[s]
        if poly is None or not _is_sliver(xy[poly], thin):
            continue  # a repair of an earlier sliver took this one in
        edges = sorted(
            ((poly[k - 1], poly[k]) for k in range(len(poly))), key=lambda e: -float(np.hypot(*(xy[e[1]] - xy[e[0]])))
        )
        groups = [[n] for n in (owner.get((b, a)) for a, b in edges) if n is not None]
        if len(groups) > 1:
            groups.append([g[0] for g in groups])
        for group in groups:
            ring = _union_ring([poly] + [_live(current, n) for n in group])
            if ring is None:
                continue
            found = _decompose([ring], xy, maxv, thin)
            # Every edge of the outline stays an edge (a vertex skipped would be a T-junction).
            if (
                found is None
                or not {(ring[k - 1], ring[k]) for k in range(len(ring))}
                <= {(piece[k - 1], piece[k]) for piece in found[0] for k in range(len(piece))}
                or any(_is_sliver(xy[piece], thin) for piece in found[0])
            ):
                continue
            pieces = found[0]
            slots = [s, *group]
            extra = max(len(pieces) - len(slots), 0)
            slots += range(len(current), len(current) + extra)
            current.extend([None] * extra)
            for slot in slots:
                old = current[slot] or []
                for k in range(len(old)):
                    del owner[(old[k - 1], old[k])]
                current[slot] = None
            for slot, piece in zip(slots, pieces):
                current[slot] = piece
                for k in range(len(piece)):
                    owner[(piece[k - 1], piece[k])] = slot
            break
        else:
            # Cut off only at the floor's edge (a spike, a pinch between walls): one with
            # polygons of the region all round would leave a hole inside the floor.
            at_wall = any(owner.get((b, a)) is None for a, b in edges)
            if narrower_than(xy[poly], thin) and at_wall:
                for k in range(len(poly)):
                    del owner[(poly[k - 1], poly[k])]
                current[s] = None
    return [poly for poly in current if poly is not None]


def _weld_t_junctions(
    polys: list[list[int]], xyz: np.ndarray, maxv: int, thin: float
) -> tuple[list[list[int]], list[int]]:
    """(polygons, the polygon each came from) with every T-junction welded: where polygons on one
    side of a line end at a vertex strictly inside an edge of a polygon on the other side (a
    decomposition that cut a chord through a vertex straight to float noise), that vertex is
    inserted into the edge, so the two sides share it. A polygon the insertion takes over maxv
    vertices is cut by chords (_split_convex); one that cannot be is left as it was."""
    directed = {(poly[k - 1], poly[k]) for poly in polys for k in range(len(poly))}
    unpaired = [(p, k, poly[k - 1], poly[k]) for p, poly in enumerate(polys) for k in range(len(poly))]
    unpaired = [(p, k, u, v) for p, k, u, v in unpaired if (v, u) not in directed]
    if not unpaired:
        return polys, list(range(len(polys)))
    along: dict[int, list[int]] = {}  # vertex -> the other ends of its unpaired edges
    for _, _, u, v in unpaired:
        along.setdefault(u, []).append(v)
        along.setdefault(v, []).append(u)
    ends = np.array(sorted(along), dtype=np.int64)
    ends = ends[np.argsort(xyz[ends, 0], kind="stable")]
    end_x = xyz[ends, 0]
    inserts: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for p, k, u, v in unpaired:
        a, d = xyz[u], xyz[v] - xyz[u]
        length_sq = float(d @ d)
        if length_sq <= _ON_EDGE**2:
            continue
        lo, hi = np.searchsorted(end_x, [min(a[0], a[0] + d[0]) - _ON_EDGE, max(a[0], a[0] + d[0]) + _ON_EDGE])
        cand = ends[lo:hi]
        rel = xyz[cand] - a
        t = rel @ d / length_sq
        off = np.linalg.norm(rel - np.outer(t, d), axis=1)
        inside = (t > _INSIDE_EDGE) & (t < 1 - _INSIDE_EDGE) & (off < _ON_EDGE)
        for w, tw in zip(cand[inside].tolist(), t[inside].tolist()):
            # Only where an unpaired edge at the vertex runs along this one (not a mere touch).
            rel_o = xyz[along[w]] - a
            if (np.linalg.norm(rel_o - np.outer(rel_o @ d / length_sq, d), axis=1) < _ON_EDGE).any():
                inserts.setdefault((p, k), []).append((tw, w))
    if not inserts:
        return polys, list(range(len(polys)))
    out, source = [], []
    for p, poly in enumerate(polys):
        welded = []
        for k, v in enumerate(poly):
            welded += [w for _, w in sorted(inserts.get((p, k), []))]
            welded.append(v)
        pieces = [welded] if len(welded) <= maxv else _split_convex(welded, xyz[:, :2], maxv, thin) or [poly]
        out += pieces
        source += [p] * len(pieces)
    return out, source


def _live(polys: list[list[int] | None], p: int) -> list[int]:
    """Polygon p, which an edge owner names and so is still there."""
    poly = polys[p]
    assert poly is not None
    return poly


def _drop_straight_vertices(polys: list[list[int]], xy: np.ndarray, max_edge_len: float) -> list[list[int]]:
    """The polygons without the straight vertices no polygon needs.

    A vertex is needed where some polygon turns at it, or where the two edges of a polygon that
    meet at it have different neighbours (a portal or a wall starts there): dropping it there would
    leave a T-junction or merge a wall edge into a portal. It is also needed between two wall
    edges that dropping it would join into one longer than max_edge_len. Elsewhere it is dropped
    from every polygon at once, so shared edges stay shared."""
    owner = {(poly[k - 1], poly[k]): p for p, poly in enumerate(polys) for k in range(len(poly))}
    pts = xy.tolist()
    straight, needed = set(), set()
    for p, poly in enumerate(polys):
        n = len(poly)
        for k, v in enumerate(poly):
            a, b = poly[k - 1], poly[(k + 1) % n]
            if is_straight(pts[a], pts[v], pts[b]) and owner.get((v, a)) == owner.get((b, v)):
                straight.add((p, v))
            else:
                needed.add(v)
    drop = {(p, v) for p, v in straight if v not in needed}
    if not drop:
        return polys
    out = []
    for p, poly in enumerate(polys):
        on_wall = [owner.get((v, poly[k - 1])) is None for k, v in enumerate(poly)]
        dropped = _keep_walls_short(poly, [(p, v) in drop for v in poly], on_wall, xy, max_edge_len)
        kept = [v for v, gone in zip(poly, dropped) if not gone]
        out.append(kept if len(kept) >= 3 else poly)
    return out


def _keep_walls_short(
    ring: list[int], drop: list[bool], on_wall: list[bool], xy: np.ndarray, max_edge_len: float
) -> list[bool]:
    """`drop` (per vertex of `ring`) less the wall vertices (on_wall: between two wall edges)
    whose dropping would join wall edges into one longer than max_edge_len (0: no limit)."""
    if max_edge_len <= 0 or all(drop) or not any(d and w for d, w in zip(drop, on_wall)):
        return drop
    drop, n = list(drop), len(ring)
    start = drop.index(False)
    last = ring[start]
    for k in range(start + 1, start + n):
        i = k % n
        if drop[i] and on_wall[i] and math.dist(xy[last], xy[ring[(i + 1) % n]]) > max_edge_len:
            drop[i] = False
        if not drop[i]:
            last = ring[i]
    return drop


def _drop_free_collinear(
    idx: list[int], nb: np.ndarray, xy: np.ndarray, uses: np.ndarray, max_edge_len: float
) -> list[int]:
    """Remove straight-angle vertices between two wall edges that nothing else uses, unless that
    would join them into a wall edge longer than max_edge_len.

    Such vertices only cost polygon vertex budget; vertices on shared borders (or used by another
    ring) must stay, or the neighbour region would see a T-junction.
    """
    n = len(idx)
    if n <= 3 or len(nb) != n:
        return idx
    drop = []
    for i in range(n):
        a, v, b = idx[i - 1], idx[i], idx[(i + 1) % n]
        free = nb[i - 1] == -1 and nb[i] == -1 and uses[v] == 1
        drop.append(free and turn(xy[a], xy[v], xy[b]) == 0 and np.dot(xy[v] - xy[a], xy[b] - xy[v]) > 0)
    drop = _keep_walls_short(idx, drop, [True] * n, xy, max_edge_len)
    return [v for v, gone in zip(idx, drop) if not gone]


def _trim_thin_corners(
    rings: list[list[int]], xy: np.ndarray, uses: np.ndarray, shared: set, thin: float
) -> list[list[int]]:
    """The region's rings without the convex wall corners whose triangle with their two
    neighbours is narrower than `thin`: a spike, a chamfer edge shorter than that, a point all but
    on its neighbours' line. Polygons at such corners tend to be slivers or needles (every triangle
    on an edge that short is one). Each is cut off, thinnest first, where no other ring point lies
    in the floor given up and every point cut so far stays within `thin` of the edge that replaces
    it (the floor lost is a strip thinner than that). Corners on a shared border or used by
    another ring stay; reflex ones too (dropping them would add floor)."""
    every = np.array([v for ring in rings for v in ring], dtype=np.int64)
    pts = {v: xy[v].tolist() for v in every.tolist()}  # this region's points only
    out = []
    for ring in rings:
        n = len(ring)
        prv, nxt = [(k - 1) % n for k in range(n)], [(k + 1) % n for k in range(n)]
        alive = n

        def width(k: int) -> float | None:
            """Least width of the corner's triangle if it may be cut, else None (called for this
            ring only)."""
            a, v, b = ring[prv[k]], ring[k], ring[nxt[k]]  # noqa: B023
            if uses[v] != 1 or (a, v) in shared or (v, b) in shared or turn(xy[a], xy[v], xy[b]) <= 0:
                return None
            w = min_width([pts[a], pts[v], pts[b]])
            return w if w < thin else None

        heap = [(w, k) for k in range(n) if (w := width(k)) is not None]
        heapq.heapify(heap)
        gone = [False] * n
        while heap and alive > 3:
            w, k = heapq.heappop(heap)
            if gone[k] or width(k) != w:
                continue
            a, b = prv[k], nxt[k]
            pa, pv, pb = xy[ring[a]], xy[ring[k]], xy[ring[b]]
            between = [ring[(a + j) % n] for j in range(1, (b - a) % n)]
            others = every[~np.isin(every, [ring[a], ring[k], ring[b]])]
            q = xy[others]
            inside = (cross_many(pa, pv, q) >= 0) & (cross_many(pv, pb, q) >= 0) & (cross_many(pb, pa, q) >= 0)
            if inside.any() or distances_to_segment(xy[between], pa, pb).max() >= thin:
                continue
            gone[k] = True
            alive -= 1
            nxt[a], prv[b] = b, a
            for j in (a, b):
                if (wj := width(j)) is not None:
                    heapq.heappush(heap, (wj, j))
        out.append([v for k, v in enumerate(ring) if not gone[k]])
    return out


def _clean_ring(idx: list[int], xy: np.ndarray) -> list[int] | None:
    """Drop repeated consecutive vertices and spikes (a->b->a); None when nothing with area is left."""
    ring = list(idx)
    changed = True
    while changed and len(ring) >= 3:
        changed = False
        out = [v for k, v in enumerate(ring) if v != ring[k - 1]] if len(ring) > 1 else ring
        n = len(out)
        for k in range(n):
            if n >= 3 and out[k - 1] == out[(k + 1) % n]:
                del out[k]
                del out[k - 1 if k > 0 else -1]
                changed = True
                break
        ring = out
    if len(ring) < 3 or abs(signed_area(xy[ring])) <= 0:
        return None
    return ring


def _decompose(
    rings: list[list[int]], xy: np.ndarray, maxv: int, thin: float, progress: Progress = SILENT
) -> tuple[list[list[int]], np.ndarray] | None:
    """Triangulate and merge: the fewest convex polygons (slivers first avoided) over a few
    triangulations of one region; None if no triangulation succeeds."""
    ring = bridge_holes(rings, xy, progress.span(0.0, 0.4))
    best, best_key = None, None
    clipped = {}
    for k, (mode, flip) in enumerate((("fat", False), ("first", False), ("far", False), ("fat", True))):
        attempt = progress.span(0.4, 0.95).part(k, 4)
        attempt.at(0.0)
        if mode not in clipped:
            clipped[mode] = ear_clip(ring, xy, mode, attempt.span(0.0, 0.6))
        tris = clipped[mode]
        if tris is None:
            continue
        if flip:
            tris = delaunay_flips(tris, xy)
        attempt.at(0.6)
        merged = _merge(tris, xy, maxv, progress=attempt.span(0.6, 0.9))
        attempt.at(0.9)
        key = _quality_key(merged, xy, thin)
        if best_key is None or key < best_key:
            best, best_key = merged, key
    if best is None:
        return None
    return _regroup(best, xy, maxv, thin, progress=progress.span(0.95, 1.0)), np.zeros((0, 3))


def _decompose_by_portals(
    rings, points, xy, shared, maxv: int, snap: float, thin: float, progress: Progress = SILENT
) -> tuple[list[list[int]], np.ndarray] | None:
    """Notch portals (lib.notch_portals), cells over the vertex limit split, then merged across
    inessential portals; Steiner vertices a merge leaves straight and unshared are dropped."""
    found = notch_cells(rings, points, shared, snap, progress.span(0.0, 0.6))
    if found is None:
        return None
    xy_all = _extended(xy, found.steiner)
    steiner_ids = set(range(len(xy), len(xy_all)))
    merged = None
    # Cells over the vertex limit are cut by chords into as few pieces as they need, or into
    # triangles that the merge regroups with their neighbours; whichever ends with fewer.
    oversize = any(len(cell) > maxv for cell in found.cells)
    for attempt, split in enumerate((_split_convex, _triangles) if oversize else (_split_convex,)):
        step = progress.span(0.6 + 0.2 * attempt, 0.8 + 0.2 * attempt)
        pieces = []
        for cell in found.cells:
            parts = [cell] if len(cell) <= maxv else split(cell, xy_all, maxv, thin)
            if parts is None:
                break
            pieces.extend(parts)
        else:
            joined = _merge(pieces, xy_all, maxv, steiner_ids, step.span(0.0, 0.5))
            candidate = _regroup(joined, xy_all, maxv, thin, steiner_ids, step.span(0.5, 1.0))
            if merged is None or _quality_key(candidate, xy_all, thin) < _quality_key(merged, xy_all, thin):
                merged = candidate
    if merged is None:
        return None
    used = {v for poly in merged for v in poly}
    kept = [v for v in range(len(xy), len(xy_all)) if v in used]
    if len(kept) < len(found.steiner):
        renumber = {v: len(xy) + k for k, v in enumerate(kept)}
        merged = [[renumber.get(v, v) for v in poly] for poly in merged]
    return merged, found.steiner[[v - len(xy) for v in kept]]


def _split_convex(ring: list[int], xy: np.ndarray, maxv: int, thin: float) -> list[list[int]] | None:
    """A convex polygon over maxv vertices cut by chords into the fewest pieces, ceil((n - 2) / (maxv - 2)):
    each cut takes maxv consecutive vertices, where the piece is fattest and neither side is a
    sliver (straight runs of vertices can make one); None if no cut qualifies."""
    pieces = []
    while len(ring) > maxv:
        n = len(ring)
        cuts = []
        for i in range(n):
            piece = [ring[(i + k) % n] for k in range(maxv)]
            rest = [ring[(i + maxv - 1 + k) % n] for k in range(n - maxv + 2)]
            if not (_is_sliver(xy[piece], thin) or _is_sliver(xy[rest], thin)):
                cuts.append((_fatness(xy[piece]), piece, rest))
        if not cuts:
            return None
        _, piece, ring = max(cuts, key=lambda c: c[0])
        pieces.append(piece)
    return pieces + [ring]


def _triangles(ring: list[int], xy: np.ndarray, maxv: int, thin: float) -> list[list[int]] | None:
    """A convex polygon as triangles (fattest ears first); the vertex limit is for the merge."""
    return ear_clip(ring, xy, "fat")


def _extended(xy: np.ndarray, steiner: np.ndarray) -> np.ndarray:
    return np.vstack([xy, steiner[:, :2]]) if len(steiner) else xy


def _quality_key(polys: list[list[int]], xy: np.ndarray, thin: float) -> tuple[int, int]:
    """Decompositions compare by slivers first, then polygon count."""
    return sum(_is_sliver(xy[p], thin) for p in polys), len(polys)


def _is_sliver(pts: np.ndarray, thin: float) -> bool:
    """Needle-like polygon (area / perimeter² at most NEEDLE_FATNESS; an equilateral triangle has 0.048)
    or one narrower than `thin`."""
    return _fatness(pts) <= NEEDLE_FATNESS or narrower_than(pts, thin)


def _merge(
    pieces: list[list[int]],
    xy: np.ndarray,
    maxv: int,
    removable: AbstractSet[int] = frozenset(),
    progress: Progress = SILENT,
) -> list[list[int]]:
    """Hertel-Mehlhorn: remove diagonals (longest first) while the union stays convex and small.

    A vertex in `removable` (a Steiner vertex) that a union leaves straight and no other polygon
    uses is dropped from it.
    """
    polys: dict[int, list[int]] = {k: list(t) for k, t in enumerate(pieces)}
    uses: dict[int, int] = {}
    owner: dict[tuple[int, int], int] = {}
    for k, t in polys.items():
        for j, v in enumerate(t):
            owner[(v, t[(j + 1) % len(t)])] = k
            uses[v] = uses.get(v, 0) + 1
    heap: list[tuple[float, int, int]] = []
    for a, b in owner:
        if a < b and (b, a) in owner:
            heapq.heappush(heap, (-float(np.hypot(*(xy[a] - xy[b]))), a, b))
    next_id = len(pieces)
    diagonals = max(len(heap), 1)
    while heap:
        progress.at(1.0 - len(heap) / diagonals)
        _, a, b = heapq.heappop(heap)
        p, q = owner.get((a, b)), owner.get((b, a))
        if p is None or q is None or p == q:
            continue
        merged = _try_merge(polys[p], polys[q], a, b, xy, maxv, removable, uses)
        if merged is None:
            continue
        for poly in (polys.pop(p), polys.pop(q)):
            for j, v in enumerate(poly):
                owner.pop((v, poly[(j + 1) % len(poly)]), None)
                uses[v] -= 1
        polys[next_id] = merged
        for j, v in enumerate(merged):
            owner[(v, merged[(j + 1) % len(merged)])] = next_id
            uses[v] += 1
        for j in range(len(merged)):
            u, v = merged[j], merged[(j + 1) % len(merged)]
            if (v, u) in owner:
                heapq.heappush(heap, (-float(np.hypot(*(xy[u] - xy[v]))), min(u, v), max(u, v)))
        next_id += 1
    return [_rotate_min(poly) for poly in polys.values()]


def _rotate_min(poly: list[int]) -> list[int]:
    k = poly.index(min(poly))
    return poly[k:] + poly[:k]


def _try_merge(
    pp: list[int],
    qq: list[int],
    a: int,
    b: int,
    xy: np.ndarray,
    maxv: int,
    removable: AbstractSet[int],
    uses: dict[int, int],
) -> list[int] | None:
    """Union of two polygons sharing edge a->b (in pp) / b->a (in qq), or None if not convex / too big."""
    i = pp.index(a)
    pp = pp[i:] + pp[:i]  # a, b, ...
    j = qq.index(b)
    qq = qq[j:] + qq[:j]  # b, a, ...
    merged = pp[1:] + qq[1:]  # b ... (pp) ..., a ... (qq) ...
    if len(set(merged)) != len(merged):
        return None
    if removable:
        merged = [
            v
            for k, v in enumerate(merged)
            if not (
                v in removable
                and uses[v] == (v in pp) + (v in qq)
                and turn(xy[merged[k - 1]], xy[v], xy[merged[(k + 1) % len(merged)]]) == 0
            )
        ]
    if len(merged) > maxv:
        return None
    n = len(merged)
    if not all(_convex_corner(xy[merged[k - 1]], xy[merged[k]], xy[merged[(k + 1) % n]]) for k in range(n)):
        return None
    return merged


def _union_ring(group: list[list[int]]) -> list[int] | None:
    """Outline of adjacent polygons as one counter-clockwise ring; None if it is not a single simple loop."""
    edges = {(p[k], p[(k + 1) % len(p)]) for p in group for k in range(len(p))}
    nxt = {}
    for a, b in edges:
        if (b, a) not in edges:
            if a in nxt:
                return None
            nxt[a] = b
    if not nxt:
        return None
    start = next(iter(nxt))
    ring, v = [start], nxt[start]
    while v != start:
        if v not in nxt or len(ring) > len(nxt):
            return None
        ring.append(v)
        v = nxt[v]
    return ring if len(ring) == len(nxt) else None


def _split_in_two(ring: list[int], xy: np.ndarray, maxv: int, thin: float) -> list[list[int]] | None:
    """The ring as one convex polygon, or cut by its fattest chord into two, each within maxv
    vertices; None if neither is possible.

    A chord only changes the corners at its ends, so it must end at every reflex corner: none
    (already convex), one (chords from it) or two (the chord between them).
    """
    n = len(ring)
    if n > 2 * maxv - 2:
        return None
    pts = [tuple(xy[v]) for v in ring]
    reflex = [k for k in range(n) if not _convex_corner(pts[k - 1], pts[k], pts[(k + 1) % n])]
    if not reflex:
        return [ring] if n <= maxv else None
    if len(reflex) > 2:
        return None
    if len(reflex) == 2:
        chords = [tuple(reflex)]
    else:
        chords = [(min(reflex[0], j), max(reflex[0], j)) for j in range(n) if (j - reflex[0]) % n not in (0, 1, n - 1)]
    best, best_fat = None, NEEDLE_FATNESS
    for i, j in chords:
        if j - i < 2 or j - i > n - 2:
            continue
        first, second = ring[i : j + 1], ring[j:] + ring[: i + 1]
        if len(first) > maxv or len(second) > maxv:
            continue
        if not all(
            _convex_corner(*corner)
            for corner in (
                (pts[j - 1], pts[j], pts[i]),
                (pts[j], pts[i], pts[i + 1]),
                (pts[i - 1], pts[i], pts[j]),
                (pts[i], pts[j], pts[(j + 1) % n]),
            )
        ):
            continue
        fat = min(_fatness(xy[first]), _fatness(xy[second]))
        if fat > best_fat and not (_is_sliver(xy[first], thin) or _is_sliver(xy[second], thin)):
            best, best_fat = [first, second], fat
    return best


def _convex_corner(o, v, w) -> bool:
    """Left turn at v, or straight on (not back)."""
    bend = turn(o, v, w)
    return bend > 0 or (bend == 0 and (v[0] - o[0]) * (w[0] - v[0]) + (v[1] - o[1]) * (w[1] - v[1]) > 0)


def _fatness(pts: np.ndarray) -> float:
    """Area / perimeter², signed (0.048 for an equilateral triangle, 0.0625 for a square)."""
    p = pts[:, :2].tolist()
    perimeter = sum(math.dist(p[k - 1], p[k]) for k in range(len(p)))
    return signed_area(pts) / max(perimeter * perimeter, 1e-300)


def _regroup(
    pieces: list[list[int]],
    xy: np.ndarray,
    maxv: int,
    thin: float,
    removable: AbstractSet[int] = frozenset(),
    progress: Progress = SILENT,
) -> list[list[int]]:
    """Local search after merging: three adjacent polygons whose outline one chord cuts into two
    convex polygons (each within maxv) become those two, until no such triple is left."""
    polys: dict[int, list[int]] = dict(enumerate(pieces))
    owner: dict[tuple[int, int], int] = {}
    uses: dict[int, int] = {}
    for k, p in polys.items():
        for j, v in enumerate(p):
            owner[(v, p[(j + 1) % len(p)])] = k
            uses[v] = uses.get(v, 0) + 1
    next_id = len(pieces)
    tried: set[frozenset] = set()

    def neighbours(k: int) -> set[int]:
        p = polys[k]
        found = {owner.get((p[(j + 1) % len(p)], v)) for j, v in enumerate(p)}
        found.discard(None)
        return cast(set[int], found)

    changed = True
    while changed:
        changed = False
        order = list(polys)
        for k, a in enumerate(order):
            progress.at(k / len(order))
            if a not in polys:
                continue
            near_a = neighbours(a)
            triples = {frozenset((a, b, c)) for b in near_a for c in (near_a | neighbours(b)) - {a, b}}
            for triple in triples - tried:
                tried.add(triple)
                group = [polys[k] for k in triple]
                ring = _union_ring(group)
                if ring is None:
                    continue
                inside: dict[int, int] = {}
                for p in group:
                    for v in p:
                        inside[v] = inside.get(v, 0) + 1
                ring = [
                    v
                    for k, v in enumerate(ring)
                    if not (
                        v in removable
                        and uses[v] == inside[v]
                        and turn(xy[ring[k - 1]], xy[v], xy[ring[(k + 1) % len(ring)]]) == 0
                    )
                ]
                split = _split_in_two(ring, xy, maxv, thin)
                if split is None:
                    continue
                for k in triple:
                    p = polys.pop(k)
                    for j, v in enumerate(p):
                        owner.pop((v, p[(j + 1) % len(p)]), None)
                        uses[v] -= 1
                for p in split:
                    polys[next_id] = p
                    for j, v in enumerate(p):
                        owner[(v, p[(j + 1) % len(p)])] = next_id
                        uses[v] = uses.get(v, 0) + 1
                    next_id += 1
                changed = True
                break
    return [_rotate_min(p) for p in polys.values()]
