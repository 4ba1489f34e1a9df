"""Polygon stage: region outlines with holes -> few convex polygons (Recast: rcBuildPolyMesh).

Each region is cut into convex cells by notch portals (lib.notch_portals, NEOGEN-2D). Cells over
max_verts_per_poly are cut into pieces, the pieces merged Hertel-Mehlhorn style across inessential
portals (longest first), and a local search then replaces any three adjacent polygons that one
chord can cut into two. Triangulating (holes bridged into the outer ring, ear clipping) and merging
is the fallback for outlines the portals cannot handle. Vertices are welded across regions by exact
coordinates, so shared borders (bitwise-identical in both outlines, never given new vertices) join
without T-junctions. Slivers (narrower than SLIVER_WIDTH cells, or needle-shaped) are avoided
throughout: convex wall corners thinner than that are cut off the outline first (reflex ones far
thinner, and half that beside a wall edge that short, are dropped), decompositions compare
by their slivers, a region still left with some is decomposed again with its pinches narrower
than that closed, and a sliver left is regrouped with its neighbours (last, on a border between
regions, with the polygon across it) or, if that thin, cut off where that leaves no two polygons
facing each other across it.
"""

from __future__ import annotations

import logging

import numpy as np

from ..contours import RegionOutline
from ..contours.trace import OFF_WALL
from ..geometry import meeting_boxes, ring_contains, ring_edges_split, ring_loops, ring_next, signed_area
from ..navmesh import PolyMesh
from ..params import BakeParams
from ..progress import SILENT, Progress
from ..triangulate import SLIVER_WIDTH, simple_hole
from .decompose import (
    _STEINER_SNAP,
    _decompose,
    _decompose_by_portals,
    _extended,
    _feet_on_walls,
    _has_area,
    _quality_key,
    _without_spikes,
)
from .repair import (
    _close_pinches,
    _drop_free_collinear,
    _drop_straight_vertices,
    _regrouped_across_borders,
    _rings_cross,
    _trim_thin_corners,
    _weld_t_junctions,
    _widen_slivers,
)
from .rough import split_rough

__all__ = ["build_polygons", "split_rough"]

log = logging.getLogger(__name__)


# Outline points this close (m) are welded into one vertex.
_WELD = 1e-9
# Rounds of feet put on walls across thin strips while needles are left (each round on the rings
# the last one left, so a point's foot can give another foot across the strip).
_FOOT_ROUNDS = 3
# A ring point this many times nearer a wall edge than the edge's nearer end lies across a thin
# strip of floor from it (_feet_on_walls). The strictest first; the looser ones only for regions
# still left with slivers: at max_verts_per_poly 3 a short edge whose every triangle reaches a far
# vertex at a grazing angle needs a vertex on a wall farther across (fuzz cases 215576, 223103).
_STRIP_RATIOS = (8.0, 4.0, 2.0, 1.0, 0.5)


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
        # Repeated points and spikes (a -> b -> a) go before a hole is tested for self-contact: a
        # spike touches itself, and the hole's convex hull would take its place (fuzz case 370718).
        rings = [_without_spikes(r) for r in rings]
        rings, xy, uses = _simple_holes(rings, points, xy, uses, outline.region, params.max_edge_len)
        rings = _without_nested_holes([r for r in rings if _has_area(r, xy)], xy)
        # A reflex corner goes where its triangle is thinner than the outline keeps off the walls,
        # so the floor it adds stays out of the agent's band (beside a wall edge shorter than a
        # sliver's width, up to half that width: 0.015 cells into the band at most).
        rings = _trim_thin_corners(rings, xy, uses, shared, thin, OFF_WALL * params.cell_size, params.max_edge_len)
        if not rings or signed_area(xy[rings[0]]) <= 0:
            log.warning("region %d dropped: its outer ring has no area or is not counter-clockwise", outline.region)
            continue
        # Notch portals; triangulation and merging where the portals cannot be laid or leave slivers.
        found = _decompose_by_portals(rings, points, xy, shared, maxv, snap, thin, part.span(0.0, 0.5))
        found_key = None if found is None else _quality_key(found[0], _extended(xy, found[1]), thin)
        # With triangles only, portals cannot make larger polygons, and their feet on the walls
        # add triangles: the plain triangulation is compared as well.
        if found_key is None or found_key[0] or maxv == 3:
            fallback = _decompose(rings, xy, maxv, thin, part.span(0.5, 1.0))
            if found_key is None or (fallback is not None and _quality_key(fallback[0], xy, thin) < found_key):
                found = fallback
        if found is None:
            log.warning("region %d dropped: its outline could not be decomposed (self-intersecting?)", outline.region)
            continue
        found = _without_strip_slivers(found, rings, points, xy, shared, maxv, snap, thin)
        if _quality_key(found[0], _extended(xy, found[1]), thin)[0]:
            found, xy = _with_pinches_closed(found, rings, points, xy, uses, shared, maxv, snap, thin)
        region_polys, steiner = found
        if len(steiner):
            points.extend(map(tuple, steiner.tolist()))
            xy = _extended(xy, steiner)
        region_polys = _widen_slivers(region_polys, xy, maxv, thin, shared, float(params.region_min_area))
        polys.extend(region_polys)
        regions.extend([outline.region] * len(region_polys))
        areas.extend([outline.area] * len(region_polys))

    vertices = np.array(points, dtype=np.float64).reshape(-1, 3)
    polys = _drop_straight_vertices(polys, xy, params.max_edge_len)
    polys, source = _weld_t_junctions(polys, vertices, maxv, thin)
    regions, areas = [regions[p] for p in source], [areas[p] for p in source]
    polys, regions, areas = _regrouped_across_borders(polys, regions, areas, vertices[:, :2], maxv, thin)
    return PolyMesh.from_polygons(polys, regions, areas, vertices, params)


