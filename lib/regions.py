"""Region stage: exact agent-radius erosion and region partition (Recast: rcErodeWalkableArea,
rcBuildDistanceField, rcBuildRegions / layer merging), vectorised over the span graph."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .boundary import FloorBoundary
from .components import connected_components, index_dtype, sorted_starts, unique_pairs
from .geometry import STEP_NOISE, point_segment_distance_matrix, ring_next
from .heightfield import DIR_DX, DIR_DY, Heightfield
from .params import BakeParams
from .progress import SILENT, Progress


@dataclass
class RegionMap:
    """Per-span erosion distance and region labels.

    distance: (S,) float64, 2D distance from the span's column centre to the nearest floor boundary
    (a missing link, placed as distance_field describes); inf where it is farther than
    agent_radius + 2 cells.
    region: (S,) int64 region id, -1 for spans not in the navmesh (eroded away or dropped).
    region_count: R. region_area: (R,) int64 area id of each region.
    A region never holds two spans of one column, so it is a single-valued floor seen from above, nor
    two spans of neighbouring columns that are not linked, so it never borders itself.
    """

    distance: np.ndarray
    region: np.ndarray
    region_count: int
    region_area: np.ndarray
    # Bridge spans: spans whose centre lies within agent_radius of the boundary, kept because a
    # point of their cell (bridge_xy, (B, 2)) lies farther, and they hold a passage open between
    # inside spans that are apart otherwise, or are an island's floor that holds no inside span
    # (sorted span ids).
    bridges: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    bridge_xy: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))


# A span this close (in cells) to agent_radius from the boundary lies on the eroded boundary
# itself and is left out: its outline points would fall on its own centre from every side, a
# zero-width strip, as the exact erosion leaves nothing of a corridor exactly 2 * radius wide.
ON_RADIUS = 1e-9
# Spans whose propagated distance lies within this many cells of agent_radius are measured exactly
# (the propagation's error near wall ends stays within a cell).
EXACT_BAND = 1.0
# Points of a cell measured for a bridge: offsets of this fraction of a cell about its centre (a
# grid of points cs / 5 apart over the floor, so every strip wider than cs * sqrt(2) / 5 at any
# angle holds one).
_BRIDGE_OFFSETS = (-0.4, -0.2, 0.0, 0.2, 0.4)
# A span whose centre lies within this many cells (half a cell's diagonal) short of agent_radius may
# hold a point of its cell farther than the radius: a bridge candidate.
_BRIDGE_REACH = float(np.sqrt(0.5))
# A bridge's point lies farther than agent_radius by more than this many cells: the free floor is
# at least a fifth of a cell wide there. A passage half a cell wider than the agent (the narrowest
# kept open) holds such a point of the cs / 5 grid at any angle; a gap of a few centimetres between
# two bands (a colonnade's) need not, and bridged it would only be merged shut again, coarsely.
_BRIDGE_MARGIN = 0.1
# A wall must be this much (m) nearer than the best so far to replace it: ties keep the first.
_CLOSER = 1e-12
# Active spans of a distance-field sweep measured at a time (bounds its (A, 8) temporaries).
_SWEEP_CHUNK = 1 << 14
# Spans whose regions _finish reads at once to find each region's first span.
_FIRST_CHUNK = 1 << 18
# An island's traced outline lies within a cell of its spans' column centres (its walls and ledges
# are placed between an inside centre and the next outside one), so it covers at most this many
# times its cells' area: islands are dropped here only when that bound is below region_min_area, and
# the outlines' own areas, after simplification, decide the rest (contours._drop_small_islands).
_OUTLINE_CELLS_BOUND = 4.0
# Tile (in columns) a piece holding both sides of its own border is first cut into; halved each round.
_FIRST_TILE = 16
# The neighbouring columns _self_borders pairs, each pair once: (dx, dy, how a span reaches the
# other column: its link, or the two ways round a diagonal, as directions stepped in turn).
_NEIGHBOUR_COLUMNS: list[tuple[int, int, list[tuple[int, ...]]]] = [
    (1, 0, [(0,)]),
    (0, 1, [(1,)]),
    (1, 1, [(0, 1), (1, 0)]),
    (1, -1, [(0, 3), (3, 0)]),
]


def build_regions(
    hf: Heightfield, params: BakeParams, progress: Progress = SILENT, retry: tuple | None = None
) -> RegionMap:
    """Erode the floor by agent_radius exactly, then split it into few large single-storey regions.
    retry: (an earlier RegionMap of this heightfield, span ids it made bridges that are closed this
    time): its erosion is reused, and those bridges left out (their region's outline could not be
    pushed off the walls)."""
    s = hf.span_count
    if s == 0:
        return RegionMap(np.zeros(0), np.zeros(0, np.int64), 0, np.zeros(0, np.int64))
    if retry is None:
        distance = distance_field(hf, params.agent_radius, progress.span(0.0, 0.6))
        boundary = FloorBoundary(hf, params)
        _exact_near_radius(hf, params, distance, boundary, progress.span(0.6, 0.65))
        inside = distance > params.agent_radius + ON_RADIUS * hf.cell_size
        bridges, bridge_xy = _bridges(hf, params, distance, inside, boundary, progress.span(0.65, 0.75))
        del boundary  # its bins are the grid's size
    else:
        earlier, closed = retry
        distance = earlier.distance
        inside = distance > params.agent_radius + ON_RADIUS * hf.cell_size
        keep = ~np.isin(earlier.bridges, closed)
        bridges, bridge_xy = earlier.bridges[keep], earlier.bridge_xy[keep]
    inside[bridges] = True
    progress.at(0.75)
    u, v = _edges(hf, inside)
    label = connected_components(s, u, v, narrow=True)  # int32 per span while ids fit
    progress.at(0.8)
    column = (hf.y.astype(np.int64) * hf.width + hf.x).astype(index_dtype(hf.width * hf.height))
    apart = _self_borders(hf, label, column, inside, params.agent_max_climb + STEP_NOISE, progress.span(0.8, 0.85))
    conflict = _conflicting(label, column, inside)
    if len(apart):
        own_border = np.zeros(s, dtype=bool)
        own_border[label[apart[:, 0]]] = True
        conflict |= inside & own_border[label]
    if conflict.any():
        label = _split_layers(label, column, hf, conflict, u, v, apart)
    del u, v, column, apart, conflict  # the links' size: not held through _finish's sort
    progress.at(0.95)
    # Of the labels and islands, only the inside spans' are held through _finish.
    inside_label = label[inside]
    del label
    island = connected_components(s, *_edges(hf, inside, same_area=False), narrow=True)[inside]
    region, region_area = _finish(inside_label, island, inside, hf.area, hf.cell_size, params.region_min_area)
    return RegionMap(distance, region, len(region_area), region_area, bridges, bridge_xy)


def _exact_near_radius(
    hf: Heightfield, params: BakeParams, distance: np.ndarray, boundary: FloorBoundary, progress: Progress = SILENT
) -> None:
    """Measure the spans of the propagated distance field within EXACT_BAND cells of agent_radius
    exactly to the floor's boundary segments, in place: the propagated field is off by up to about
    a cell near wall ends (either way), which closed passages up to 2r + 2 cells wide and left
    noise for simplification."""
    radius, band = params.agent_radius, EXACT_BAND * hf.cell_size
    near = np.flatnonzero(np.abs(distance - radius) <= band)
    if len(near):
        distance[near] = boundary.point_distance(hf.centers_xy(near), hf.z[near], radius + band, progress)


def _bridges(
    hf: Heightfield,
    params: BakeParams,
    distance: np.ndarray,
    inside: np.ndarray,
    boundary: FloorBoundary,
    progress: Progress = SILENT,
) -> tuple[np.ndarray, np.ndarray]:
    """(spans, (B, 2) points) of the bridge spans: a passage a little wider than the agent may hold
    no cell centre farther than agent_radius from both walls, so the centres alone close it. Spans
    whose centre is within half a cell diagonal short of the radius are measured at points of their
    cell; one with a point _BRIDGE_MARGIN cells farther than the radius is a bridge where that
    point lies in a strip of free floor: a cell's step from it both ways along one axis (x, y or a
    diagonal) comes within the radius. Linked bridges that touch inside spans in two or more places
    apart are kept, a passage between them (tested first on all candidates, which costs no
    measuring, and again at the end); so are those of a group of candidates that touches no inside
    span at all: free floor no cell centre of which is farther than the radius, an island of its
    own (a catwalk 2r + cs / 2 wide), which would otherwise have no navmesh."""
    radius, cs = params.agent_radius, hf.cell_size
    none = np.zeros(0, dtype=np.int64), np.zeros((0, 2))
    cand = _near_radius(hf, distance, inside, boundary, radius - _BRIDGE_REACH * cs, radius, progress.span(0.0, 0.2))
    pieces = _pieces_touched(hf, cand, inside)
    alone = cand[pieces == 0]  # an island's candidates (sorted, as cand is)
    cand = cand[(pieces >= 2) | (pieces == 0)]
    if len(cand) == 0:
        return none
    offsets = np.array([(dx, dy) for dx in _BRIDGE_OFFSETS for dy in _BRIDGE_OFFSETS if dx or dy]) * cs
    xy = (hf.centers_xy(cand)[:, None, :] + offsets[None, :, :]).reshape(-1, 2)
    far = boundary.point_distance(xy, np.repeat(hf.z[cand], len(offsets)), radius + cs, progress.span(0.2, 0.6))
    # Every point farther than the radius is tested for a strip (the farthest can lie in the open
    # mouth of a passage, beside the strip): the farthest that lies in one is the cell's point.
    at = np.flatnonzero(far > radius + _BRIDGE_MARGIN * cs)
    if len(at) == 0:
        return none
    owner, points = at // len(offsets), xy[at]
    diagonal = np.sqrt(0.5)
    axes = np.array([(1.0, 0.0), (0.0, 1.0), (diagonal, diagonal), (diagonal, -diagonal)]) * cs
    both_ways = np.array([1.0, -1.0])[None, None, :, None]
    probes = (points[:, None, None, :] + both_ways * axes[None, :, None, :]).reshape(-1, 2)
    # Measured exactly only just past the radius (fewer segments to test): within it is all it asks.
    reach = radius + 2.0 * _BRIDGE_MARGIN * cs
    near = boundary.point_distance(probes, np.repeat(hf.z[cand[owner]], 8), reach, progress.span(0.6, 1.0))
    near = near.reshape(len(at), 4, 2) <= radius
    strip = near.all(axis=2).any(axis=1)
    owner, points, far = owner[strip], points[strip], far[at[strip]]
    # Per cell, its farthest point in a strip.
    order = np.lexsort((-far, owner))
    first = order[np.concatenate([[True], owner[order[1:]] != owner[order[:-1]]])] if len(order) else order
    cand, points = cand[owner[first]], points[first]
    # A group of an island's bridges touches no inside span either; a piece of a passage's group cut
    # off from the inside spans by cells with no point in a strip is a sliver, not an island: dropped.
    keep = (_pieces_touched(hf, cand, inside) >= 2) | np.isin(cand, alone)
    order = np.argsort(cand[keep])
    return cand[keep][order], points[keep][order]


def _near_radius(
    hf: Heightfield,
    distance: np.ndarray,
    inside: np.ndarray,
    boundary: FloorBoundary,
    low: float,
    radius: float,
    progress: Progress = SILENT,
) -> np.ndarray:
    """The spans not inside whose centre lies farther than `low` (< radius) from the floor's
    boundary. Below the exact band the distance field is the propagated one, which puts geometry
    that only clips a column at the column's centre, up to half a cell's diagonal nearer than it
    is: such spans within the band's width of `low` are measured exactly (a gap 2r + cs / 2 wide at
    45 or 135 degrees lost the cells that bridge it, and closed)."""
    band = EXACT_BAND * boundary.cs
    maybe = np.flatnonzero(~inside & (distance > low - band))
    centre = distance[maybe]  # a copy (fancy indexing)
    below = np.flatnonzero(centre < radius - band)
    centre[below] = boundary.point_distance(hf.centers_xy(maybe[below]), hf.z[maybe[below]], radius, progress)
    return maybe[centre > low]


def _pieces_touched(hf: Heightfield, cand: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Per candidate span: in how many pieces its group (candidates linked to each other) touches
    inside spans (0 if it touches none). The inside spans a group touches are joined to their 8
    neighbours among those the same group touches, the diagonal ones through an inside span: a diagonal wall's staircase
    of cells is one piece, not one per step. Per group: the spans other groups touch along the
    band's edge would join the two sides of a door in a wall whose far end is free."""
    if len(cand) == 0:
        return np.zeros(0, dtype=np.int64)
    is_cand = np.zeros(hf.span_count, dtype=bool)
    is_cand[cand] = True
    group = connected_components(hf.span_count, *_edges(hf, is_cand))
    touch_c, touch_i = [], []
    for d in range(4):
        n = hf.links[cand, d]
        linked = n >= 0
        linked[linked] &= inside[n[linked]] & (hf.area[n[linked]] == hf.area[cand[linked]])
        touch_c.append(cand[linked])
        touch_i.append(n[linked])
    # Nodes: (group, inside span it touches), keyed group * S + span.
    s = np.int64(hf.span_count)
    node = np.unique(group[np.concatenate(touch_c)].astype(np.int64) * s + np.concatenate(touch_i))
    node_group, touched = node // s, node % s
    pairs_u, pairs_v = [], []
    for d in range(4):
        via = hf.links[touched, d]
        for step in (d, (d + 1) % 4):
            n = _step(hf.links, via, step) if step != d else via
            ok = (n >= 0) & ((step == d) | inside[np.maximum(via, 0)])
            key = node_group[ok] * s + n[ok]
            at = np.minimum(np.searchsorted(node, key), len(node) - 1)
            hit = node[at] == key
            pairs_u.append(np.flatnonzero(ok)[hit])
            pairs_v.append(at[hit])
    piece = connected_components(len(node), np.concatenate(pairs_u), np.concatenate(pairs_v))
    pieces = np.unique(np.stack([node_group, piece], axis=1), axis=0)
    per_group = np.zeros(hf.span_count, dtype=np.int64)
    groups, count = np.unique(pieces[:, 0], return_counts=True)
    per_group[groups] = count
    return per_group[group[cand]]


