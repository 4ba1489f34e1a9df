"""Spans: fragments merged per column into solid spans (exact heights), floors inside closed solids
dropped, and each floor linked to the best passable floor of each neighbour column."""

from __future__ import annotations

import numpy as np

from ..components import index_dtype, sorted_starts
from ..geometry import HEIGHT_NOISE, STEP_NOISE, UPRIGHT_NZ
from ..params import BakeParams
from ..progress import SILENT, Progress
from .ends import _plane_reach, _touching_boxes
from .field import DIR_DX, DIR_DY
from .rasterise import _concat_frags, _Grid, _rasterise_conservative, _sample_centres

# Fragments whose z-intervals are closer than this merge into one span (float noise, touching solids).
_MERGE_GAP = 1e-5
# A surface this little (m) above a floor's top is the floor's own to the inside-solid test.
_SAME_SURFACE = 1e-4
# The inside-solid test samples the shells this far (in cells, x and y) off each column centre:
# not a round number, so no modelled edge passes through the point it samples.
_SOLID_PROBE_SHIFT = (1.37e-6, 2.91e-6)
# Fragments merged into spans at a time (whole columns: a run ends at a column's end).
_MERGE_CHUNK = 1 << 18
# The inside-solid test samples the shells over bands of rows of about this many columns.
_SOLID_BAND_COLUMNS = 1 << 17
# Spans linked at a time (bounds the temporaries of the neighbour search).
_LINK_CHUNK = 1 << 16
# A column whose centre misses the floor takes it where floor lies this far (a share of a cell) from
# its centre on both sides, along an axis or a diagonal, within a climb of one height: its centre
# falls in a crack narrower than a cell (modular tiles a few centimetres apart), which Recast's
# voxels, holding every surface touching them, close.
_CRACK_PROBE = 0.5
# A probe point this share of a triangle's size squared outside its edges is inside it (rounding).
_INSIDE_SLACK = 1e-12
# Two floor pieces whose stretches on their own planes along a step miss each other by at most this
# (m) meet there: the rounding of where pieces modelled edge to edge, each placed by its own
# transform, end (1e-14 of a step in float64, about 1e-5 m 100 m from the origin in float32). A
# tilted floor of such tiles at agent_max_climb 0, met nowhere else within a climb, fell into islands.
_STRETCH_NOISE = 1e-4


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

    Fragments are merged in runs of whole columns of about _MERGE_CHUNK, into arrays made once
    (bounds the temporaries, and holds no second copy of the spans).
    """
    # Offset by column as in _column_order, one accumulate gives the running max of hi within
    # each column.
    stride, zbase = float(hi.max() - lo.min()) + 1.0, lo.min()
    bounds = np.searchsorted(col, col[np.arange(_MERGE_CHUNK, len(col), _MERGE_CHUNK)])
    runs = [(a, b) for a, b in zip(np.r_[0, bounds].tolist(), np.r_[bounds, len(col)].tolist()) if a < b]
    start = np.ones(len(col), dtype=bool)
    for a, b in runs:
        offset = col[a:b] * stride - zbase
        run = np.maximum.accumulate(hi[a:b] + offset) - offset
        del offset
        start[a + 1 : b] = (col[a + 1 : b] != col[a : b - 1]) | (lo[a + 1 : b] > run[:-1] + _MERGE_GAP)
    first_span = np.r_[0, np.cumsum([np.count_nonzero(start[a:b]) for a, b in runs])]
    n = int(first_span[-1])
    span_col, span_walk = np.empty(n, dtype=col.dtype), np.empty(n, dtype=bool)
    span_bottom, span_top, floor_top = np.empty(n), np.empty(n), np.empty(n)
    span_label = np.empty(n, dtype=label.dtype)
    for k, (a, b) in enumerate(runs):
        progress.at(k / len(runs))
        out = slice(first_span[k], first_span[k + 1])
        starts = np.flatnonzero(start[a:b])
        sid = np.cumsum(start[a:b]) - 1
        top = np.maximum.reduceat(hi[a:b], starts)
        near_top = walk[a:b] & (hi[a:b] >= top[sid] - climb - STEP_NOISE)
        span_walk[out] = np.add.reduceat(near_top.astype(np.int64), starts) > 0
        score = np.where(near_top, hi[a:b], -np.inf)
        best = np.maximum.reduceat(score, starts)
        pick = near_top & (score == best[sid])
        span_label[out] = np.maximum.reduceat(np.where(pick, label[a:b], -1), starts)
        span_col[out], span_bottom[out], span_top[out] = col[a:b][starts], lo[a:b][starts], top
        floor_top[out] = np.where(span_walk[out], best, top)
    ceiling = np.full(n, np.inf)
    same = span_col[1:] == span_col[:-1]
    ceiling[:-1][same] = span_bottom[1:][same]
    return span_col, span_bottom, span_top, floor_top, ceiling, span_walk, span_label


def _sample_cracks(corners: np.ndarray, labels: np.ndarray, grid: _Grid, centres: tuple, climb: float):
    """Floor fragments (as _sample_centres gives them) for the columns no floor triangle holds at
    their centre, but whose two neighbours on opposite sides along an axis or a diagonal hold one,
    where floor lies _CRACK_PROBE cells from the centre on both sides along that line, the two
    within a climb of each other: at their mean height, with the triangle's label on the positive
    side. corners: (F, 3, 3) the floor triangles, labels (F,) theirs; centres: the centre samples.
    Sampling at centres alone would leave such a column a hole in the floor, a crack narrower than
    a cell the heightfield splits the floor at.
    """
    has = np.zeros(grid.width * grid.height, dtype=bool)
    has[centres[0]] = True
    pad = np.pad(has.reshape(grid.height, grid.width), 1)
    lines = ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, -1.0))

    def shifted(dx: int, dy: int) -> np.ndarray:
        return pad[1 + dy : 1 + dy + grid.height, 1 + dx : 1 + dx + grid.width].ravel()

    columns = np.zeros_like(has)
    for dx, dy in lines:
        columns |= shifted(int(dx), int(dy)) & shifted(-int(dx), -int(dy))
    columns &= ~has
    if not columns.any() or not len(corners):
        return _concat_frags([])
    near = _touching_boxes(columns, corners[:, :, :2], grid)
    col, _, _, _, row = _rasterise_conservative(corners[near], grid, columns=columns, closed=True)
    tri = near[row]
    centre = grid.bmin + (np.column_stack([col % grid.width, col // grid.width]) + 0.5) * grid.cs
    p = corners[tri]
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    edge = np.roll(p[:, :, :2], -1, axis=1) - p[:, :, :2]
    size = np.abs(edge).sum(axis=(1, 2))
    parts = []
    for line in lines:
        unit = np.array(line) / np.hypot(*line)
        hits = []
        for sign in (1.0, -1.0):
            q = centre + sign * _CRACK_PROBE * grid.cs * unit
            rel = q[:, None, :] - p[:, :, :2]
            side = edge[..., 0] * rel[..., 1] - edge[..., 1] * rel[..., 0]
            inside = (side >= -_INSIDE_SLACK * size[:, None] ** 2).all(axis=1)
            z = p[:, 0, 2] - ((q - p[:, 0, :2]) * normal[:, :2]).sum(axis=1) / normal[:, 2]
            z = np.clip(z, p[:, :, 2].min(axis=1), p[:, :, 2].max(axis=1))
            hits.append((col[inside], z[inside], tri[inside]))
        (ca, za, ta), (cb, zb, _) = hits
        # Each positive-side hit against the negative-side hit of its column nearest in height:
        # columns are offset by more than the heights' range and two climbs, so a key within a
        # climb is in the same column.
        zbase = min(float(za.min(initial=0.0)), float(zb.min(initial=0.0)))
        stride = max(float(za.max(initial=0.0)), float(zb.max(initial=0.0))) - zbase + 2 * climb + 1.0
        key_b = np.sort(cb * stride + (zb - zbase))
        key_a = ca * stride + (za - zbase)
        if not len(key_b):
            continue
        at = np.searchsorted(key_b, key_a)
        below, above = key_b[np.maximum(at - 1, 0)] - key_a, key_b[np.minimum(at, len(key_b) - 1)] - key_a
        rise = np.where(np.abs(below) <= np.abs(above), below, above)
        meets = np.abs(rise) <= climb + STEP_NOISE
        parts.append((ca[meets], za[meets] + 0.5 * rise[meets], labels[ta[meets]]))
    col, z, label = (np.concatenate(part) for part in zip(*parts)) if parts else (np.zeros(0),) * 3
    if not len(col):
        return _concat_frags([])
    # One floor per column: the highest found.
    order = np.lexsort((z, col))
    last = order[np.r_[col[order][1:] != col[order][:-1], True]]
    col, z, label = col[last], z[last], label[last]
    return col, z, z.copy(), np.ones(len(col), dtype=bool), label


def _floors_off_centre(
    spans: tuple, floor: tuple, floor_corners: np.ndarray, floor_ids: np.ndarray, grid: _Grid, params: BakeParams
):
    """The spans whose column centre holds no floor within agent_max_climb of their top, their
    centre over a steep face that is a step between floors (a leaning riser, a curb's chamfer),
    take the highest floor triangle touching their column (its closed square) within a climb of
    the span's top and bottom, as Recast's span merge takes a span's walkable flag from any
    walkable surface within walkableClimb of its top. A flight whose risers lean would otherwise
    have no floor over each riser, and be cut across there. A column whose solid reaches lower than
    a climb under that triangle (a wall's foot beside a platform) keeps no floor: its centre is off
    the platform, beside the wall.

    spans: (column, bottom, top, ceiling) of every span, in _column_order. floor: (walkable flag,
    floor top, label) of each, as _merge_spans gives them: such spans are made floors in these
    arrays, in place (copies would be the stage's peak), and they are returned.
    Their floor is that triangle's plane at the column centre, within the triangle's heights (as
    _link_spans carries a floor to a column border). floor_corners: (F, 3, 3) the floor triangles,
    soup triangles floor_ids (F,).
    """
    span_col, bottom, top, ceiling = spans
    walk, floor_top, label = floor
    climb = params.agent_max_climb + STEP_NOISE
    # Only a span at most two climbs tall can hold a floor within a climb of its top and bottom.
    bare = ~walk & (ceiling - top >= params.agent_height - HEIGHT_NOISE) & (top - bottom <= 2 * climb)
    if not bare.any() or not len(floor_corners):
        return walk, floor_top, label
    columns = np.zeros(grid.width * grid.height, dtype=bool)
    columns[span_col[bare]] = True
    near = _touching_boxes(columns, floor_corners[:, :, :2], grid)
    col, lo, hi, _, row = _rasterise_conservative(floor_corners[near], grid, columns=columns, closed=True)
    # Each piece of floor with the span of its column it touches: the last starting below its top.
    zbase = min(float(bottom.min()), float(lo.min(initial=np.inf)))
    stride = max(float(top.max()), float(hi.max(initial=-np.inf))) - zbase + 1.0
    # The spans' key (column * stride + (bottom - zbase)) built in one array.
    key = bottom - zbase
    key += span_col * stride
    at = np.searchsorted(key, col * stride + (hi + _MERGE_GAP - zbase), "right") - 1
    del key
    at = np.maximum(at, 0)
    meets = (span_col[at] == col) & bare[at] & (lo <= top[at] + _MERGE_GAP) & (hi >= top[at] - climb)
    meets &= hi - bottom[at] <= climb
    meets &= ceiling[at] - np.maximum(top[at], hi) >= params.agent_height - HEIGHT_NOISE
    at, hi, tri = at[meets], hi[meets], near[row[meets]]
    # The highest piece per span.
    order = np.lexsort((hi, at))
    last = order[np.r_[at[order][1:] != at[order][:-1], True]] if len(at) else order
    at, tri = at[last], tri[last]
    corners = floor_corners[tri]
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    centre = grid.bmin + (np.column_stack([span_col[at] % grid.width, span_col[at] // grid.width]) + 0.5) * grid.cs
    z = corners[:, 0, 2] - ((centre - corners[:, 0, :2]) * normal[:, :2]).sum(axis=1) / normal[:, 2]
    walk[at] = True
    floor_top[at] = np.clip(z, corners[:, :, 2].min(axis=1), corners[:, :, 2].max(axis=1))
    label[at] = floor_ids[tri]
    return walk, floor_top, label


def _row_bands(span_col: np.ndarray, corners: np.ndarray, grid: _Grid):
    """The grid's rows a band at a time (_SOLID_BAND_COLUMNS columns), for those holding floors:
    (rows, lo, hi, near) with the floors of its columns span_col[lo:hi] (span_col in column order)
    and which triangles (corners (T, 3, 3)) reach its rows, a row's margin either side."""
    low_row = np.floor((corners[:, :, 1].min(axis=1) - grid.bmin[1]) / grid.cs).astype(np.int64) - 1
    high_row = np.floor((corners[:, :, 1].max(axis=1) - grid.bmin[1]) / grid.cs).astype(np.int64) + 1
    band = max(1, _SOLID_BAND_COLUMNS // grid.width)
    for first in range(0, grid.height, band):
        rows = range(first, min(first + band, grid.height))
        # In the columns' own dtype: other keys would convert every column id, in each band.
        bounds = np.array([rows.start * grid.width, rows.stop * grid.width], dtype=span_col.dtype)
        lo, hi = np.searchsorted(span_col, bounds)
        if lo < hi:
            yield rows, lo, hi, (high_row >= rows.start) & (low_row < rows.stop)


def _inside_solids(span_col: np.ndarray, span_top: np.ndarray, shells: np.ndarray, grid: _Grid) -> np.ndarray:
    """Per floor (span_col in column order): is it inside a solid, i.e. do the closed shells above
    its column centre wind around it (each crossing counts +1 where the surface faces up, -1 where
    it faces down)?

    A crate's top faces up with nothing below it inside the crate, so the ground enclosed by the
    crate is inside; a slab above a floor adds -1 + 1 and a room shell seen from inside -1. The
    shells are sampled a hair off the centre (_SOLID_PROBE_SHIFT), on no modelled edge: at a
    centre on an edge, the surfaces met there would each count once or twice depending on how many
    of their triangles share the edge (stair steps as boxes side by side, the bottoms of two meeting
    at a centre while their tops differ in height), and the count would be wrong.

    The shells are sampled a band of rows at a time: their samples at every column centre are as
    many as the fragments, and the level's largest arrays while held all at once.
    """
    inside = np.zeros(len(span_col), dtype=bool)
    normal = np.cross(shells[:, 1] - shells[:, 0], shells[:, 2] - shells[:, 0])
    tilted = np.abs(normal[:, 2]) > UPRIGHT_NZ * np.linalg.norm(normal, axis=1)
    shells = shells[tilted]
    if len(shells) == 0 or len(span_col) == 0:
        return inside
    facing = np.where(normal[tilted, 2] > 0, 1, -1).astype(np.int32)
    shells = shells.copy()
    shells[:, :, :2] -= np.array(_SOLID_PROBE_SHIFT) * grid.cs  # the same as moving the centres by it
    zbase = min(float(shells[:, :, 2].min()), float(span_top.min()))
    stride = max(float(shells[:, :, 2].max()), float(span_top.max())) - zbase + 1.0
    for rows, lo, hi, near in _row_bands(span_col, shells, grid):
        col, z, _, _, sign = _sample_centres(shells[near], facing[near], grid, rows, tol_cells=0.0)
        if len(col) == 0:
            continue
        # Columns counted from the band's first: smaller keys, finer float steps between heights.
        base = rows.start * grid.width
        key = (col - base) * stride + (z - zbase)
        order = np.argsort(key, kind="stable")
        key, sign = key[order], sign[order]
        winding = np.concatenate([[0], np.cumsum(sign)])
        here = span_col[lo:hi] - base
        above = np.searchsorted(key, here * stride + (span_top[lo:hi] - zbase) + _SAME_SURFACE, side="right")
        column_end = np.searchsorted(key, (here + 1) * stride - 0.5, side="left")
        inside[lo:hi] = winding[column_end] - winding[above] > 0
    return inside


def _under_steep(
    span_col: np.ndarray, z: np.ndarray, tris: np.ndarray, tops: tuple, grid: _Grid, params: BakeParams
) -> np.ndarray:
    """Per floor (span_col in column order, floor heights z): does its column centre lie under a
    triangle that is no floor (tris (T, 3, 3): too steep, or not walkable), above the floor and
    below head height, where that triangle, or the steep surface rising from it, rises more than
    a climb above the floor with no floor to step onto within a climb (tops: ends._blocking_tops
    of tris)? The agent would stand inside what blocks it: the floor running on under the foot of a cone, a
    tapered rock or a box leaning away, below a climb there, is no floor. (Merged into the floor's
    span within a climb, such a triangle is no ceiling.) A curb or a slanted riser that stays below
    a climb is still stepped onto. Sampled a band of rows at a time, as _inside_solids."""
    under = np.zeros(len(span_col), dtype=bool)
    normal = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    tilted = np.abs(normal[:, 2]) > UPRIGHT_NZ * np.linalg.norm(normal, axis=1)
    tris, top, step = tris[tilted], tops[0][tilted], tops[1][tilted]
    if len(tris) == 0 or len(span_col) == 0:
        return under
    for rows, lo, hi, near_mask in _row_bands(span_col, tris, grid):
        near = np.flatnonzero(near_mask)
        col, height, _, _, tri = _sample_centres(tris[near], near, grid, rows, tol_cells=0.0)
        first = lo + np.searchsorted(span_col[lo:hi], col, "left")
        count = lo + np.searchsorted(span_col[lo:hi], col, "right") - first
        k = 0
        active = np.flatnonzero(count > 0)
        while active.size:  # each sample against each floor of its column
            s = first[active] + k
            hit = (
                (height[active] > z[s] + HEIGHT_NOISE)
                & (height[active] < z[s] + params.agent_height - HEIGHT_NOISE)
                & (top[tri[active]] > z[s] + params.agent_max_climb + STEP_NOISE)
                & (step[tri[active]] > z[s] + params.agent_max_climb + STEP_NOISE)
            )
            under[s[hit]] = True
            k += 1
            active = active[count[active] > k]
    return under


def _link_spans(
    col, x, y, z, lift, floor: tuple, ceiling, grid: _Grid, params: BakeParams, progress: Progress = SILENT
):
    """Link each span to the best passable span of each neighbour column; links are mutual.

    The step and the headroom between two floors are measured where their columns meet, each floor
    carried there along its own slope but not past its triangle's lowest or highest point (floor:
    each span's row of the per-triangle slopes and ranges, as Heightfield.floor_triangle,
    floor_slope and floor_range): a ramp steeper than agent_max_climb per cell is one floor, where
    comparing heights at the column centres (Recast) would cut it into strips a cell wide; a
    stair's riser is the same step either way. The headroom there is the lower of the two columns'
    ceilings above the higher of the two floors there.

    lift: how far each span's solid rises above its floor in its column. The lower floor's solid top
    is a step between the two (_steps): a tread narrower than a cell whose column centre lies on the
    tread below, and whose own column is the higher floor's (the slab the flight climbs to, thinner
    than a riser, makes a ceiling over it there), is still climbed, as Recast's span tops climb it.

    Returns the links and the candidate pairs (a, b, d) that failed only on that step while their
    floors' planes come within a climb step of each other between the centres, for
    _link_overlaps."""
    s = len(z)
    # Column c's spans are col_start[c]:col_start[c + 1]; int32 while span ids fit, one entry per column.
    col_start = sorted_starts(col, grid.width * grid.height)
    links = np.full((s, 4), -1, dtype=index_dtype(s))
    half = 0.5 * grid.cs
    triangle, slope, bounds = floor
    near: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    there = np.empty(s)
    for d in range(4):
        progress.at(d / 5)
        rise = half * (slope[:, 0] * DIR_DX[d] + slope[:, 1] * DIR_DY[d])  # per floor triangle
        # Every floor's height at its border with the column opposite d: where the floor of a span
        # that has it as neighbour d meets it. In chunks, as below (these are the spans' size).
        for start in range(0, s, _LINK_CHUNK):
            chunk = slice(start, start + _LINK_CHUNK)
            tri = triangle[chunk]
            there[chunk] = np.clip(z[chunk] - rise[tri], bounds[tri, 0], bounds[tri, 1])
        for start in range(0, s, _LINK_CHUNK):  # bounds the temporaries on large levels
            part = np.arange(start, min(start + _LINK_CHUNK, s))
            tri = triangle[part]
            here = np.clip(z[part] + rise[tri], bounds[tri, 0], bounds[tri, 1])
            links[part, d] = _best_neighbours(
                part, d, here, there, x, y, z, lift, ceiling, col_start, grid, params, floor, near
            )
    # Keep a link only when the neighbour picked this span back (only matters when a column holds
    # two floors within climb of one neighbour, possible when agent_height < 2 * agent_max_climb).
    # In place: a link kept one way is kept the other way too, so the later directions see the same.
    progress.at(0.8)
    del there
    for d in range(4):
        for start in range(0, s, _LINK_CHUNK):  # each span's link read before it changes: exact in chunks
            has = start + np.flatnonzero(links[start : start + _LINK_CHUNK, d] >= 0)
            links[has[links[links[has, d], (d + 2) % 4] != has], d] = -1
    if not near:
        return links, (np.zeros(0, dtype=np.int64),) * 3
    return links, tuple(np.concatenate(column) for column in zip(*near))


def _plane_gaps(a, b, d, z, slope, triangle, cs: float):
    """(gap at t = 0, gap at t = 1): the height of span a's floor plane above span b's, along the
    step from a's centre (t = 0) to the centre of its neighbour column d, b's (t = 1)."""
    step = cs * np.array([DIR_DX[d], DIR_DY[d]], dtype=np.float64)
    rise_a, rise_b = slope[triangle[a]] @ step, slope[triangle[b]] @ step
    g0 = z[a] - (z[b] - rise_b)
    return g0, g0 + rise_a - rise_b


def _closest(g0, g1):
    """The least |gap| over t in [0, 1] of a gap linear in t from g0 to g1."""
    return np.where(g0 * g1 <= 0.0, 0.0, np.minimum(np.abs(g0), np.abs(g1)))


def _link_overlaps(links, near: tuple, x, y, z, grid: _Grid, floor: tuple, plane: tuple, climb: float) -> None:
    """Link the near pairs of _link_spans, in place, where the two floors come within `climb` of
    each other between the column centres at a point where both lie on their own triangles' planes
    (_overlap_steps): the foot of a steep ramp laid on a floor, short of the columns' border, is a
    step of zero where the step at the border is more than a climb. Spans linked already in that
    direction stay as they are; links are mutual, each span taking the pair with the least step."""
    a_all, b_all, d_all = near
    for d in range(4):
        pick = np.flatnonzero(d_all == d)
        a, b = a_all[pick], b_all[pick]
        free = (links[a, d] < 0) & (links[b, (d + 2) % 4] < 0)
        a, b = a[free], b[free]
        steps = _overlap_steps(a, b, d, x, y, z, grid, floor, plane)
        ok = steps <= climb + STEP_NOISE
        # Each span's least step: sorted by step, the first pair of each a and of each b.
        order = np.flatnonzero(ok)[np.argsort(steps[ok], kind="stable")]
        a, b = a[order], b[order]
        first_a = np.zeros(len(a), dtype=bool)
        first_a[np.unique(a, return_index=True)[1]] = True
        first_b = np.zeros(len(b), dtype=bool)
        first_b[np.unique(b, return_index=True)[1]] = True
        both = first_a & first_b
        links[a[both], d] = b[both]
        links[b[both], (d + 2) % 4] = a[both]


def _overlap_steps(a, b, d, x, y, z, grid: _Grid, floor: tuple, plane: tuple) -> np.ndarray:
    """The least step between the floors of spans a and their neighbours b in direction d where both
    lie on their own triangles' planes, seen from above, on the way between the column centres
    (inf where no such stretch is shared, within _STRETCH_NOISE). plane: (each span's soup
    triangle, and the floor mesh and corners_of of ends._plane_reach)."""
    span_tri, floor_mesh, corners_of = plane
    step = grid.cs * np.array([DIR_DX[d], DIR_DY[d]], dtype=np.float64)

    def reach(s, sign):
        centre = grid.bmin + (np.column_stack([x[s], y[s]]) + 0.5) * grid.cs
        rows = floor_mesh[0][span_tri[s]]
        return _plane_reach(rows, centre, np.tile(sign * step, (len(s), 1)), floor_mesh, corners_of)

    lo, hi = 1.0 - reach(b, -1.0), reach(a, 1.0)
    g0, g1 = _plane_gaps(a, b, d, z, floor[1], floor[0], grid.cs)
    at_lo, at_hi = g0 + lo * (g1 - g0), g0 + hi * (g1 - g0)
    return np.where(lo <= hi + _STRETCH_NOISE / grid.cs, _closest(at_lo, at_hi), np.inf)


def _steps(a, b, here, there, z, lift) -> np.ndarray:
    """The step between floors a (at `here`) and b (at `there`) at their border: straight up or down,
    or by way of the lower one's solid top where a solid rises above that floor in its column and
    its top lies between (each of the two steps then). A floor with nothing on it is no such step,
    even where it slopes up from the border toward its column's centre."""
    low = np.where(here <= there, a, b)
    top = z[low] + lift[low]
    f_low, f_high = np.minimum(here, there), np.maximum(here, there)
    riser = (lift[low] > STEP_NOISE) & (top > f_low)
    via = np.where(riser, np.maximum(top - f_low, np.abs(f_high - top)), np.inf)
    return np.minimum(f_high - f_low, via)


def _best_neighbours(
    part, d, here, there, x, y, z, lift, ceiling, col_start, grid: _Grid, params: BakeParams, floor: tuple, near: list
):
    """For the spans `part`, the passable span of neighbour column d with the smallest step (-1 if
    none): the step within agent_max_climb (here: each span's floor at that border; there: every
    floor at the opposite border) and the headroom above both floors there at least agent_height.

    Appends to `near` the candidates (a, b, d) with the headroom whose step is too high at the
    border but whose floors' planes come within agent_max_climb between the centres."""
    climb = params.agent_max_climb + STEP_NOISE
    triangle, slope, _ = floor

    def note_near(a, b, dz, room):
        far = np.flatnonzero((dz > climb) & (room >= params.agent_height - HEIGHT_NOISE))
        g0, g1 = _plane_gaps(a[far], b[far], d, z, slope, triangle, grid.cs)
        far = far[_closest(g0, g1) <= climb]
        if far.size:
            near.append((a[far], b[far], np.full(far.size, d)))

    nx, ny = x[part] + DIR_DX[d], y[part] + DIR_DY[d]
    inside = (nx >= 0) & (nx < grid.width) & (ny >= 0) & (ny < grid.height)
    ncol = np.where(inside, ny * grid.width + nx, 0)
    base = col_start[ncol]
    cnt = np.where(inside, col_start[ncol + 1] - base, 0)
    cp = ceiling[part]
    # First candidate of every neighbour column in one pass (most columns hold one span).
    cand = np.where(cnt > 0, base, 0)
    dz = _steps(part, cand, here, there[cand], z, lift)
    room = np.minimum(cp, ceiling[cand]) - np.maximum(here, there[cand])
    ok = (cnt > 0) & (dz <= climb) & (room >= params.agent_height - HEIGHT_NOISE)
    note_near(part[cnt > 0], cand[cnt > 0], dz[cnt > 0], room[cnt > 0])
    best = np.where(ok, cand, -1)
    best_dz = np.where(ok, dz, np.inf)
    k = 1
    active = np.flatnonzero(cnt > k)
    while active.size:
        cand = base[active] + k
        dz = _steps(part[active], cand, here[active], there[cand], z, lift)
        room = np.minimum(cp[active], ceiling[cand]) - np.maximum(here[active], there[cand])
        ok = (dz <= climb) & (room >= params.agent_height - HEIGHT_NOISE) & (dz < best_dz[active])
        note_near(part[active], cand, dz, room)
        best[active[ok]] = cand[ok]
        best_dz[active[ok]] = dz[ok]
        k += 1
        active = active[cnt[active] > k]
    return best
