"""Contour stage: regions -> simplified outlines with holes (Recast: rcBuildContours)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

from .boundary import FloorBoundary
from .geometry import convex_hull
from .heightfield import DIR_DX, DIR_DY, Heightfield
from .params import BakeParams
from .progress import SILENT, Progress
from .regions import ON_RADIUS, RegionMap
from .triangulate import segment_distances


@dataclass
class RegionOutline:
    """One region's outline in the soup's local frame.

    rings[0] is the outer boundary, counter-clockwise seen from +Z; rings[1:] are holes, clockwise.
    Each ring is (n, 3) float64, not closed (the last point does not repeat the first).
    ring_neighbors[k][i] is the region across edge i -> i+1 of ring k, or -1 for a wall/ledge.
    Where two regions meet, both outlines hold bitwise-identical vertices along the shared border,
    in opposite order, so polygons built from them weld without T-junctions.
    """

    region: int
    area: int
    rings: list[np.ndarray]
    ring_neighbors: list[np.ndarray]


# Where two storeys of one region sit in neighbouring columns, each outline stops this fraction
# of a cell short of the edge between them.
_STOREY_GAP = 1e-3
# Sine of the angle below which two edges count as straight (float noise, not geometry).
_STRAIGHT = 1e-9
# Rings with less area than this fraction of a cell are slivers and dropped.
_MIN_RING_AREA = 1e-3
# A ring whose simplified outline cannot be pushed off the walls is simplified again with the
# tolerance divided by each of these in turn.
_FINER_STEPS = (2, 4)
# Passes of the self-intersection repair before the unsimplified section is restored.
_REPAIR_PASSES = 8
# A ring that collapses under the simplification tolerance is retried with it halved this many times.
_TOLERANCE_HALVINGS = 6
# Simplification is lopsided: traced points may lie up to the tolerance on the walkable side of a
# simplified wall edge, but at most this fraction of it beyond, toward the wall (the push below
# then moves such an edge back off the wall, so the share trades area for corners).
_OUTSIDE_SHARE = 0.3
# Simplified wall edges are chosen so that none needs pushing by more than this fraction of the
# tolerance where a passage is in front of it (longer pushes cut corners off doorways: at 1.0, the
# widest agent through a 1.6 m door dropped from 0.77 to 0.68 m), and by more than _MAX_PUSH_OPEN
# elsewhere, where a longer push costs walkable area but no passage width: a corner turning 90
# degrees round an obstacle then takes two edges instead of three or four (on nav_test 251 -> 215
# polygons, coverage of the free space on random levels 99.2% -> 99.1%).
_MAX_PUSH = 0.5
_MAX_PUSH_OPEN = 1.0
# A wall edge faces a passage when the floor's boundary lies within agent_radius of the edge moved
# this many agent radii onto its walkable side: a gap that agents up to 3 radii wide (the span of
# the clearance view) need whole.
_PASSAGE_REACH = 4.0
# Wall edges closer than agent_radius less this (m, float noise) to the floor's boundary are pushed
# off it, by the shortfall and this much more, so noise does not leave them a hair inside the band.
_PUSH_MARGIN = 1e-7
# Rounds of pushing wall edges off the boundary (each moves vertices; the next one re-measures).
_PUSH_PASSES = 8
# Two consecutive edges whose turn has a sine below this are pushed by the same amount (pushed
# apart, their nearly parallel lines would meet far away).
_PUSH_STRAIGHT = 0.5
# An edge with one end on a shared border turns about that end; its closest approach counts as at
# least this fraction of its length from the fixed end, bounding how far the free end moves.
_PUSH_MIN_LEVER = 0.25


def _simplification_tolerance(params) -> float:
    """RDP tolerance: max_edge_error less the traced outline's own sub-cell error (about cs/4), so the
    simplified outline stays within max(cell_size / 2, max_edge_error) of the true boundary."""
    return max(params.max_edge_error - params.cell_size / 4, params.cell_size / 8)


def build_contours(hf: Heightfield, region_map: RegionMap, params: BakeParams,
                   progress: Progress = SILENT) -> list[RegionOutline]:
    """Trace, place (sub-cell, marching squares) and simplify the outline of every region.

    Each boundary edge of a region's cells gives one point: on a wall or ledge, where the linearly
    interpolated distance field crosses agent_radius between the two cell centres (at the
    heightfield's block fraction of the step when the erosion does not reach it); between two
    regions, the exact midpoint of the centres (no erosion), computed symmetrically so both sides
    agree bitwise. Wall runs are simplified with Ramer-Douglas-Peucker; shared runs keep their ends,
    and where the regions differ in area id, the points symmetric RDP keeps, the same on both sides.
    """
    region = region_map.region
    if region_map.region_count == 0:
        return []
    edges = _boundary_edges(hf, region)
    if len(edges.span) == 0:
        return []
    points, labels = _edge_points(hf, region_map, params, edges)
    successor = _successors(hf, edges)
    centre = np.column_stack([hf.centers_xy(), hf.z])
    tolerance = _simplification_tolerance(params)
    boundary = FloorBoundary(hf, params)
    traced_rings = []
    for ring in _cycles(successor):
        ring_points, ring_labels = _square_corners(centre, edges, ring, points, labels)
        traced_rings.append((int(region[edges.span[ring[0]]]), ring_points, ring_labels))
    # Borders between different area ids keep their shape (to the tolerance), as Recast keeps
    # RC_AREA_BORDER points: a chord between a border's ends would move the painted area.
    kept = _area_border_corners(traced_rings, region_map.region_area, tolerance)
    tracing = progress.span(0.0, 0.5)
    pieces = []
    for first, last in _batches([len(ring_points) for _, ring_points, _ in traced_rings]):
        tracing.at(first / len(traced_rings))
        pieces += _outline_pieces([ring[1:] for ring in traced_rings[first:last]], tolerance, boundary, kept)
    # A ring that cannot be simplified with its shared borders cut short to chords keeps those
    # borders' points whole, and so does the ring on the other side of them.
    whole = {key for (_, ring_points, ring_labels), ring_pieces in zip(traced_rings, pieces)
             if any(simple is None for _, _, simple in ring_pieces) for key in _shared_keys(ring_points, ring_labels)}
    if whole:
        kept = kept | whole
        again = [k for k, (_, ring_points, ring_labels) in enumerate(traced_rings)
                 if whole & _shared_keys(ring_points, ring_labels)]
        for k, ring_pieces in zip(again, _outline_pieces([traced_rings[k][1:] for k in again], tolerance, boundary, kept)):
            pieces[k] = ring_pieces
    # Per region: (simplified points, per-edge neighbour, per-point shared flag, traced points of a
    # wall-only hole or None, the ring simplified ever finer: what the push falls back on).
    rings_by_region: dict[int, list[tuple]] = {}
    for (r, _, _), ring_pieces in zip(traced_rings, pieces):
        for traced, traced_labels, simple in ring_pieces:
            if simple is not None:
                wall_hole = _signed_area(simple[0]) < 0 and bool((traced_labels < 0).all())
                finer = _finer(traced, traced_labels, tolerance, kept, boundary)
                rings_by_region.setdefault(r, []).append((*simple, traced if wall_hole else None, finer))
    min_area = _MIN_RING_AREA * hf.cell_size**2
    outlines = []
    pushing = progress.span(0.5, 1.0)
    for done, r in enumerate(sorted(rings_by_region)):
        pushing.at(done / len(rings_by_region))
        rings = [ring for ring in rings_by_region[r] if abs(_signed_area(ring[0])) >= min_area]
        outers = sorted((k for k, ring in enumerate(rings) if _signed_area(ring[0]) > 0),
                        key=lambda k: _signed_area(rings[k][0]))
        holes_of: dict[int, list[int]] = {k: [] for k in outers}
        for h in (k for k, ring in enumerate(rings) if _signed_area(ring[0]) < 0):
            # A hole belongs to the smallest outer ring around it.
            owner = next((k for k in outers if _hole_inside(rings[k][0], rings[h][0])), None)
            if owner is not None:
                holes_of[owner].append(h)
        for k in reversed(outers):
            members = [k] + holes_of[k]
            # Per ring, the outlines to try, best first: (points, neighbours, shared flags), and
            # then finer simplifications, made only if those fail.
            options = [[rings[m][:3], *rings[m][4]] for m in members]
            placed = _RingBoxes([rings[m][0] for m in members])
            for slot, h in enumerate(holes_of[k], start=1):
                if rings[h][3] is not None:
                    # The fewer-corner outline stays within tolerance of the traced one.
                    others = placed.near(rings[h][3], skip=slot, margin=_HOLE_REACH * tolerance)
                    fewer = _enclosing_hole(rings[h][3], len(placed.rings[slot]), tolerance, others)
                    if fewer is not None:
                        placed.replace(slot, fewer)
                        no_border = np.full(len(fewer), -1, dtype=np.int64)
                        options[slot].insert(0, (fewer, no_border, np.zeros(len(fewer), dtype=bool)))
            chosen, neighbours = _push_rings(options, boundary, pushing.part(done, len(rings_by_region)))
            chosen, neighbours = map(list, zip(*(_split_long_wall_edges(ring, nb, params.max_edge_len)
                                                 for ring, nb in zip(chosen, neighbours))))
            outlines.append(RegionOutline(region=r, area=int(region_map.region_area[r]), rings=chosen,
                                          ring_neighbors=neighbours))
    return _drop_small_islands(outlines, params.region_min_area)


def _split_long_wall_edges(ring: np.ndarray, nb: np.ndarray, max_len: float):
    """(ring, neighbours) with every wall edge (nb < 0) longer than max_len (seen from above; 0: no
    limit) cut into equal pieces by points on it (Recast's maxEdgeLen). Shared edges are left
    whole: the region across must see the same points."""
    if max_len <= 0:
        return ring, nb
    lengths = np.hypot(*(np.roll(ring[:, :2], -1, axis=0) - ring[:, :2]).T)
    pieces = np.where(nb < 0, np.ceil(lengths / max_len), 1).astype(np.int64)
    if (pieces == 1).all():
        return ring, nb
    start = np.repeat(np.arange(len(ring)), pieces)
    step = np.arange(len(start)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    t = (step / np.repeat(pieces, pieces))[:, None]
    split = ring[start] * (1 - t) + np.roll(ring, -1, axis=0)[start] * t
    return split, nb[start]


def _outline_pieces(rings: list[tuple[np.ndarray, np.ndarray]], tolerance: float, boundary: FloorBoundary | None,
                    whole: frozenset | set = frozenset()) -> list[list[tuple]]:
    """Per traced ring (points, labels), its (traced points, traced labels, simplified or None)
    pieces: the ring itself, or when it does not simplify into a simple ring, the loops it splits
    into where it touches or crosses itself. Shared points in `whole` are all kept. The rings are
    simplified together, then the loops of all the rings that split."""
    simple = _simplify(rings, tolerance, whole, boundary)
    out: list[list[tuple]] = []
    loops = []
    for (points, labels), ring_simple in zip(rings, simple):
        if ring_simple is not None and not _touches_itself(ring_simple[0]):
            out.append([(points, labels, ring_simple)])
            continue
        out.append([])
        loops += [(len(out) - 1, piece) for touching in _split_at_touches(*_dedupe(points, labels))
                  for piece in _split_at_crossings(*touching)]
    for (k, piece), loop_simple in zip(loops, _simplify([piece for _, piece in loops], tolerance, whole, boundary)):
        out[k].append((*piece, loop_simple))
    return out


def _batches(sizes: list[int]):
    """(first, last) index ranges over rings of these point counts, about _BATCH_POINTS points each:
    rings simplified together (one boundary measurement per generation), with progress between."""
    first, total = 0, 0
    for k, size in enumerate(sizes):
        total += size
        if total >= _BATCH_POINTS:
            yield first, k + 1
            first, total = k + 1, 0
    if first < len(sizes):
        yield first, len(sizes)


def _finer(points: np.ndarray, labels: np.ndarray, tolerance: float, whole, boundary: FloorBoundary | None):
    """Callables giving the ring simplified with the tolerance divided by each of _FINER_STEPS (None
    if it degenerates): the fallbacks when the simplified ring cannot be pushed off the walls
    without crossing another ring. Shared borders come out the same at every tolerance."""
    return [lambda f=f: _simplify([(points, labels)], tolerance / f, whole, boundary)[0] for f in _FINER_STEPS]


def _area_border_corners(traced_rings: list[tuple], region_area: np.ndarray, tolerance: float) -> set[tuple[float, float]]:
    """Top-view positions of the points kept on borders between regions of different area ids:
    each such run of a traced ring simplified with symmetric Ramer-Douglas-Peucker to the tolerance.

    A run is walked from its lexicographically smaller end, so the ring on the other side, which
    holds the same points in the opposite order, keeps the same ones. Rings shared whole with one
    region keep all their corners already (_simplify) and are skipped.
    """
    kept: set[tuple[float, float]] = set()
    for r, points, labels in traced_rings:
        shared = labels >= 0
        if shared.all() and (labels == labels[0]).all():
            continue
        across = np.where(shared, region_area[np.maximum(labels, 0)], -1)
        run_start = np.flatnonzero(shared & (across != region_area[r]) & (labels != np.roll(labels, 1)))
        for start in run_start:
            around = _section(start, start, len(labels))[:-1]
            run = around[: int(np.argmax(labels[around] != labels[start])) or len(around)]
            if tuple(points[run[-1], :2]) < tuple(points[run[0], :2]):
                run = run[::-1]
            corners = run[_rdp([points[run]], tolerance, outside_share=1.0)[0]]
            kept.update(map(tuple, points[corners, :2].tolist()))
    return kept


def _shared_keys(points: np.ndarray, labels: np.ndarray) -> set[tuple[float, float]]:
    """The top-view positions of a ring's points on borders shared with other regions (both
    sides compute them bitwise equal)."""
    return set(map(tuple, points[labels >= 0, :2].tolist()))


def _drop_small_islands(outlines: list[RegionOutline], min_area: float) -> list[RegionOutline]:
    """Drop islands (outlines joined by shared borders) whose outlines cover less than min_area.

    The region stage already dropped islands of too few cells; placed at sub-cell precision an
    island's outline can be smaller than its cells, and what the user sees is the outline. A region
    may hold several outlines, so outlines are joined by the bitwise-identical vertices of their
    shared borders, not by region id.
    """
    parent = list(range(len(outlines)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[float, float], int] = {}
    for i, outline in enumerate(outlines):
        for ring, nb in zip(outline.rings, outline.ring_neighbors):
            shared = np.flatnonzero(nb >= 0)
            ends = np.unique(np.concatenate([shared, (shared + 1) % len(ring)]))
            for key in map(tuple, ring[ends, :2].tolist()):
                j = owner.setdefault(key, i)
                parent[find(j)] = find(i)
    island_area = np.zeros(len(outlines))
    for i, outline in enumerate(outlines):
        island_area[find(i)] += sum(_signed_area(ring) for ring in outline.rings)
    return [o for i, o in enumerate(outlines) if island_area[find(i)] >= min_area]


@dataclass
class _Edges:
    """Boundary cell edges: span (E,) and direction (E,); `index` maps span*4+dir -> edge or -1."""

    span: np.ndarray
    dir: np.ndarray
    index: np.ndarray


def _boundary_edges(hf: Heightfield, region: np.ndarray) -> _Edges:
    links = hf.links
    nreg = np.where(links >= 0, region[np.maximum(links, 0)], -1)
    boundary = (region[:, None] >= 0) & (nreg != region[:, None])
    span, d = np.nonzero(boundary)
    index = np.full(hf.span_count * 4, -1, dtype=np.int64)
    index[span * 4 + d] = np.arange(len(span))
    return _Edges(span.astype(np.int64), d.astype(np.int64), index)


def _edge_points(hf: Heightfield, region_map: RegionMap, params: BakeParams, edges: _Edges):
    """(E, 3) point and (E,) neighbour region (-1 for wall/ledge) of every boundary edge."""
    cs, radius = hf.cell_size, params.agent_radius
    dist, region = region_map.distance, region_map.region
    a, d = edges.span, edges.dir
    b = hf.links[a, d]
    has_b = b >= 0
    bs = np.maximum(b, 0)
    centre = hf.centers_xy()
    step = np.stack([DIR_DX[d], DIR_DY[d]], axis=1) * cs
    nreg = np.where(has_b, region[bs], -1)
    shared = nreg >= 0
    da = dist[a]
    db = np.where(has_b, dist[bs], da - cs)
    za = hf.z[a]
    zb = np.where(has_b, hf.z[bs], za)
    with np.errstate(divide="ignore", invalid="ignore"):  # inf - inf deep inside; those are shared edges
        drop = da - db
        t = np.where((drop > 0) & (db <= radius + ON_RADIUS * cs), (da - radius) / drop, 0.5)
    # Where the erosion does not reach a missing link, the floor ends where the link is blocked.
    t = np.where(has_b | (db <= radius + ON_RADIUS * cs), t, hf.block_fraction()[a, d])
    # Where the region also holds a span of the column across (another storey of it), the
    # outline there stays in this column, a hair short of its edge: the two storeys' outlines
    # would overlap, or meet at points of the same place and different heights.
    t = np.clip(t, 0.0, np.where(_region_in_column_across(hf, region, a, d), 0.5 - _STOREY_GAP, 1.0))
    xy = centre[a] + t[:, None] * step
    z = za + t * (zb - za)
    # Between regions: the symmetric midpoint, bitwise equal from either side.
    xy[shared] = (centre[a[shared]] + centre[bs[shared]]) * 0.5
    z[shared] = (za[shared] + zb[shared]) * 0.5
    return np.column_stack([xy, z]), nreg


def _region_in_column_across(hf: Heightfield, region: np.ndarray, a: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Per edge (span a, direction d): does the column across hold a span of a's region?"""
    columns = hf.width * hf.height
    held = region >= 0
    keys = np.unique(region[held] * columns + (hf.y[held].astype(np.int64) * hf.width + hf.x[held]))
    nx, ny = hf.x[a] + DIR_DX[d], hf.y[a] + DIR_DY[d]
    inside = (nx >= 0) & (nx < hf.width) & (ny >= 0) & (ny < hf.height)
    query = region[a] * columns + (ny.astype(np.int64) * hf.width + nx)
    at = np.minimum(np.searchsorted(keys, query), max(len(keys) - 1, 0))
    return inside & (len(keys) > 0) & (keys[at] == query)


def _square_corners(centre: np.ndarray, edges: _Edges, ring: np.ndarray, points: np.ndarray, labels: np.ndarray):
    """Ring points with the sharp corner restored where two straight walls meet in one cell.

    centre: (S, 3) column centre and floor height of every span.

    Marching squares cuts such a corner by a chamfer; the offset of a convex floor corner is sharp,
    at centre + (p1 - centre) + (p2 - centre). Only where both walls run straight into the corner,
    so staircases of slanted walls are left alone.
    """
    span, d = edges.span[ring], edges.dir[ring]
    nxt = np.roll(np.arange(len(ring)), -1)
    left_turn = (span[nxt] == span) & (d[nxt] == (d + 1) % 4)
    straight_in = np.roll(d, 1) == d
    straight_out = d[np.roll(nxt, -1)] == d[nxt]
    lab = labels[ring]
    walls = (lab < 0) & (lab[nxt] < 0) & (np.roll(lab, 1) < 0) & (lab[np.roll(nxt, -1)] < 0)
    at = np.flatnonzero(left_turn & straight_in & straight_out & walls)
    pts = points[ring]
    if len(at) == 0:
        return pts, lab
    corner = pts[at] + pts[nxt[at]] - centre[span[at]]
    order = np.argsort(np.concatenate([np.arange(len(ring)), at + 0.5]), kind="stable")
    return np.concatenate([pts, corner])[order], np.concatenate([lab, np.full(len(at), -1)])[order]


def _successors(hf: Heightfield, edges: _Edges) -> np.ndarray:
    """Next boundary edge walking with the region on the left (Recast's walkContour, vectorised).

    From edge (s, d) turn left to (s, d+1); while that is not a boundary, step across it and turn
    right. Around one grid corner this resolves within four steps; -1 where the links are too
    irregular for that.
    """
    links = hf.links
    s = edges.span.copy()
    d = (edges.dir + 1) % 4
    nxt = np.full(len(s), -1, dtype=np.int64)
    pending = np.arange(len(s))
    for _ in range(4):
        e = edges.index[s[pending] * 4 + d[pending]]
        done = e >= 0
        nxt[pending[done]] = e[done]
        pending = pending[~done]
        if len(pending) == 0:
            break
        s[pending] = links[s[pending], d[pending]]
        d[pending] = (d[pending] + 3) % 4
    return nxt


def _cycles(successor: np.ndarray):
    """Yield each closed cycle of the successor map as an array of edge ids (open chains are skipped)."""
    seen = np.zeros(len(successor), dtype=bool)
    nxt = successor.tolist()
    for start in range(len(nxt)):
        if seen[start]:
            continue
        ring = []
        e = start
        while e >= 0 and not seen[e]:
            seen[e] = True
            ring.append(e)
            e = nxt[e]
        if e == start:
            yield np.array(ring, dtype=np.int64)


def _simplify(rings: list[tuple[np.ndarray, np.ndarray]], tolerance: float, whole: frozenset | set = frozenset(),
              boundary: FloorBoundary | None = None) -> list[tuple | None]:
    """Per ring (points, labels): simplified (ring points, per-edge neighbour, per-point shared
    flag), or None if the ring degenerates.

    The shared flag is True for points on borders shared with other regions (they never move).
    Shared runs keep only their end points (a ring shared whole with one region keeps its corners),
    and every shared point whose top-view position is in `whole` (the corners of borders between
    area ids, and borders that must stay whole);
    wall points next to a shared run stay; wall runs between kept points are reduced with
    Ramer-Douglas-Peucker. If that makes the ring cross itself, dropped points come back on the
    crossing edges; if that fails, or the ring lost half its area, the tolerance is halved and tried
    again, and only when every try fails is every wall point kept.
    A ring still not simple after that (zero-width pinches) is dropped.
    The rings are reduced together, each try of the rings still left in one.
    """
    prepared = []
    for points, labels in rings:
        points, labels = _dedupe(points, labels)
        prepared.append(_kept_points(points, labels, whole))
    chosen: list[np.ndarray | None] = [None] * len(rings)
    pending = [k for k, ring in enumerate(prepared) if ring is not None]
    # Rings smaller than the tolerance (a pillar's hole) collapse under it: retry finer before
    # falling back to every traced point, which would cost many polygons.
    for halvings in range(_TOLERANCE_HALVINGS):
        if not pending:
            break
        reduced = _reduce([prepared[k][:3] for k in pending], tolerance / 2**halvings, boundary)
        left = []
        for k, (idx, simple) in zip(pending, reduced):
            points, full = prepared[k][0], prepared[k][3]
            if len(idx) >= 3 and simple and abs(_signed_area(points[idx])) >= 0.5 * abs(_signed_area(points[full])):
                chosen[k] = idx
            else:
                left.append(k)
        pending = left
    return [None if ring is None else _simplified(ring[0], ring[1], ring[3] if idx is None else idx, idx is None)
            for ring, idx in zip(prepared, chosen)]


def _kept_points(points: np.ndarray, labels: np.ndarray, whole: frozenset | set):
    """(points, labels, keep, full) for _simplify, or None if the ring has under 3 points: keep marks
    the points every simplification keeps, full the indices of every traced point but shared
    points that may go."""
    n = len(points)
    if n < 3:
        return None
    prev_l, next_l = np.roll(labels, 1), np.roll(labels, -1)
    shared = labels >= 0
    if shared.all() and (labels == labels[0]).all():
        keep = ~_collinear(points)
        traced = keep.copy()
    else:
        # Shared run ends, and the wall points next to them so the wall keeps its place up to the border.
        keep = (shared & ((labels != prev_l) | (labels != next_l))) | (~shared & ((prev_l >= 0) | (next_l >= 0)))
        if not keep.any():
            # Anchor a wall-only ring at two extreme points, which every simplification keeps:
            # the farthest from its centroid, then the farthest from that.
            first = int(np.argmax(np.hypot(*(points[:, :2] - points[:, :2].mean(axis=0)).T)))
            keep[first] = True
            keep[int(np.argmax(np.hypot(*(points[:, :2] - points[first, :2]).T)))] = True
        traced = keep | ~shared
    if whole:
        forced = shared & np.array([key in whole for key in map(tuple, points[:, :2].tolist())], dtype=bool)
        keep |= forced
        traced |= forced
    return points, labels, keep, np.flatnonzero(traced)


def _simplified(points: np.ndarray, labels: np.ndarray, idx: np.ndarray, fallback: bool):
    """(points, per-edge neighbour, per-point shared flag) of the ring kept at indices idx, or None
    when the fallback to every traced point is not a simple ring."""
    n = len(points)
    if fallback and (len(idx) < 3 or _crossing_edges(points[idx, :2]).size):
        return None  # only rings that pinch to zero width stay non-simple; they hold no area
    nb = np.full(len(idx), -1, dtype=np.int64)
    for k, (a, b) in enumerate(zip(idx, np.roll(idx, -1))):
        span = _section(a, b, n)
        if _is_shared_run(labels, span):
            nb[k] = labels[a]
    return points[idx], nb, labels[idx] >= 0


def _reduce(rings: list[tuple[np.ndarray, np.ndarray, np.ndarray]], tolerance: float,
            boundary: FloorBoundary | None = None) -> list[tuple[np.ndarray, bool]]:
    """Per ring (points, labels, keep): RDP over the wall runs between the kept points (of all the
    rings at once), then repair crossings: (kept indices, simple)."""
    keeps = [keep.copy() for _, _, keep in rings]
    runs = []
    for k, (points, labels, keep) in enumerate(rings):
        kept = np.flatnonzero(keep)
        for a, b in zip(kept, np.roll(kept, -1)):
            span = _section(a, b, len(points))
            if not _is_shared_run(labels, span):
                runs.append((k, span))
    for (k, span), run_kept in zip(runs, _rdp([rings[k][0][span] for k, span in runs], tolerance, boundary)):
        keeps[k][span[run_kept]] = True
    return [_repair_crossings(points, labels, keep) for (points, labels, _), keep in zip(rings, keeps)]


def _repair_crossings(points: np.ndarray, labels: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, bool]:
    """(kept indices, simple): where edges between kept points cross, the traced point farthest
    from each crossing edge comes back, for up to _REPAIR_PASSES passes."""
    n = len(points)
    simple = False
    for _ in range(_REPAIR_PASSES):
        idx = np.flatnonzero(keep)
        bad = _crossing_edges(points[idx, :2])
        simple = not bad.size
        if simple:
            break
        for k in bad:
            a, b = idx[k], idx[(k + 1) % len(idx)]
            span = _section(a, b, n)
            if len(span) > 2 and not _is_shared_run(labels, span):
                inner = span[1:-1]
                dev = segment_distances(points[inner, :2], points[a, :2], points[b, :2])
                keep[inner[int(np.argmax(dev))]] = True
    return np.flatnonzero(keep), simple


def _dedupe(points: np.ndarray, labels: np.ndarray):
    """Drop points equal in xy to their predecessor (a cell centre exactly at agent_radius, or two
    stacked floors meeting in top view), keeping the one that borders a region if either does."""
    drop = np.zeros(len(points), dtype=bool)
    for i in np.flatnonzero((points[:, :2] == np.roll(points[:, :2], 1, axis=0)).all(axis=1)):
        drop[i if labels[i] < 0 or labels[i - 1] >= 0 else i - 1] = True
    if drop.all():
        drop[0] = False
    return points[~drop], labels[~drop]


def _split_at_touches(points: np.ndarray, labels: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split a ring that visits a point twice (to 1e-9 m) into loops that do not touch themselves.

    A region whose parts meet at a corner or along a line the erosion did not open traces one ring
    through the meeting points; split there, it becomes simple outer rings and holes, instead of a
    non-simple ring that would lose the whole region. Zero-area loops (slits) come out as slivers.
    """
    pieces, pending = [], [(points, labels)]
    while pending:
        p, lab = pending.pop()
        seen: dict[tuple[float, float], int] = {}
        touch = None
        for i, key in enumerate(map(tuple, np.round(p[:, :2], 9).tolist())):
            if key in seen:
                touch = (seen[key], i)
                break
            seen[key] = i
        if touch is None:
            pieces.append((p, lab))
            continue
        i, j = touch
        pending.append((p[i:j], lab[i:j]))
        pending.append((np.concatenate([p[:i], p[j:]]), np.concatenate([lab[:i], lab[j:]])))
    return [(p, lab) for p, lab in pieces if len(p) >= 3]


def _touches_itself(ring: np.ndarray) -> bool:
    """Whether the ring visits one point twice (to 1e-9 m, as _split_at_touches splits)."""
    return len(np.unique(np.round(ring[:, :2], 9), axis=0)) < len(ring)


def _split_at_crossings(points: np.ndarray, labels: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split a ring whose edges cross (two cells meeting only at a corner, where the squared-off
    corner points of the two passes overlap) at each crossing into loops that do not, both
    through the crossing point. Overlapping straight edges, which have no single crossing point,
    are left as they are."""
    pieces: list[tuple[np.ndarray, np.ndarray]] = []
    pending = [(points, labels)]
    while pending:
        p, lab = pending.pop()
        first, second = _crossing_pairs(p[:, :2])
        at = _segment_intersection(p, int(first[0]), int(second[0])) if len(first) else None
        if at is None or len(pieces) + len(pending) >= _MAX_PIECES:
            pieces.append((p, lab))
            continue
        i, j = int(first[0]), int(second[0])
        wall = np.array([-1], dtype=labels.dtype)
        pending.append((np.vstack([at, p[i + 1 : j + 1]]), np.concatenate([wall, lab[i + 1 : j + 1]])))
        pending.append((np.vstack([at, p[j + 1 :], p[: i + 1]]), np.concatenate([wall, lab[j + 1 :], lab[: i + 1]])))
    return [(p, lab) for p, lab in pieces if len(p) >= 3]


# Traced points of the rings simplified together (bounds the time between progress reports).
_BATCH_POINTS = 20_000
# A ring is split at most into this many loops.
_MAX_PIECES = 64


def _segment_intersection(p: np.ndarray, i: int, j: int) -> np.ndarray | None:
    """The point (3,) where ring edges i and j cross, height taken along edge i; None if parallel."""
    n = len(p)
    a, b, c, d = p[i], p[(i + 1) % n], p[j], p[(j + 1) % n]
    u, v, w = b[:2] - a[:2], d[:2] - c[:2], c[:2] - a[:2]
    den = u[0] * v[1] - u[1] * v[0]
    if abs(den) <= _STRAIGHT * float(np.hypot(*u) * np.hypot(*v)):
        return None
    t = float(np.clip((w[0] * v[1] - w[1] * v[0]) / den, 0.0, 1.0))
    return a + t * (b - a)


def _hole_inside(outer: np.ndarray, hole: np.ndarray) -> bool:
    """Whether a hole lies inside an outer ring, judged at a hole point that is not on the outer
    ring: a loop split off where the ring pinched starts at the pinch point, which is on both."""
    if _boxes_apart(outer, hole):
        return False
    on_outer = {tuple(q) for q in np.round(outer[:, :2], 9).tolist()}
    for point in hole:
        if tuple(np.round(point[:2], 9).tolist()) not in on_outer:
            return _contains(outer, point)
    return _contains(outer, 0.5 * (hole[0] + hole[1]))


def _contains(ring: np.ndarray, point: np.ndarray) -> bool:
    """Even-odd test: whether the xy of point lies inside the ring (top view)."""
    x, y = float(point[0]), float(point[1])
    a, b = ring[:, :2], np.roll(ring[:, :2], -1, axis=0)
    straddles = (a[:, 1] > y) != (b[:, 1] > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        cross_x = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
    return bool(np.count_nonzero(straddles & (x < cross_x)) % 2)


def _section(a: int, b: int, n: int) -> np.ndarray:
    """Ring indices from a to b inclusive, going forward (the whole ring and back to a if a == b)."""
    return np.arange(a, a + (b - a - 1) % n + 2) % n


def _is_shared_run(labels: np.ndarray, span: np.ndarray) -> bool:
    """The whole section a..b (inclusive) borders one other region."""
    lab = labels[span]
    return bool(lab[0] >= 0 and (lab == lab[0]).all())


def _collinear(points: np.ndarray) -> np.ndarray:
    p, q, r = np.roll(points[:, :2], 1, axis=0), points[:, :2], np.roll(points[:, :2], -1, axis=0)
    cross = (q[:, 0] - p[:, 0]) * (r[:, 1] - q[:, 1]) - (q[:, 1] - p[:, 1]) * (r[:, 0] - q[:, 0])
    return np.abs(cross) <= 1e-12 * (1.0 + np.abs(points[:, :2]).max())


def _rdp(runs: list[np.ndarray], tolerance: float, boundary: FloorBoundary | None = None,
         outside_share: float = _OUTSIDE_SHARE) -> list[np.ndarray]:
    """Per run of points (n, 3), the indices kept by one-sided Ramer-Douglas-Peucker (the two ends
    always): points may lie `tolerance` left of a chord (the walkable side of a ring edge),
    `outside_share` of it right of it (1: symmetric, for borders between regions). With a boundary,
    a chord that comes closer to it than agent_radius by more than _MAX_PUSH_OPEN * tolerance (a
    chord across an arc of the eroded boundary), or by more than _MAX_PUSH * tolerance in front of
    a passage, is split as well, so the later push onto the walkable side stays short.
    Chords of all the runs are split a generation at a time, so the boundary is measured for a
    whole generation in one vectorised call, not once per run."""
    if not runs:
        return []
    points = np.concatenate(runs)
    p = points[:, :2]
    ends = np.cumsum([len(run) for run in runs])
    starts = ends - np.array([len(run) for run in runs])
    keep = np.zeros(len(p), dtype=bool)
    keep[starts] = keep[ends - 1] = True
    chords = [(a, b - 1) for a, b in zip(starts.tolist(), ends.tolist()) if b - a > 2]
    while chords:
        farthest, close = [], []
        for a, b in chords:
            inner = p[a + 1 : b]
            ab = p[b] - p[a]
            right = ab[0] * (inner[:, 1] - p[a, 1]) - ab[1] * (inner[:, 0] - p[a, 0]) < 0
            dev = segment_distances(inner, p[a], p[b])
            dev = np.where(right, dev / outside_share, dev)
            k = int(np.argmax(dev))
            farthest.append(a + 1 + k)
            close.append(bool(dev[k] <= tolerance))
        split = ~np.array(close)
        if boundary is not None and any(close):
            chord_ends = np.array(chords)[close]
            a, b = p[chord_ends[:, 0]], p[chord_ends[:, 1]]
            za, zb = points[chord_ends[:, 0], 2], points[chord_ends[:, 1], 2]
            push = boundary.radius - boundary.distance(a, b, za, zb)[0]
            cut = push > _MAX_PUSH_OPEN * tolerance
            doubt = np.flatnonzero(~cut & (push > _MAX_PUSH * tolerance))
            if doubt.size:
                cut[doubt] = boundary.faces_passage(a[doubt], b[doubt], za[doubt], zb[doubt], _PASSAGE_REACH)
            split[np.flatnonzero(close)] = cut
        next_chords = []
        for (a, b), m, cut in zip(chords, farthest, split.tolist()):
            if cut:
                keep[m] = True
                next_chords += [(c, d) for c, d in ((a, m), (m, b)) if d - c >= 2]
        chords = next_chords
    return [np.flatnonzero(keep[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]


def _crossing_edges(p: np.ndarray) -> np.ndarray:
    """Indices of ring edges (i -> i+1) that cross or touch a non-adjacent edge, or fold back
    onto the next edge (a zero-width spike), with straightness judged to float noise."""
    n = len(p)
    if n < 3:
        return np.zeros(0, dtype=np.int64)
    edge = np.roll(p, -1, axis=0) - p
    after = np.roll(edge, -1, axis=0)
    turn = edge[:, 0] * after[:, 1] - edge[:, 1] * after[:, 0]
    scale = np.hypot(*edge.T) * np.hypot(*after.T)
    folds = np.flatnonzero((np.abs(turn) <= _STRAIGHT * scale) & (np.einsum("ij,ij->i", edge, after) < 0))
    i, j = _crossing_pairs(p)
    return np.unique(np.concatenate([i, j, folds, (folds + 1) % n]))


def _crossing_pairs(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i, j), i < j, sorted: the pairs of non-adjacent ring edges that cross or touch, with
    straightness judged to float noise."""
    n = len(p)
    if n < 4:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    a, b = p[:, :2], np.roll(p[:, :2], -1, axis=0)
    i, j = _overlapping_boxes(np.minimum(a, b), np.maximum(a, b))
    i, j = np.minimum(i, j), np.maximum(i, j)
    apart = (j - i > 1) & (j - i != n - 1)
    i, j = i[apart], j[apart]

    def orient(o, u, v):
        cross = (u[:, 0] - o[:, 0]) * (v[:, 1] - o[:, 1]) - (u[:, 1] - o[:, 1]) * (v[:, 0] - o[:, 0])
        size = np.hypot(*(u - o).T) * np.hypot(*(v - o).T)
        return np.where(np.abs(cross) <= _STRAIGHT * size, 0.0, np.sign(cross))

    o1, o2 = orient(a[i], b[i], a[j]), orient(a[i], b[i], b[j])
    o3, o4 = orient(a[j], b[j], a[i]), orient(a[j], b[j], b[i])
    # Collinear, non-overlapping pairs pass the sign test too; the boxes of the pairs overlap.
    hit = np.flatnonzero((o1 * o2 <= 0) & (o3 * o4 <= 0))
    hit = hit[np.lexsort((j[hit], i[hit]))]  # in ring order, as callers split at the first
    return i[hit], j[hit]


def _overlapping_boxes(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i, j): every pair of boxes (lo, hi: (N, 2)) that overlap or touch, each pair once. A sweep
    along x: each box meets only the boxes that start before it ends, not all N² pairs."""
    order = np.argsort(lo[:, 0], kind="stable")
    start = lo[order, 0]
    count = np.searchsorted(start, hi[order, 0], side="right") - np.arange(1, len(order) + 1)
    count = np.maximum(count, 0)
    first = np.repeat(np.arange(len(order)), count)
    second = first + 1 + (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count))
    i, j = order[first], order[second]
    keep = (lo[i, 1] <= hi[j, 1]) & (lo[j, 1] <= hi[i, 1])
    return i[keep], j[keep]


def _signed_area(p: np.ndarray) -> float:
    x, y = p[:, 0], p[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


# Rings farther than this many tolerances from a traced hole cannot meet its fewer-corner outline.
_HOLE_REACH = 2.0
# Hole hull edges considered as sides of a fewer-corner hole outline (the longest ones), and the
# most corners such an outline may have: both bound the combinations tried.
_HOLE_SIDE_CANDIDATES = 12
_HOLE_MAX_CORNERS = 5
_HOLE_SIFT_POINTS = 24


def _enclosing_hole(traced: np.ndarray, corners: int, tolerance: float, others: list[np.ndarray]) -> np.ndarray | None:
    """A wall-only hole (clockwise, traced points (n, 3)) as a convex outline with fewer than
    `corners` vertices that encloses every traced point, stays within `tolerance` of the traced
    outline both ways and keeps clear of the region's other rings; None if there is none.

    Every hole corner is a notch of the region around it and costs polygons, so a pillar is better
    a triangle than a square when the tolerance allows. Enclosing keeps the obstacle out of the
    navmesh; sides lie on hull edges of the traced points, so only corners stick out.
    """
    xy = traced[:, :2]
    hull = xy[convex_hull(xy)]
    if len(hull) < 3 or corners <= 3:
        return None
    side = np.roll(hull, -1, axis=0) - hull
    length = np.hypot(side[:, 0], side[:, 1])
    sides = np.sort(np.argsort(-length)[:_HOLE_SIDE_CANDIDATES])
    normal = np.stack([side[sides, 1], -side[sides, 0]], axis=1) / length[sides, None]
    offset = np.einsum("ij,ij->i", normal, hull[sides])
    # Inside a convex outline a point's distance to it is the least distance to a side's line; a
    # few dozen traced points sift the combinations, all of them confirm the survivors.
    depth = offset[:, None] - normal @ xy.T  # (sides, points), >= 0: every side supports the hull
    sample = depth[:, np.linspace(0, len(xy) - 1, min(len(xy), _HOLE_SIFT_POINTS)).astype(np.int64)]
    a, b = xy, np.roll(xy, -1, axis=0)
    for k in range(3, min(corners, _HOLE_MAX_CORNERS + 1)):
        combos = _combinations(len(sides), k)
        n1, n2 = normal[combos], normal[np.roll(combos, -1, axis=1)]
        c1, c2 = offset[combos], offset[np.roll(combos, -1, axis=1)]
        det = n1[..., 0] * n2[..., 1] - n1[..., 1] * n2[..., 0]
        ok = (det > 1e-9).all(axis=1)  # every turn between consecutive sides is under pi: bounded
        ok[ok] &= sample[combos[ok]].min(axis=1).max(axis=1) <= tolerance
        ok[ok] &= depth[combos[ok]].min(axis=1).max(axis=1) <= tolerance
        if not ok.any():
            continue
        combos, n1, n2, c1, c2, det = combos[ok], n1[ok], n2[ok], c1[ok], c2[ok], det[ok]
        corner = np.stack([(c1 * n2[..., 1] - c2 * n1[..., 1]) / det, (n1[..., 0] * c2 - n2[..., 0] * c1) / det], axis=-1)
        reach = _point_segment_distances(corner.reshape(-1, 2), a, b).min(axis=1).reshape(len(combos), k)
        fits = np.flatnonzero(reach.max(axis=1) <= tolerance)
        start, end = corner[fits], np.roll(corner[fits], -1, axis=1)
        area = 0.5 * np.abs(np.sum(start[..., 0] * end[..., 1] - end[..., 0] * start[..., 1], axis=1))
        for best in fits[np.argsort(area)]:
            nearest = _point_segment_distances(corner[best], xy, xy).argmin(axis=1)
            ring = np.column_stack([corner[best], traced[nearest, 2]])[::-1]
            if _fits_among(ring, others):
                return ring
    return None


@lru_cache(maxsize=None)
def _combinations(n: int, k: int) -> np.ndarray:
    """(C(n, k), k) index combinations in lexicographic order."""
    return np.array(list(combinations(range(n), k)), dtype=np.int64).reshape(-1, k)


def _point_segment_distances(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(P, S) 2D distances of points p (P, 2) to segments a-b (S, 2)."""
    ab = b - a
    den = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-300)
    rel = p[:, None, :] - a[None, :, :]
    t = np.clip(np.einsum("psk,sk->ps", rel, ab) / den, 0.0, 1.0)
    closest = a[None] + t[..., None] * ab[None]
    return np.hypot(*(p[:, None, :] - closest).transpose(2, 0, 1))


def _boxes_apart(ring: np.ndarray, other: np.ndarray) -> bool:
    """Whether two rings' top-view bounding boxes do not even touch (so their edges cannot meet)."""
    lo1, hi1 = ring[:, :2].min(axis=0), ring[:, :2].max(axis=0)
    lo2, hi2 = other[:, :2].min(axis=0), other[:, :2].max(axis=0)
    return bool((lo1 > hi2).any() or (lo2 > hi1).any())


def _crossing_rings(ring: np.ndarray, other: np.ndarray) -> bool:
    """Whether an edge of ring meets an edge of other."""
    if _boxes_apart(ring, other):
        return False
    a, b = ring[:, :2], np.roll(ring[:, :2], -1, axis=0)
    c, d = other[:, :2], np.roll(other[:, :2], -1, axis=0)
    return bool(_segments_meet(a, b, c, d).any())


def _box(ring: np.ndarray) -> np.ndarray:
    """Top-view bounding box (min x, min y, max x, max y)."""
    return np.concatenate([ring[:, :2].min(axis=0), ring[:, :2].max(axis=0)])


class _RingBoxes:
    """A region's rings with their bounding boxes, kept as rings are replaced, so finding the rings
    near one costs a comparison per ring instead of measuring every ring again."""

    def __init__(self, rings: list[np.ndarray]):
        self.rings = list(rings)
        self.boxes = np.array([_box(ring) for ring in rings]).reshape(-1, 4)

    def replace(self, k: int, ring: np.ndarray) -> None:
        self.rings[k], self.boxes[k] = ring, _box(ring)

    def near(self, ring: np.ndarray, skip: int, margin: float = 0.0) -> list[np.ndarray]:
        """The rings but number `skip` whose boxes touch the ring's, widened by margin."""
        box = _box(ring)
        touch = np.all(self.boxes[:, :2] <= box[2:] + margin, axis=1) & np.all(self.boxes[:, 2:] >= box[:2] - margin, axis=1)
        return [self.rings[k] for k in np.flatnonzero(touch) if k != skip]


def _near(ring: np.ndarray, others: list[np.ndarray]) -> list[np.ndarray]:
    """The other rings whose top-view bounding boxes touch the ring's (all at once)."""
    if not others:
        return []
    boxes = np.array([np.concatenate([o[:, :2].min(axis=0), o[:, :2].max(axis=0)]) for o in others])
    lo, hi = ring[:, :2].min(axis=0), ring[:, :2].max(axis=0)
    touch = np.all(boxes[:, :2] <= hi, axis=1) & np.all(boxes[:, 2:] >= lo, axis=1)
    return [others[k] for k in np.flatnonzero(touch)]


def _fits_among(ring: np.ndarray, others: list[np.ndarray]) -> bool:
    """The ring neither meets any other ring's edges nor encloses another ring."""
    a, b = ring[:, :2], np.roll(ring[:, :2], -1, axis=0)
    for other in _near(ring, others):  # rings whose boxes are apart neither meet nor enclose
        c, d = other[:, :2], np.roll(other[:, :2], -1, axis=0)
        if _segments_meet(a, b, c, d).any() or _contains(ring, other[0]):
            return False
    return True


def _segments_meet(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(A, C): does segment a_i-b_i meet segment c_j-d_j (crossing or touching)?"""
    def orient(o, u, v):
        return np.sign((u[..., 0] - o[..., 0]) * (v[..., 1] - o[..., 1]) - (u[..., 1] - o[..., 1]) * (v[..., 0] - o[..., 0]))

    A, B, C, D = a[:, None], b[:, None], c[None], d[None]
    hit = (orient(A, B, C) * orient(A, B, D) <= 0) & (orient(C, D, A) * orient(C, D, B) <= 0)
    lo1, hi1 = np.minimum(A, B), np.maximum(A, B)
    lo2, hi2 = np.minimum(C, D), np.maximum(C, D)
    return hit & (lo1 <= hi2).all(axis=-1) & (lo2 <= hi1).all(axis=-1)


def _push_rings(options: list[list[tuple]], boundary: FloorBoundary, progress: Progress = SILENT):
    """A region's (rings, neighbours): per ring the first of its options (points, neighbours,
    shared flags, or a callable giving them or None) whose wall edges, pushed off the boundary
    (_push_off_walls), clear the boundary and cross neither the ring itself (after _untangle) nor
    the rings chosen so far; if none does, the finest option unpushed (or the first, when even that
    crosses)."""
    out = _RingBoxes([ring_options[0][0] for ring_options in options])
    out_nb = [ring_options[0][1] for ring_options in options]
    for k, ring_options in enumerate(options):
        progress.at(k / len(options))

        def fits(ring: np.ndarray) -> bool:
            if _crossing_edges(ring[:, :2]).size:
                return False
            others = out.near(ring, skip=k)
            return _fits_among(ring, others) if k else not any(_crossing_rings(ring, other) for other in others)

        finest = None
        for option in ring_options:
            option = option() if callable(option) else option
            if option is None:
                continue
            ring, nb, fixed = option
            finest = ring, nb
            pushed, pushed_nb, cleared = _push_off_walls(ring, nb, fixed, boundary)
            if cleared and not fits(pushed):
                pushed, pushed_nb = _untangle(pushed, pushed_nb)
            if cleared and len(pushed) and fits(pushed):
                out.replace(k, pushed)
                out_nb[k] = pushed_nb
                break
        else:
            # Nothing pushes clear (the ring pinches against another): the finest outline, which
            # follows the eroded boundary closest, unpushed.
            if finest is not None and fits(finest[0]):
                out.replace(k, finest[0])
                out_nb[k] = finest[1]
    return out.rings, out_nb


def _untangle(ring: np.ndarray, nb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A pushed ring with the loops cut off where its wall edges cross: the two sides of a pocket
    narrower than the push pass each other and leave a loop turning the other way, which is floor
    given up. Empty when edges of a shared border cross, or the ring splits into several loops
    turning its way (a pinch, not a pocket)."""
    none = (ring[:0], nb[:0])
    i, j = _crossing_pairs(ring[:, :2])
    if len(i) == 0 or (nb[i] >= 0).any() or (nb[j] >= 0).any():
        return none
    turn = np.sign(_signed_area(ring))
    kept = [(p, lab) for p, lab in _split_at_crossings(ring, nb) if np.sign(_signed_area(p)) == turn]
    if len(kept) != 1 or _crossing_edges(kept[0][0][:, :2]).size:
        return none
    return kept[0]


def _push_off_walls(ring: np.ndarray, nb: np.ndarray, fixed: np.ndarray, boundary: FloorBoundary):
    """(ring, neighbours, cleared) with every wall edge (nb < 0) at least agent_radius from the
    floor's boundary, but those between two shared points; cleared is False when the passes ran out
    before that held.

    Edges that come closer are pushed parallel onto the walkable side (left of the edge) by the
    shortfall: a tangent to the eroded boundary's arcs instead of a chord across them. A free
    vertex moves to where its two edges' lines meet after the push; shared points (fixed) never
    move, and an edge with one fixed end turns about it. An edge the push would turn over is
    dropped instead (its lines' neighbours meet directly). Repeated until every wall edge clears.
    """
    if not (nb < 0).any() or fixed.all():
        return ring, nb, True
    xy, z = ring[:, :2].copy(), ring[:, 2].copy()
    cleared = False
    for _ in range(_PUSH_PASSES):
        wall, fixed_next = nb < 0, np.roll(fixed, -1)
        a, b = xy, np.roll(xy, -1, axis=0)
        dist, t = np.full(len(xy), np.inf), np.zeros(len(xy))
        dist[wall], t[wall] = boundary.distance(a[wall], b[wall], z[wall], np.roll(z, -1)[wall])
        short = wall & (dist < boundary.radius - _PUSH_MARGIN) & ~(fixed & fixed_next)
        if not short.any():
            cleared = True
            break
        push = np.where(short, boundary.radius - dist + 2 * _PUSH_MARGIN, 0.0)
        at_start = np.where(fixed_next & ~fixed, push / np.maximum(1.0 - t, _PUSH_MIN_LEVER), push)
        at_end = np.where(fixed & ~fixed_next, push / np.maximum(t, _PUSH_MIN_LEVER), push)
        edge = b - a
        normal = np.column_stack([-edge[:, 1], edge[:, 0]]) / np.hypot(*edge.T)[:, None]
        # Vertex k joins edge k-1 (in) and edge k (out): it moves by d with n_in.d = o_in, n_out.d = o_out.
        n1, n2 = np.roll(normal, 1, axis=0), normal
        o1, o2 = np.roll(at_end, 1), at_start
        sine = n1[:, 0] * n2[:, 1] - n1[:, 1] * n2[:, 0]
        cosine = np.einsum("ij,ij->i", n1, n2)
        straight = np.abs(sine) < _PUSH_STRAIGHT
        with np.errstate(divide="ignore", invalid="ignore"):
            general = np.column_stack([o1 * n2[:, 1] - o2 * n1[:, 1], n1[:, 0] * o2 - n2[:, 0] * o1]) / sine[:, None]
            even = np.maximum(o1, o2)[:, None] * (n1 + n2) / (1.0 + cosine)[:, None]
        d = np.where(straight[:, None], even, general)
        # A fold back (a spike) has no place where both lines are pushed: leave it.
        d[fixed | ((o1 == 0) & (o2 == 0)) | (straight & (cosine <= 0))] = 0.0
        moved = xy + d
        after = np.roll(moved, -1, axis=0) - moved
        flipped = np.flatnonzero(np.einsum("ij,ij->i", after, edge) <= 0)
        if flipped.size == 0:
            xy = moved
            continue
        # Drop one free end of each edge that would turn over, then measure again.
        drop = np.zeros(len(xy), dtype=bool)
        drop[np.where(fixed[flipped], (flipped + 1) % len(xy), flipped)] = True
        drop &= ~fixed
        if not drop.any() or len(xy) - drop.sum() < 3:
            break
        nb = np.where(drop | np.roll(drop, -1), -1, nb)[~drop]
        xy, z, fixed = xy[~drop], z[~drop], fixed[~drop]
    return np.column_stack([xy, z]), nb, cleared