def bridges_near(hf: Heightfield, region_map: RegionMap, rings: list[tuple[int, tuple]]) -> np.ndarray:
    """The bridge spans of each (region, rings) pair that lie within two cells of one of the rings
    (seen from above): the bridges a ring that could not be pushed off the walls passes."""
    near = []
    bridge_region = region_map.region[region_map.bridges]
    centre = hf.centers_xy(region_map.bridges)
    for r, region_rings in rings:
        mine = np.flatnonzero(bridge_region == r)
        for ring in region_rings if len(mine) else ():
            a, b = ring[:, :2], ring_next(ring[:, :2])
            gap = point_segment_distance_matrix(centre[mine], a, b).min(axis=1)
            near.append(region_map.bridges[mine[gap <= 2.0 * hf.cell_size]])
    return np.unique(np.concatenate(near)) if near else np.zeros(0, dtype=np.int64)


def distance_field(hf: Heightfield, radius: float, progress: Progress = SILENT) -> np.ndarray:
    """Euclidean distance to the nearest floor boundary by vector propagation (Danielsson).

    The boundary is made of one element per missing link, at its link end (hf.link_end) on the step to
    the neighbour: where the floor's end or the blocking geometry was found on the step, a
    cell-wide segment across it; where it was not (geometry that only clips the neighbour column),
    the neighbour column's centre, a point (the expected place of geometry lying anywhere in that
    column, corners included). Every span
    carries the id of its nearest known boundary element (midpoint, orientation, half-length); each sweep
    offers it the elements of its 4 linked and 4 diagonal (two links) neighbours, measured to the
    whole segment so raster corners are exact. Sweeps stop when nothing changes or after enough to
    cover radius + 2 cells; farther spans keep inf.
    """
    s, cs = hf.span_count, hf.cell_size
    links = hf.links
    # Per span, its nearest element so far (an id into the element arrays, -1 for none) and the
    # distance to it: the elements are held once each, not copied to every span they reach.
    element = np.full(s, -1, dtype=index_dtype(4 * s))
    dist = np.full(s, np.inf)
    near_parts, along_y_parts, extent_parts = [], [], []
    count = 0
    for d in (1, 3, 0, 2):
        missing = np.flatnonzero(links[:, d] < 0)
        fraction, found = hf.link_end(missing, np.full(len(missing), d))
        block = fraction * cs
        # Nearest first, so a wall one cell away does not hide a ledge at this cell's edge.
        nearer = block <= dist[missing]
        missing, block, found = missing[nearer], block[nearer], found[nearer]
        near_parts.append(hf.centers_xy(missing) + block[:, None] * np.array([DIR_DX[d], DIR_DY[d]]))
        along_y_parts.append(np.full(len(missing), DIR_DX[d] != 0))  # the edge runs along y (it faces +-x)
        # Half-length of the edge: half a cell at ledges, 0 (a point) at walls.
        extent_parts.append(np.where(found, 0.5 * cs, 0.0))
        element[missing] = np.arange(count, count + len(missing))
        count += len(missing)
        dist[missing] = block
    elements = (np.concatenate(near_parts), np.concatenate(along_y_parts), np.concatenate(extent_parts))
    del near_parts, along_y_parts, extent_parts
    # Spans whose element changed in the last sweep (at first: every span holding one): only their
    # neighbours can improve. A span's linked neighbours offer it only fresh elements: links are
    # mutual, so the span was active in the sweep after such a neighbour took its element, did not
    # improve on it by _CLOSER then, and cannot now that it is no farther. (Diagonal neighbours
    # offer every element: the way round a diagonal need not lead back.)
    fresh = dist < np.inf
    next_to = np.zeros(s, dtype=bool)
    # The 8 neighbours are looked up per chunk of spans, here and below: a table for every span
    # would be the erosion's largest array.
    for part in _chunks(np.flatnonzero(fresh)):
        nb = _eight_neighbours(links, part)
        next_to[nb[nb >= 0]] = True
    sweeps = int(np.ceil(radius / cs)) + 3
    for sweep in range(sweeps):
        progress.at(sweep / sweeps)
        act = np.flatnonzero(next_to)
        # Every active span is measured against the field as the sweep found it, then all improve
        # at once; in chunks, so the (A, 8) temporaries stay bounded on large levels. The spans
        # next to those that improve are marked for the next sweep as they are found.
        next_to = np.zeros(s, dtype=bool)
        found_better = []
        for part in _chunks(act):
            spans, source, closer, neighbours = _sweep_part(
                part, _eight_neighbours(links, part), hf.centers_xy(part), element, elements, dist, fresh
            )
            next_to[neighbours[neighbours >= 0]] = True
            found_better.append((spans, source, closer))
        changed = np.concatenate([spans for spans, _, _ in found_better]) if found_better else act[:0]
        if not len(changed):
            break
        src = np.concatenate([source for _, source, _ in found_better])
        dist[changed] = np.concatenate([closer for _, _, closer in found_better])
        element[changed] = element[src]
        fresh = np.zeros(s, dtype=bool)
        fresh[changed] = True
    return dist


