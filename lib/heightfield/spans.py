"""Spans: fragments merged per column into solid spans (exact heights), floors inside closed solids
dropped, and each floor linked to the best passable floor of each neighbour column."""

from __future__ import annotations

import numpy as np

from ..components import index_dtype
from ..geometry import UPRIGHT_NZ
from ..params import BakeParams
from ..progress import SILENT, Progress
from .field import DIR_DX, DIR_DY
from .ends import _plane_reach
from .rasterise import _Grid, _sample_centres

# Fragments whose z-intervals are closer than this merge into one span (float noise, touching solids).
_MERGE_GAP = 1e-5
# Surfaces closer than this (m) along a column are one surface to the inside-solid test.
_SAME_SURFACE = 1e-4
# Spans linked at a time (bounds the temporaries of the neighbour search).
_LINK_CHUNK = 1 << 16


def _column_order(col: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The order of the fragments by (column, bottom), as _merge_spans takes them."""
    # Columns are offset by more than the soup's height range, so one float key sorts by
    # (column, lo). Fragments come mostly in column order already, which a stable sort (a merge of
    # sorted runs) takes in about linear time. Ties in the key are the same height in one column,
    # and every per-span figure of _merge_spans is a max or a sum, so their order does not matter.
    zbase = lo.min()
    stride = float(hi.max() - zbase) + 1.0
    return np.argsort(lo + (col * stride - zbase), kind="stable")


def _merge_spans(col, lo, hi, walk, label, climb: float, progress: Progress = SILENT):
    """Merge overlapping fragments per column, given in _column_order, into solid spans (Recast's
    span merge, exact heights).

    Returns per span: column, bottom, top, floor top, ceiling (bottom of the next span up, inf if
    none), walkable flag (a walkable fragment within `climb` of the top) and that fragment's label
    (-1 if none). The floor top is the height of that walkable fragment (the floor sampled at the
    column centre), not the span's top: whatever else merged onto the floor within a climb step (the
    top edge of a low sheet, a steep face, an underside) is stepped over and raises the solid, not
    the surface an agent stands on. Recast takes the span's top instead, which lifts the navmesh
    onto such an edge by up to a climb step where no surface is.
    """
    # Offset by column as in _column_order, one global accumulate gives the running max of hi
    # within each column.
    offset = col * (float(hi.max() - lo.min()) + 1.0) - lo.min()
    run = np.maximum.accumulate(hi + offset) - offset
    del offset
    start = np.ones(len(col), dtype=bool)
    start[1:] = (col[1:] != col[:-1]) | (lo[1:] > run[:-1] + _MERGE_GAP)
    del run
    starts = np.flatnonzero(start)
    sid = np.cumsum(start) - 1
    span_col = col[starts]
    span_bottom = lo[starts]
    span_top = np.maximum.reduceat(hi, starts)
    progress.at(0.8)
    near_top = walk & (hi >= span_top[sid] - climb)
    span_walk = np.add.reduceat(near_top.astype(np.int64), starts) > 0
    score = np.where(near_top, hi, -np.inf)
    best = np.maximum.reduceat(score, starts)
    pick = near_top & (score == best[sid])
    span_label = np.maximum.reduceat(np.where(pick, label, -1), starts)
    floor_top = np.where(span_walk, best, span_top)
    ceiling = np.full(len(starts), np.inf)
    same = span_col[1:] == span_col[:-1]
    ceiling[:-1][same] = span_bottom[1:][same]
    return span_col, span_bottom, span_top, floor_top, ceiling, span_walk, span_label


def _inside_solids(span_col: np.ndarray, span_top: np.ndarray, shells: np.ndarray, grid: _Grid) -> np.ndarray:
    """Per floor: is it inside a solid, i.e. do the closed shells above its column centre wind
    around it (each crossing counts +1 where the surface faces up, -1 where it faces down)?

    A crate's top faces up with nothing below it inside the crate, so the ground enclosed by the
    crate is inside; a slab above a floor adds -1 + 1 and a room shell seen from inside -1. One
    surface met twice (a centre on an edge shared by two of its triangles) counts once.
    """
    normal = np.cross(shells[:, 1] - shells[:, 0], shells[:, 2] - shells[:, 0])
    tilted = np.abs(normal[:, 2]) > UPRIGHT_NZ * np.linalg.norm(normal, axis=1)
    facing = np.where(normal[tilted, 2] > 0, 1, -1).astype(np.int32)
    col, z, _, _, sign = _sample_centres(shells[tilted], facing, grid)
    if len(col) == 0 or len(span_col) == 0:
        return np.zeros(len(span_col), dtype=bool)
    zbase = min(float(z.min()), float(span_top.min()))
    stride = max(float(z.max()), float(span_top.max())) - zbase + 1.0
    key = col * stride + (z - zbase)
    order = np.argsort(key, kind="stable")
    key, sign = key[order], sign[order]
    repeat = np.zeros(len(key), dtype=bool)
    repeat[1:] = (col[order][1:] == col[order][:-1]) & (np.diff(key) < _SAME_SURFACE) & (sign[1:] == sign[:-1])
    winding = np.concatenate([[0], np.cumsum(np.where(repeat, 0, sign))])
    above = np.searchsorted(key, span_col * stride + (span_top - zbase) + _SAME_SURFACE, side="right")
    column_end = np.searchsorted(key, (span_col + 1) * stride - 0.5, side="left")
    return winding[column_end] - winding[above] > 0


def _link_spans(
    col, x, y, z, floor: tuple, ceiling, grid: _Grid, params: BakeParams, progress: Progress = SILENT
) -> np.ndarray:
    """Link each span to the best passable span of each neighbour column; links are mutual.

    The step between two floors is measured where their columns meet, each floor carried there
    along its own slope but not past its triangle's lowest or highest point (floor: each span's
    row of the per-triangle slopes and ranges, as Heightfield.floor_triangle, floor_slope and
    floor_range, and (each span's row of the floor mesh, the floor mesh of ends._floor_mesh, its
    triangles' slopes) for _overlap_steps): a ramp steeper than agent_max_climb per cell
    is one floor, where comparing heights at the column centres (Recast) would cut it into strips a
    cell wide; a stair's riser is the same step either way. Where the two floors' triangles overlap
    seen from above between the centres, the smallest step there counts too (_overlap_steps): the
    foot of a steep ramp laid on a floor, short of the columns' border, is a step of zero."""
    s = len(z)
    counts = np.bincount(col, minlength=grid.width * grid.height)
    first = np.cumsum(counts) - counts
    links = np.full((s, 4), -1, dtype=index_dtype(s))  # int32 while span ids fit: half the memory
    half = 0.5 * grid.cs
    triangle, slope, bounds, _ = floor
    low, high = bounds[triangle, 0], bounds[triangle, 1]
    for d in range(4):
        progress.at(d / 5)
        rise = (half * (slope[:, 0] * DIR_DX[d] + slope[:, 1] * DIR_DY[d]))[triangle]
        # Every floor's height at its border with the column opposite d: where the floor of a span
        # that has it as neighbour d meets it.
        there = np.clip(z - rise, low, high)
        for start in range(0, s, _LINK_CHUNK):  # bounds the temporaries on large levels
            part = np.arange(start, min(start + _LINK_CHUNK, s))
            here = np.clip(z[part] + rise[part], low[part], high[part])
            links[part, d] = _best_neighbours(part, d, here, there, x, y, z, ceiling, counts, first, grid, params, floor)
    # Keep a link only when the neighbour picked this span back (only matters when a column holds
    # two floors within climb of one neighbour, possible when agent_height < 2 * agent_max_climb).
    # In place: a link kept one way is kept the other way too, so the later directions see the same.
    progress.at(0.8)
    idx = np.arange(s)
    for d in range(4):
        b = links[:, d]
        has = np.flatnonzero(b >= 0)
        lost = has[links[b[has], (d + 2) % 4] != idx[has]]
        links[lost, d] = -1
    return links


def _overlap_steps(a, b, d, x, y, z, grid: _Grid, floor: tuple) -> np.ndarray:
    """The smallest step between the floors of spans a and their neighbours b in direction d where
    both floors lie on their own triangles' planes, seen from above, on the way between the two
    column centres (inf where they do not overlap there). Symmetric in a and b."""
    triangle, slope, _, planes = floor
    rows, floor_mesh, plane_slopes = planes
    step = grid.cs * np.array([DIR_DX[d], DIR_DY[d]], dtype=np.float64)
    centre = lambda s: grid.bmin + (np.column_stack([x[s], y[s]]) + 0.5) * grid.cs
    reach = lambda s, sign: _plane_reach(rows[s], centre(s), np.tile(sign * step, (len(s), 1)), floor_mesh, plane_slopes)
    lo, hi = 1.0 - reach(b, -1.0), reach(a, 1.0)
    # Each floor is a plane over that stretch: the difference is linear in t.
    rise_a, rise_b = slope[triangle[a]] @ step, slope[triangle[b]] @ step
    gap = lambda t: z[a] + t * rise_a - (z[b] - (1.0 - t) * rise_b)
    g0, g1 = gap(lo), gap(hi)
    smallest = np.where(g0 * g1 <= 0.0, 0.0, np.minimum(np.abs(g0), np.abs(g1)))
    return np.where(lo <= hi, smallest, np.inf)


def _best_neighbours(part, d, here, there, x, y, z, ceiling, counts, first, grid: _Grid, params: BakeParams, floor):
    """For the spans `part`, the passable span of neighbour column d with the smallest step (-1 if
    none): the step within agent_max_climb (here: each span's floor at that border; there: every
    floor at the opposite border; or _overlap_steps where that is less) and the headroom above both
    floors at least agent_height."""

    def steps(a, b, dz):
        far = np.flatnonzero(dz > params.agent_max_climb)
        dz[far] = np.minimum(dz[far], _overlap_steps(part[a[far]], b[far], d, x, y, z, grid, floor))
        return dz

    nx, ny = x[part] + DIR_DX[d], y[part] + DIR_DY[d]
    inside = (nx >= 0) & (nx < grid.width) & (ny >= 0) & (ny < grid.height)
    ncol = np.where(inside, ny * grid.width + nx, 0)
    cnt = np.where(inside, counts[ncol], 0)
    base = first[ncol]
    zp, cp = z[part], ceiling[part]
    # First candidate of every neighbour column in one pass (most columns hold one span).
    cand = np.where(cnt > 0, base, 0)
    dz = steps(np.arange(len(part)), cand, np.abs(there[cand] - here))
    room = np.minimum(cp, ceiling[cand]) - np.maximum(zp, z[cand])
    ok = (cnt > 0) & (dz <= params.agent_max_climb) & (room >= params.agent_height)
    best = np.where(ok, cand, -1)
    best_dz = np.where(ok, dz, np.inf)
    k = 1
    active = np.flatnonzero(cnt > k)
    while active.size:
        cand = base[active] + k
        dz = steps(active, cand, np.abs(there[cand] - here[active]))
        room = np.minimum(cp[active], ceiling[cand]) - np.maximum(zp[active], z[cand])
        ok = (dz <= params.agent_max_climb) & (room >= params.agent_height) & (dz < best_dz[active])
        best[active[ok]] = cand[ok]
        best_dz[active[ok]] = dz[ok]
        k += 1
        active = active[cnt[active] > k]
    return best
