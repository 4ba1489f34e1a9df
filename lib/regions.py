"""Region stage: exact agent-radius erosion and region partition (Recast: rcErodeWalkableArea,
rcBuildDistanceField, rcBuildRegions / layer merging), vectorised over the span graph."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .components import connected_components
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
    A region never holds two spans of one column, so it is a single-valued floor seen from above,
    nor two spans of neighbouring columns without a link between them (_unfold).
    """

    distance: np.ndarray
    region: np.ndarray
    region_count: int
    region_area: np.ndarray


# A span this close (in cells) to agent_radius from the boundary lies on the eroded boundary
# itself and is left out: its outline points would fall on its own centre from every side, a
# zero-width strip, as the exact erosion leaves nothing of a corridor exactly 2 * radius wide.
ON_RADIUS = 1e-9


def build_regions(hf: Heightfield, params: BakeParams, progress: Progress = SILENT) -> RegionMap:
    """Erode the floor by agent_radius exactly, then split it into few large single-storey regions."""
    s = hf.span_count
    if s == 0:
        return RegionMap(np.zeros(0), np.zeros(0, np.int64), 0, np.zeros(0, np.int64))
    distance = distance_field(hf, params.agent_radius, progress.span(0.0, 0.6))
    inside = distance > params.agent_radius + ON_RADIUS * hf.cell_size
    u, v = _edges(hf, inside)
    label = connected_components(s, u, v)
    progress.at(0.7)
    column = hf.y.astype(np.int64) * hf.width + hf.x
    conflict = _conflicting(label, column, inside)
    if conflict.any():
        label = _split_layers(label, column, hf.z, inside, conflict, u, v)
    piece = _unfold(hf, label, column, inside, float(params.agent_max_climb))
    region, region_area = _finish(piece, label, inside, hf.area, hf.cell_size, params.region_min_area)
    return RegionMap(distance, region, len(region_area), region_area)


def distance_field(hf: Heightfield, radius: float, progress: Progress = SILENT) -> np.ndarray:
    """Euclidean distance to the nearest floor boundary by vector propagation (Danielsson).

    The boundary is made of one element per missing link, at hf.block_fraction() of the step to
    the neighbour: where the floor's end or the blocking geometry was found on the step, a
    cell-wide segment across it; where it was not (geometry that only clips the neighbour column),
    the neighbour column's centre, a point (the expected place of geometry lying anywhere in that
    column, corners included). Every span
    carries its nearest known boundary element (midpoint, orientation, half-length); each sweep
    offers it the elements of its 4 linked and 4 diagonal (two links) neighbours, measured to the
    whole segment so raster corners are exact. Sweeps stop when nothing changes or after enough to
    cover radius + 2 cells; farther spans keep inf.
    """
    s, cs = hf.span_count, hf.cell_size
    half = 0.5 * cs
    centre = hf.centers_xy()
    links = hf.links
    near = np.zeros((s, 2))
    along_y = np.zeros(s, dtype=bool)  # the edge runs along y (it faces +-x)
    extent = np.zeros(s)  # half-length of the edge: half a cell at ledges, 0 (a point) at walls
    dist = np.full(s, np.inf)
    block = hf.block_fraction() * cs
    found = hf.block_found()
    for d in (1, 3, 0, 2):
        missing = np.flatnonzero(links[:, d] < 0)
        # Nearest first, so a wall one cell away does not hide a ledge at this cell's edge.
        missing = missing[block[missing, d] <= dist[missing]]
        near[missing] = centre[missing] + block[missing, d, None] * np.array([DIR_DX[d], DIR_DY[d]])
        along_y[missing] = DIR_DX[d] != 0
        extent[missing] = np.where(found[missing, d], half, 0.0)
        dist[missing] = block[missing, d]
    nbr = _eight_neighbours(links)
    changed = np.flatnonzero(dist < np.inf)
    sweeps = int(np.ceil(radius / cs)) + 3
    for sweep in range(sweeps):
        progress.at(sweep / sweeps)
        # Only spans next to one that changed can improve.
        nb = nbr[changed].ravel()
        act = np.unique(nb[nb >= 0])
        cand_idx = nbr[act]  # (A, 8)
        safe = np.maximum(cand_idx, 0)
        ok = (cand_idx >= 0) & np.isfinite(dist[safe])
        dx = centre[act, 0, None] - near[safe, 0]
        dy = centre[act, 1, None] - near[safe, 1]
        vert = along_y[safe]
        h = extent[safe]
        ex = np.where(vert, dx, dx - np.clip(dx, -h, h))
        ey = np.where(vert, dy - np.clip(dy, -h, h), dy)
        cd = np.where(ok, ex * ex + ey * ey, np.inf)
        k = np.argmin(cd, axis=1)
        rows = np.arange(len(act))
        best = np.sqrt(cd[rows, k])
        better = best < dist[act] - 1e-12
        if not better.any():
            break
        changed = act[better]
        src = safe[rows[better], k[better]]
        dist[changed] = best[better]
        near[changed] = near[src]
        along_y[changed] = along_y[src]
        extent[changed] = extent[src]
    return dist