def _chunks(spans: np.ndarray) -> list[np.ndarray]:
    return [spans[start : start + _SWEEP_CHUNK] for start in range(0, len(spans), _SWEEP_CHUNK)]


def _sweep_part(act, cand_idx, centre, element, elements, dist, fresh):
    """(spans, source, distance, their neighbours) for the spans in `act` (column centres `centre`,
    their 8 neighbours `cand_idx` (A, 8)) whose neighbours' boundary elements come closer than
    their own: the linked neighbours' fresh elements (changed in the last sweep), and the diagonal
    neighbours' elements. element: each span's element id; elements: (midpoint (E, 2), runs
    along y (E,), half-length (E,))."""
    near, along_y, extent = elements
    ok = cand_idx >= 0
    ok[:, :4][ok[:, :4]] = fresh[cand_idx[:, :4][ok[:, :4]]]
    ok[:, 4:][ok[:, 4:]] = np.isfinite(dist[cand_idx[:, 4:][ok[:, 4:]]])
    at = np.flatnonzero(ok)  # (row, column) as row * 8 + column
    src, row = element.take(cand_idx.ravel().take(at)), at >> 3
    dx = centre[row, 0] - near[src, 0]
    dy = centre[row, 1] - near[src, 1]
    vert = along_y.take(src)
    h = extent.take(src)
    ex = np.where(vert, dx, dx - np.clip(dx, -h, h))
    ey = np.where(vert, dy - np.clip(dy, -h, h), dy)
    cd = np.full(cand_idx.shape, np.inf)
    cd.ravel()[at] = ex * ex + ey * ey
    k = np.argmin(cd, axis=1)
    rows = np.arange(len(act))
    best = np.sqrt(cd[rows, k])
    better = best < dist[act] - _CLOSER
    return act[better], cand_idx[rows[better], k[better]], best[better], cand_idx[better]