def _simple_holes(
    rings: list[list[int]], points: list, xy: np.ndarray, uses: np.ndarray, region: int, max_edge_len: float
):
    """(rings, xy, uses) with each self-intersecting hole replaced by its convex hull
    (`simple_hole`), whose edges over max_edge_len (0: no limit) are split by new points, added to
    `points` (and to xy and uses) as well."""
    out = rings[:1]
    for hole in (h for h in rings[1:] if len(h) >= 3):
        hull = simple_hole(hole, xy, region)
        if hull is not hole and max_edge_len > 0:
            hull, new = _short_walls(hull, points, max_edge_len)
            if new:
                points.extend(new)
                xy = _extended(xy, np.array(new))
                uses = np.concatenate([uses, np.ones(len(new), dtype=uses.dtype)])
        out.append(hull)
    return out, xy, uses


def _without_nested_holes(rings: list[list[int]], xy: np.ndarray) -> list[list[int]]:
    """The rings without the holes that lie inside another hole: the floor ends at the outer one,
    so the inner one excludes nothing more, and no bridge from it to the outline could pass the
    outer one (fuzz case 434388, a hole the contour stage left inside a wrapped obstacle, was
    dropped with a warning). Only holes whose box lies in another's are tested."""
    holes = rings[1:]
    if len(holes) < 2:
        return rings
    box = np.array([np.concatenate([xy[h].min(axis=0), xy[h].max(axis=0)]) for h in holes])
    inner, outer = meeting_boxes(box, box)
    holds = (box[outer, :2] <= box[inner, :2]).all(axis=1) & (box[outer, 2:] >= box[inner, 2:]).all(axis=1)
    pairs = zip(inner[holds].tolist(), outer[holds].tolist())
    nested = {k for k, j in pairs if k != j and _hole_inside(holes[k], holes[j], xy)}
    return rings[:1] + [h for k, h in enumerate(holes) if k not in nested]


def _hole_inside(hole: list[int], other: list[int], xy: np.ndarray) -> bool:
    """Does the hole lie inside the other hole: its points not on the other's ring inside it, and
    no edge of one meeting an edge of the other away from their shared points?"""
    on_other = set(other)
    free = [v for v in hole if v not in on_other]
    ring = xy[other]
    return (
        bool(free) and all(ring_contains(ring, xy[v]) for v in free) and not _rings_cross([hole, other], xy, set(hole))
    )


def _short_walls(ring: list[int], points: list, max_edge_len: float) -> tuple[list[int], list[tuple]]:
    """The ring with every edge longer than max_edge_len split evenly by new points (numbered after
    `points`, returned as well): a self-intersecting hole's convex hull bridges its dents with new
    wall edges, which the contour stage's splitting never saw (fuzz cases 514422, 514648)."""
    xyz = np.array([points[v] for v in ring], dtype=np.float64)
    pieces = np.ceil(np.hypot(*(ring_next(xyz[:, :2]) - xyz[:, :2]).T) / max_edge_len).astype(np.int64)
    split, edge = ring_edges_split(xyz, np.maximum(pieces, 1))
    own = np.r_[True, edge[1:] != edge[:-1]]
    new_ids = len(points) + np.cumsum(~own) - 1
    out = np.where(own, np.asarray(ring)[edge], new_ids).tolist()
    return out, [tuple(p) for p in split[~own].tolist()]