def _eight_neighbours(links: np.ndarray) -> np.ndarray:
    """(S, 8): the 4 linked neighbours, then the 4 diagonals reached through two links (-1 if none)."""
    s = len(links)
    out = np.full((s, 8), -1, dtype=np.int64)
    out[:, :4] = links
    for d in range(4):
        e = (d + 1) % 4
        a = links[:, d]
        via_a = np.where(a >= 0, links[np.maximum(a, 0), e], -1)
        b = links[:, e]
        via_b = np.where(b >= 0, links[np.maximum(b, 0), d], -1)
        out[:, 4 + d] = np.where(via_a >= 0, via_a, via_b)
    return out


def _edges(hf: Heightfield, inside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Links (+x and +y, links are mutual) between inside spans of the same area id."""
    us, vs = [], []
    for d in (0, 1):
        n = hf.links[:, d]
        ok = inside & (n >= 0)
        ok[ok] &= inside[n[ok]] & (hf.area[n[ok]] == hf.area[ok])
        us.append(np.flatnonzero(ok))
        vs.append(n[ok])
    return np.concatenate(us), np.concatenate(vs)


def _conflicting(label: np.ndarray, column: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Bool per span: its component holds two spans of one column (stacked floors joined by a ramp)."""
    idx = np.flatnonzero(inside)
    order = np.lexsort((column[idx], label[idx]))
    lab, col = label[idx][order], column[idx][order]
    dup = (lab[1:] == lab[:-1]) & (col[1:] == col[:-1])
    bad = np.zeros(len(label), dtype=bool)
    bad[np.unique(lab[1:][dup])] = True
    return inside & bad[label]


def _fold_pairs(hf: Heightfield, label: np.ndarray, column: np.ndarray, inside: np.ndarray):
    """(a, b): spans of one component in neighbouring columns that are not linked (a ledge or a thin
    wall between them, the component joined round its end), each pair once."""
    idx = np.flatnonzero(inside)
    pairs = [np.zeros((0, 2), dtype=np.int64)]
    cells = hf.width * hf.height
    key = label[idx] * cells + column[idx]
    order = np.argsort(key, kind="stable")
    key, idx = key[order], idx[order]
    for d in (0, 1) if len(idx) else ():  # +x and +y: each neighbouring pair of columns once
        nx, ny = hf.x[idx] + DIR_DX[d], hf.y[idx] + DIR_DY[d]
        ok = (nx < hf.width) & (ny < hf.height)
        want = label[idx] * cells + ny.astype(np.int64) * hf.width + nx
        other = idx[np.minimum(np.searchsorted(key, want), len(key) - 1)]
        touch = ok & (label[other] == label[idx]) & (column[other] == want % cells) & (hf.links[idx, d] != other)
        pairs.append(np.column_stack([idx[touch], other[touch]]))
    return np.concatenate(pairs)


def _unfold(hf: Heightfield, label: np.ndarray, column: np.ndarray, inside: np.ndarray, climb: float) -> np.ndarray:
    """Split each component that folds (_fold_pairs) into pieces that do not.

    Where a component holds both sides of a ledge or a thin wall, its outline runs back along itself
    on both sides of one line, a slit of no width (at radii under a cell, which erode neither side),
    that the outline and polygon stages cannot cut into fat polygons. Each piece is flooded from its
    lowest unassigned span over links, lowest floor first (spans within a climb step of the lowest
    waiting one at a time), taking no span whose other side it already holds (of two such taken at
    once, the lower): a floor and a ramp rising from it part where the ramp's sides leave the floor
    by more than a climb step, the floor keeping its whole edge there, as Recast's ledge filter would."""
    pairs = _fold_pairs(hf, label, column, inside)
    if not len(pairs):
        return label
    s = len(label)
    both = np.concatenate([pairs, pairs[:, ::-1]])
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    first = np.searchsorted(both[:, 0], np.arange(s + 1))

    def other_sides(spans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = first[spans + 1] - first[spans]
        pos = np.repeat(first[spans], n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
        return np.repeat(spans, n), both[pos, 1]

    members = np.flatnonzero(inside & np.isin(label, label[pairs[:, 0]]))
    rank = np.empty(s, dtype=np.int64)
    rank[np.lexsort((np.arange(s), hf.z))] = np.arange(s)
    out = label.copy()
    todo = np.zeros(s, dtype=bool)
    todo[members] = True
    barred_by = np.full(s, -1, dtype=np.int64)  # the piece (its seed) that holds a span's other side
    for seed in members[np.argsort(rank[members])]:
        if not todo[seed]:
            continue
        waiting = np.array([seed])
        while len(waiting):
            waiting = waiting[todo[waiting] & (barred_by[waiting] != seed)]
            if not len(waiting):
                break
            take = waiting[hf.z[waiting] <= hf.z[waiting].min() + climb]
            near, far = other_sides(take)
            clash = np.isin(far, take) & (rank[far] < rank[near])
            take = np.setdiff1d(take, near[clash])
            todo[take] = False
            out[take] = seed
            barred_by[other_sides(take)[1]] = seed
            nb = hf.links[take].ravel()
            nb = nb[nb >= 0]
            nb = nb[todo[nb] & (label[nb] == label[seed])]
            waiting = np.union1d(waiting[todo[waiting]], nb)
    return out


def _split_layers(label, column, z, inside, conflict, u, v) -> np.ndarray:
    """Split conflicting components into single-storey pieces, then greedily merge neighbours.

    A span's level is its rank by height among its component's spans in its column; pieces are
    connected same-level spans, so each holds at most one span per column. Adjacent pieces are then
    merged, longest shared border first, whenever their column sets stay disjoint (Recast's layer merge).
    """
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

    cut_u, cut_v = piece[u[~keep]], piece[v[~keep]]
    pairs, counts = np.unique(np.sort(np.stack([cut_u, cut_v], axis=1), axis=1), axis=0, return_counts=True)
    members = np.flatnonzero(conflict)
    pieces = piece[members]
    by_piece = np.argsort(pieces, kind="stable")
    ids, starts = np.unique(pieces[by_piece], return_index=True)
    cols_sorted = column[members][by_piece]
    columns = {int(p): np.sort(c) for p, c in zip(ids, np.split(cols_sorted, starts[1:]))}
    parent = {p: p for p in columns}

    def find(p: int) -> int:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for k in np.lexsort((pairs[:, 1], pairs[:, 0], -counts)):
        a, b = find(int(pairs[k, 0])), find(int(pairs[k, 1]))
        if a == b or np.intersect1d(columns[a], columns[b], assume_unique=True).size:
            continue
        lo, hi = min(a, b), max(a, b)
        parent[hi] = lo
        columns[lo] = np.union1d(columns[lo], columns.pop(hi))
    root = {p: find(p) for p in parent}
    out = label.copy()
    out[members] = np.array([root[int(p)] for p in pieces], dtype=np.int64) if len(members) else []
    return out


def _finish(label, whole, inside, area, cs: float, min_area: float) -> tuple[np.ndarray, np.ndarray]:
    """Number the pieces (label) 0..R-1 (in order of first span), dropping those whose whole (the
    piece they were unfolded from, _unfold) is smaller than min_area: a small piece of a large
    floor is a region of its own, not an island."""
    region = np.full(len(label), -1, dtype=np.int64)
    idx = np.flatnonzero(inside)
    if len(idx) == 0:
        return region, np.zeros(0, np.int64)
    _, whole_of, whole_counts = np.unique(whole[idx], return_inverse=True, return_counts=True)
    whole_size = np.zeros(len(label), dtype=np.int64)
    whole_size[idx] = whole_counts[whole_of]
    roots, first, inverse = np.unique(label[idx], return_index=True, return_inverse=True)
    big = whole_size[idx[first]] * cs * cs >= min_area
    new_id = np.cumsum(big) - 1
    region[idx] = np.where(big[inverse], new_id[inverse], -1)
    region_area = area[idx[first[big]]].astype(np.int64)
    return region, region_area