def _eight_neighbours(links: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """(len(spans), 8): each span's 4 linked neighbours, then the 4 diagonals reached through two
    links (-1 if none)."""
    out = np.full((len(spans), 8), -1, dtype=links.dtype)
    out[:, :4] = links[spans]
    for d in range(4):
        e = (d + 1) % 4
        diagonal = out[:, 4 + d]  # through the link d then e, else through e then d
        a = out[:, d]
        has = np.flatnonzero(a >= 0)
        diagonal[has] = links[a[has], e]
        b = out[:, e]
        has = np.flatnonzero((diagonal < 0) & (b >= 0))
        diagonal[has] = links[b[has], d]
    return out


def _edges(hf: Heightfield, inside: np.ndarray, same_area: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Links (+x and +y, links are mutual) between inside spans, of the same area id unless
    same_area is False."""
    us, vs = [], []
    for d in (0, 1):
        n = hf.links[:, d]
        ok = inside & (n >= 0)
        ok[ok] &= inside[n[ok]]
        if same_area:
            ok[ok] &= hf.area[n[ok]] == hf.area[ok]
        us.append(np.flatnonzero(ok).astype(n.dtype))  # span ids as the links hold them (int32 while they fit)
        vs.append(n[ok])
    return np.concatenate(us), np.concatenate(vs)


def _conflicting(label: np.ndarray, column: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Bool per span: its component holds two spans of one column (stacked floors joined by a ramp).
    Spans are sorted by column, so each column's spans are one run: every pair of them is `step`
    apart for some step below the longest run (no sort of the spans: flags per span only)."""
    bad = np.zeros(len(label), dtype=bool)
    step = 1
    while True:
        pair = column[step:] == column[:-step]
        if not pair.any():
            return inside & bad[label]
        pair &= inside[step:] & inside[:-step]
        pair &= label[step:] == label[:-step]
        bad[label[step:][pair]] = True
        step += 1


def _self_borders(
    hf: Heightfield,
    label: np.ndarray,
    column: np.ndarray,
    inside: np.ndarray,
    climb: float,
    progress: Progress = SILENT,
) -> np.ndarray:
    """(K, 2) pairs of inside spans of one component in neighbouring columns that are not linked: the
    two sides of a ledge or step (a platform's edge above the floor it is reached from by a ramp)
    that the component joins only the long way round. A region holding both would border itself,
    and its outline would run along both sides of the same line. Likewise spans in diagonal
    columns more than a climb apart in height and not joined through either column between them
    (a slab's corner over the ramp that climbs to it): the outline would turn there from one floor
    to the other (on one floor, across a thin diagonal wall, it pinches to the corner). Every span
    of the component in the other column is paired, not only one: it can hold two (fuzz case
    501108)."""
    idx = np.flatnonzero(inside).astype(hf.links.dtype)
    # Spans are sorted by column: column c's spans are start[c]:start[c + 1] (a lookup per span, not
    # a search of every span's column).
    start = sorted_starts(column, hf.width * hf.height)
    out = [np.zeros((0, 2), dtype=np.int64)]
    parts = _chunks(idx)  # bounds the temporaries on large levels
    for done, part in enumerate(parts):
        progress.at(done / len(parts))
        for dx, dy, ways in _NEIGHBOUR_COLUMNS:  # each pair of neighbouring columns once
            nx, ny = hf.x[part] + dx, hf.y[part] + dy
            ok = (nx >= 0) & (ny >= 0) & (nx < hf.width) & (ny < hf.height)
            here = part[ok]
            other = ny[ok].astype(np.int64) * hf.width + nx[ok]
            first, end = start[other], start[other + 1]
            for k in range(int((end - first).max(initial=0))):
                has = np.flatnonzero(first + k < end)
                a, b = here[has], first[has] + k
                # The cheap test first: most pairs are linked neighbours, or diagonal on one floor.
                suspect = hf.links[a, ways[0][0]] != b if len(ways) == 1 else np.abs(hf.z[a] - hf.z[b]) > climb
                a, b = a[suspect], b[suspect]
                mine = inside[b] & (label[b] == label[a])
                a, b = a[mine], b[mine]
                apart = np.ones(len(a), dtype=bool)
                if len(ways) > 1:  # diagonal columns: joined neither way round
                    for way in ways:
                        reached = a
                        for d in way:
                            reached = _step(hf.links, reached, d)
                        apart &= reached != b
                out.append(np.stack([a[apart], b[apart]], axis=1))
    return np.concatenate(out)


def _step(links: np.ndarray, spans: np.ndarray, d: int) -> np.ndarray:
    """The span each of `spans` links to in direction d (-1 where there is none, or no span)."""
    return np.where(spans >= 0, links[np.maximum(spans, 0), d], -1)


def _split_layers(label, column, hf: Heightfield, conflict, u, v, apart) -> np.ndarray:
    """Split conflicting components into single-storey pieces, then greedily merge neighbours.

    A span's level is its rank by height among its component's spans in its column; pieces are
    connected same-level spans, so each holds at most one span per column. A piece that still holds
    both spans of a pair in `apart` (_self_borders) is cut along a grid of tiles, finer each round,
    until none does. Adjacent pieces are then merged, longest shared border first, whenever their
    column sets stay disjoint (Recast's layer merge) and no pair in `apart` would end up together.
    """
    z = hf.z
    idx = np.flatnonzero(conflict)
    order = idx[np.lexsort((z[idx], column[idx], label[idx]))]
    key_l, key_c = label[order], column[order]
    start = np.ones(len(order), dtype=bool)
    start[1:] = (key_l[1:] != key_l[:-1]) | (key_c[1:] != key_c[:-1])
    pos = np.arange(len(order))
    first = np.maximum.accumulate(np.where(start, pos, 0))
    level = np.zeros(len(label), dtype=np.int64)
    level[order] = pos - first
    keep = ~(conflict[u] & (level[u] != level[v]))
    piece = connected_components(len(label), u[keep], v[keep])
    tile = _FIRST_TILE
    while len(apart) and (together := piece[apart[:, 0]] == piece[apart[:, 1]]).any():
        # At a tile of one column every link is cut, so this ends with single spans at worst.
        bad = np.zeros(len(label), dtype=bool)
        bad[piece[apart[together, 0]]] = True
        in_bad = bad[piece]
        crosses = (hf.x[u] // tile != hf.x[v] // tile) | (hf.y[u] // tile != hf.y[v] // tile)
        keep &= ~(in_bad[u] & crosses)
        # Only the bad pieces change; labels stay each piece's smallest span, as connected_components gives.
        inner = keep & in_bad[u]
        piece = np.where(in_bad, connected_components(len(label), u[inner], v[inner]), piece)
        tile = max(tile // 2, 1)

    cut_u, cut_v = piece[u[~keep]], piece[v[~keep]]
    pairs, counts = np.unique(np.sort(np.stack([cut_u, cut_v], axis=1), axis=1), axis=0, return_counts=True)
    members = np.flatnonzero(conflict)
    pieces = piece[members]
    distinct = np.unique(pieces)
    parent = {p: p for p in distinct.tolist()}
    # Per piece, the pieces it must never share a region with (kept for the root of each group):
    # those holding a span of one of its columns, and those across a border it has with itself.
    banned: dict[int, set[int]] = {p: set() for p in parent}
    for a, b in _apart_pieces(piece, order, column, apart).tolist():
        banned[a].add(b)
        banned[b].add(a)

    def find(p: int) -> int:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for k in np.lexsort((pairs[:, 1], pairs[:, 0], -counts)):
        a, b = find(int(pairs[k, 0])), find(int(pairs[k, 1]))
        if a == b or b in banned[a]:
            continue
        lo, hi = min(a, b), max(a, b)
        parent[hi] = lo
        for other in banned.pop(hi):
            banned[other].discard(hi)
            banned[other].add(lo)
            banned[lo].add(other)
    # Each member's root, looked up by its piece's place among the distinct pieces (sorted).
    root = np.array([find(p) for p in distinct.tolist()], dtype=np.int64)
    out = label.copy()
    out[members] = root[np.searchsorted(distinct, pieces)]
    return out


def _apart_pieces(piece: np.ndarray, order: np.ndarray, column: np.ndarray, apart: np.ndarray) -> np.ndarray:
    """(K, 2) distinct pairs of pieces that must stay in different regions: every two holding spans
    of one column (order: the conflicting spans sorted by column), and the pieces of each pair in
    `apart`."""
    found = [piece[apart]]
    col = column[order]
    for step in range(1, len(order)):
        same = col[step:] == col[:-step]
        if not same.any():
            break
        found.append(np.stack([piece[order[:-step][same]], piece[order[step:][same]]], axis=1))
    pairs = np.concatenate(found)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return unique_pairs(np.sort(pairs, axis=1))


def _finish(label, island, inside, area, cs: float, min_area: float) -> tuple[np.ndarray, np.ndarray]:
    """Number the components 0..R-1 (in order of first span), dropping those whose island (the
    inside spans linked whatever their area ids and storeys) is smaller than min_area: a piece split
    off by an area border or a storey is a region of a larger floor, not an island. label and
    island: per inside span (in span order), its component label and its island."""
    s = len(inside)
    if not len(label):
        return np.full(s, -1, dtype=np.int64), np.zeros(0, np.int64)
    # Labels are span ids: counted per label value, not sorted (a sort of every span would be the
    # stage's largest temporaries). A label's spans lie in one island (the islands join more).
    # Each temporary is dropped as soon as it is used, and the regions are made last: this is the
    # stage's peak.
    island_size = np.bincount(island)
    island_area = island_size * cs  # (size * cs) * cs in one array
    del island_size
    island_area *= _OUTLINE_CELLS_BOUND * cs
    big_island = island_area >= min_area  # else its outline is certainly smaller than min_area
    del island_area
    big = np.zeros(s, dtype=bool)
    big[label] = big_island[island]
    del big_island
    new_id = np.cumsum(big, dtype=index_dtype(s)) - 1
    inside_region = np.where(big[label], new_id[label], -1)
    del new_id
    region = np.full(s, -1, dtype=np.int64)
    region[inside] = inside_region
    del inside_region
    # The first span of each kept region, in chunks of spans; those dropped (-1) go to the extra
    # last entry.
    count = int(big.sum())
    first = np.full(count + 1, s)
    for start in range(0, s, _FIRST_CHUNK):
        part = region[start : start + _FIRST_CHUNK]
        np.minimum.at(first, part, np.arange(start, start + len(part)))
    region_area = area[first[:count]].astype(np.int64)
    return region, region_area