def _with_pinches_closed(found, rings, points, xy, uses, shared, maxv: int, snap: float, thin: float):
    """A region's (polygons, Steiner points) and the points' top views, decomposed again with its
    pinches closed (`_close_pinches`) if that leaves fewer slivers; the points moved are updated in
    `points` then. The closed rings touch themselves: each is split into loops there, and the
    floor's loops are decomposed one by one with the holes inside them, with feet on the walls
    where slivers are left along them (`_without_strip_slivers`; fuzz case 464560, at
    max_verts_per_poly 3: closing a hole's pinch against a wall gave up the feet that had kept a
    fan of long triangles to an arc's points from being slivers)."""
    pinched = _close_pinches(rings, xy, uses, shared, thin)
    if pinched is None:
        return found, xy
    closed_rings, closed_xy = pinched
    loops = [[ring[i] for i in loop] for ring in closed_rings for loop in ring_loops(ring) if len(loop) >= 3]
    loops = [loop for loop in loops if _has_area(loop, closed_xy)]
    floors = [loop for loop in loops if signed_area(closed_xy[loop]) > 0]
    holes: list[list[list[int]]] = [[] for _ in floors]
    for hole in (loop for loop in loops if signed_area(closed_xy[loop]) < 0):
        inside = [k for k, floor in enumerate(floors) if _hole_in(floor, hole, closed_xy)]
        if not inside:
            return found, xy
        holes[inside[0]].append(hole)
    moved = np.flatnonzero((closed_xy != xy).any(axis=1)).tolist()
    closed_points = list(points)
    for v in moved:
        closed_points[v] = (*closed_xy[v].tolist(), points[v][2])
    polys: list[list[int]] = []
    # Each floor's feet on walls (`_without_strip_slivers`) are numbered after the last floor's.
    all_points, all_xy = closed_points, closed_xy
    for floor, floor_holes in zip(floors, holes):
        attempt = _decompose([floor, *floor_holes], all_xy, maxv, thin)
        if attempt is None:
            return found, xy
        attempt = _without_strip_slivers(attempt, [floor, *floor_holes], all_points, all_xy, shared, maxv, snap, thin)
        polys.extend(attempt[0])
        if len(attempt[1]):
            all_points = all_points + list(map(tuple, attempt[1].tolist()))
            all_xy = _extended(all_xy, attempt[1])
    if _quality_key(polys, all_xy, thin) >= _quality_key(found[0], _extended(xy, found[1]), thin):
        return found, xy
    points[:] = closed_points
    return (polys, np.array(all_points[len(points) :], dtype=np.float64).reshape(-1, 3)), closed_xy


def _hole_in(floor: list[int], hole: list[int], xy: np.ndarray) -> bool:
    """Is the hole inside the floor loop, judged at a hole point not on it (loops split at a pinch
    share that point)?"""
    on_floor = set(floor)
    point = next((xy[v] for v in hole if v not in on_floor), 0.5 * (xy[hole[0]] + xy[hole[1]]))
    return ring_contains(xy[floor], point)


def _without_strip_slivers(found, rings, points, xy, shared, maxv: int, snap: float, thin: float):
    """A region's (polygons, Steiner points) with needles and slivers along long walls avoided:
    while any is left (at most _FOOT_ROUNDS times for each of _STRIP_RATIOS, in turn), the region
    is decomposed again with feet on the wall edges that ring points lie across thin strips from
    (a needle along a long wall is otherwise forced: every triangle on that wall reaches its far
    ends; so is a sliver between ring points all but in line along it), kept when _quality_key is
    better. Regions without them are left as they are. The feet come first among the Steiner
    points."""
    polys, steiner = found
    key = _quality_key(polys, _extended(xy, steiner), thin)
    feet_all = np.zeros((0, 3))
    for ratio in _STRIP_RATIOS:
        for _ in range(_FOOT_ROUNDS):
            if not key[0]:
                break
            footed = _feet_on_walls(rings, points, shared, snap, ratio)
            if footed is None:
                break
            footed_rings, feet = footed
            footed_points = list(points) + list(map(tuple, feet.tolist()))
            footed_xy = _extended(xy, feet)
            better = None
            for attempt in (
                _decompose_by_portals(footed_rings, footed_points, footed_xy, shared, maxv, snap, thin),
                _decompose(footed_rings, footed_xy, maxv, thin),
            ):
                if attempt is not None:
                    attempt_key = _quality_key(attempt[0], _extended(footed_xy, attempt[1]), thin)
                    if attempt_key < key:
                        better, key = attempt, attempt_key
            if better is None:
                break
            rings, points, xy = footed_rings, footed_points, footed_xy
            feet_all = np.vstack([feet_all, feet])
            polys, steiner = better
    return polys, np.vstack([feet_all, steiner.reshape(-1, 3)])
