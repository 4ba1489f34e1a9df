"""Floor ends: where the floor really ends on each missing link (a wall's face, a ledge's edge), as
a fraction of the step, and the boundary segments built from them."""

from __future__ import annotations

import numpy as np

from ..components import index_dtype, run_positions, sorted_starts, unique_pairs
from ..geometry import COLLINEAR, HEIGHT_NOISE, STEP_NOISE, cross_vectors
from ..params import BakeParams
from .field import DIR_DX, DIR_DY, Heightfield
from .rasterise import _Grid, _rasterise_conservative

# The far side of the neighbour column, in centre-to-centre steps.
_NEIGHBOUR_FAR_SIDE = 1.5
# Floor triangles a ledge trace may cross within one centre-to-centre step before it gives up.
_LEDGE_TRACE_STEPS = 8
# A ledge edge is recorded within a square this many cells wide around each exit point through it:
# consecutive exits along a straight ledge lie at most sqrt(2) cells apart, so the pieces overlap.
_LEDGE_CLIP = 2.0
# A trace step whose cross product with a boundary edge is at most this share of the edge's size
# runs parallel to it: it does not cross it.
_PARALLEL = 1e-12
# Steep triangles _blocking_tops follows up a steep surface from a triangle's top.
_REACH_ROUNDS = 16
# A triangle whose unit normal's z is below minus this faces down (it leans over more than about a
# degree past upright).
_FACING_DOWN = 0.02
# Fragments _own_samples matches to their floors at a time (bounds its int64 temporaries).
_SAMPLE_CHUNK = 1 << 18
# Spans whose neighbour columns _walls tests at once (bounds its temporaries, about 100 B a span).
_WALL_CHUNK = 1 << 16
# (look, triangle) pairs whose band parts _wall_fractions cuts at a time, to test the step against
# them or to outline them: about 1 kB of temporaries each (a 150k-triangle terrain's first round of
# 78k looks raised its peak by 57 MB at once).
_PART_PAIRS = 1 << 14
# Floor triangles whose slopes (dz/dx, dz/dy) differ by at most this are one plane to _plane_reach.
_COPLANAR_SLOPE = 1e-9
# Floor within this many cells beyond a ledge edge, within a climb of its height, continues the
# floor along the part of the edge it lies beside (another object's floor touching or overlapping
# the edge, float noise or a hairline crack between modular tiles): no ledge there.
_SEAM_GAP = 0.1
# Floor pieces a ledge trace enters within this share of a step of the earliest are entered at the
# same point to _floor_beyond (rounding of where the trace meets their edges), which takes the one
# it stays in longest.
_SEAM_NOISE = 1e-9


def _blocking_tops(points: np.ndarray, welded: np.ndarray, floor_tri: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per soup triangle, (T,) each: how high it counts as rising when deciding whether it blocks
    from the floor up (a steep triangle does where that is more than a climb above the floor): a
    floor triangle's, or a steep one's whose top touches a floor triangle (a riser under its tread,
    a curb, a box under its top), own top; any other steep triangle's the top of the steep surface
    rising from its top, through the steep triangles that start there (a cliff's foot, a
    heightmap's first row of wall triangles rising less than a climb, then the rows above: the
    agent cannot stand on it and has nowhere to step up to), followed up to _REACH_ROUNDS
    triangles. And _step_heights: where that is within a climb of the floor, the agent steps up
    onto the floor over the triangle (the low end of a ramp's side), which then blocks only from a
    climb up, as a floor triangle does. An underside (a triangle facing down, more than _FACING_DOWN of its unit
    normal: an overhang, or a flipped copy lying on a floor) never blocks from the floor up, its
    first value -inf: what it hangs from lies above it. points, welded: the soup welded (weld)."""
    z = points[:, 2][welded]
    top, bottom = z.max(axis=1), z.min(axis=1)
    steep = ~floor_tri
    at_top = z >= (top - HEIGHT_NOISE)[:, None]
    on_floor = np.zeros(len(points), dtype=bool)
    on_floor[welded[floor_tri].ravel()] = True
    climbs = steep & ~(at_top & on_floor[welded]).any(axis=1)
    step = _step_heights(points, welded, floor_tri, on_floor)
    # Each vertex's steep triangles that start there (their lowest corner), grouped by vertex.
    rows, corner = np.nonzero(steep[:, None] & (z <= (bottom + HEIGHT_NOISE)[:, None]))
    vertex = welded[rows, corner]
    order = np.argsort(vertex, kind="stable")
    rows, vertex = rows[order], vertex[order]
    starts = np.flatnonzero(np.r_[True, vertex[1:] != vertex[:-1]]) if len(vertex) else np.zeros(0, dtype=np.int64)
    reach = top.copy()
    for _ in range(_REACH_ROUNDS):
        if not len(starts):
            break
        up = np.full(len(points), -np.inf)
        up[vertex[starts]] = np.maximum.reduceat(reach[rows], starts)
        higher = np.where(at_top, up[welded], -np.inf).max(axis=1)
        grown = climbs & (higher > reach)
        if not grown.any():
            break
        reach[grown] = higher[grown]
    steep_rows = np.flatnonzero(steep)  # a floor triangle faces up
    corners = points[welded[steep_rows]]
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    reach[steep_rows[normal[:, 2] < -_FACING_DOWN * np.linalg.norm(normal, axis=1)]] = -np.inf
    return reach, step


def _step_heights(points: np.ndarray, welded: np.ndarray, floor_tri: np.ndarray, on_floor: np.ndarray) -> np.ndarray:
    """(T,) per soup triangle: the lowest point of its upper edges (the triangle lies below them)
    that a floor triangle shares, or of its corners above its foot that a floor triangle holds:
    where the floor runs on over its top (a ramp's top over its side, a tread over its riser); inf
    where there is none, and for floor triangles. A lower edge or the foot a floor shares (a
    wall's foot on the ground) is not stepped over. Measured for the steep triangles only: on a
    terrain most are floor, and (T, 3, 3) temporaries for all raised a 150k-triangle level's peak.
    on_floor: per welded vertex, whether a floor triangle has it."""
    out = np.full(len(welded), np.inf)
    steep = np.flatnonzero(~floor_tri)
    if not len(steep):
        return out
    floor_edges = _edge_keys(welded[floor_tri], len(points)).ravel()
    welded = welded[steep]
    corners = points[welded]
    shared = np.isin(_edge_keys(welded, len(points)), floor_edges)
    del floor_edges
    p, q, c = corners, corners[:, [1, 2, 0]], corners[:, [2, 0, 1]]
    edge, side = q - p, c - p
    along = (side * edge).sum(axis=2) / np.maximum((edge * edge).sum(axis=2), np.finfo(float).tiny)
    below = (side - along[..., None] * edge)[..., 2] < -HEIGHT_NOISE
    low = np.minimum(p[..., 2], q[..., 2])
    over_edges = np.where(shared & below, low, np.inf).min(axis=1)
    # A corner above its foot that a floor holds (a ramp's side cut along its diagonal: the lower
    # half touches the ramp's top at its low end only there).
    z = corners[..., 2]
    held = on_floor[welded] & (z > z.min(axis=1, keepdims=True) + HEIGHT_NOISE)
    out[steep] = np.minimum(over_edges, np.where(held, z, np.inf).min(axis=1))
    return out


def _edge_keys(welded: np.ndarray, n: int) -> np.ndarray:
    """(T, 3) one int64 key per edge of each triangle (corner k to k + 1), the same both ways."""
    a, b = welded, welded[:, [1, 2, 0]]
    return np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b)


def _ledge_segments(hf: Heightfield, span: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(L, 5) boundary segments of the ledge links (span, d) whose floor's end was not traced: a
    cell-wide segment across each step at its link end."""
    step = np.column_stack([DIR_DX[d], DIR_DY[d]]).astype(np.float64)
    mid = hf.centers_xy(span) + (hf.link_end(span, d)[0] * hf.cell_size)[:, None] * step
    half = 0.5 * hf.cell_size * step[:, ::-1]
    return np.column_stack([mid - half, mid + half, hf.z[span]])


def _walls(x, y, z, solid, grid: _Grid, params: BakeParams) -> np.ndarray:
    """(S, 4) bool: whether each span's neighbour column in each direction holds solid inside the
    agent's band (above climb, below head height): where that link is missing, it is a wall. Found
    for every span before the spans are linked (the caller keeps the missing links' entries), so
    the solid spans are not held through the linking. That solid was rasterised conservatively,
    so the true blocking geometry lies uniformly anywhere in the neighbour column: a wall's floor
    ends at the neighbour's centre on average (1.0 of the step) until _wall_fractions finds it.
    Otherwise the floor simply ends (ledge, drop, grid edge): between the two centre samples,
    unbiased at the cell edge (0.5) until _floor_end_fractions finds it."""
    solid_col, solid_bottom, solid_top = solid
    walls = np.zeros((len(z), 4), dtype=bool)
    # Solid spans are sorted by (column, bottom): per column a contiguous run.
    start = sorted_starts(solid_col, grid.width * grid.height)
    for d in range(4):
        for chunk in range(0, len(z), _WALL_CHUNK):  # bounds the temporaries
            span = np.arange(chunk, min(chunk + _WALL_CHUNK, len(z)))
            nx, ny = x[span] + DIR_DX[d], y[span] + DIR_DY[d]
            inside = (nx >= 0) & (nx < grid.width) & (ny >= 0) & (ny < grid.height)
            span, ncol = span[inside], (ny * grid.width + nx)[inside]
            lo, hi = z[span] + params.agent_max_climb + STEP_NOISE, z[span] + params.agent_height - HEIGHT_NOISE
            first = start[ncol]
            count = start[ncol + 1] - first
            del ncol
            wall = np.zeros(len(span), dtype=bool)
            k = 0
            active = np.flatnonzero(count > 0)
            while active.size:
                c = first[active] + k
                wall[active] |= (solid_top[c] > lo[active]) & (solid_bottom[c] < hi[active])
                k += 1
                active = active[count[active] > k]
            walls[span[wall], d] = True
    return walls


def _outer_corners(links: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(span, dx, dy) per column diagonal to a floor span whose two columns beside it (towards
    that diagonal) are both missing links: no link looks into such a column, yet what blocks in it
    can lie within a cell of the floor (a wall's end poking through another wall's face)."""
    missing = links < 0
    span, d = np.nonzero(missing & np.roll(missing, -1, axis=1))
    turned = (d + 1) % 4
    return span, DIR_DX[d] + DIR_DX[turned], DIR_DY[d] + DIR_DY[turned]


def _wall_fractions(
    wall, outer_corners, x, y, z, frags, vertices, triangles, grid: _Grid, params: BakeParams, floors: tuple
):
    """(fraction, found) per wall link: where the line from this centre across the neighbour
    column first meets geometry that blocks the agent there; and the blocking segments (as
    Heightfield.boundary describes them) of those neighbour columns and of the outer corners'
    diagonal columns (outer_corners: _outer_corners), within the band of the span looking into each.
    floors: (walkable (T,) bool per soup triangle: the floor triangles; _blocking_tops;
    floor_triangle (S,), the row of floor_slope each span was sampled from; floor_slope (F, 2),
    dz/dx and dz/dy of each): the floor's plane at each span, from which the steep triangles'
    parts are cut.

    Candidates are the triangles rasterised into the neighbour column within the agent's band
    (above climb, below head height). What blocks is the part of each such triangle within the
    band, seen from above (_band_part): a ramp (a floor triangle) rising from the floor blocks where
    it has risen more than a climb, not along its foot, which the floor meets at its own height. Any
    other triangle (too steep to walk, or not walkable) blocks from where it leaves the floor's
    plane up to head height: the foot of a cone, a tapered rock or a face leaning away lies nearer
    than its section a climb up, and the agent cannot step onto it. An agent no taller than its
    climb (agent_height <= agent_max_climb) leaves no height between a climb and its head: its band
    is the one height a climb above the floor, which the solid _walls found blocking (from below
    head height to above a climb) crosses, and where the span merge stops taking a face as stepped
    over. Taken as it came, that band was empty: no wall was found and none bounded the floor (at
    radius 0.5 the navmesh came within 0.108 m of a crate). The fraction is the
    first crossing of the line with one of those parts, between the near and far sides of the
    neighbour square (0.5 to 1.5). Where none crosses it (geometry that only clips the neighbour
    square off the line) it stays 1.0, the neighbour centre, not found.

    The segments are the outline of those parts: an edge two triangles share, lying on either side
    of it seen from above (the diagonal of a platform's flat top), is inside the surface they make
    and bounds nothing (_interior_edges). triangles: the soup's, welded (corners into vertices, one
    vertex per position).
    """
    link_span, d = wall
    span, nx, ny, inside, ncol = _looks(wall, outer_corners, x, y, grid)
    out = np.ones(len(link_span))
    col, lo, hi, label = frags
    near = np.flatnonzero(_in_columns(col, ncol[inside], grid))
    near = near[np.argsort(col[near], kind="stable")]
    first = np.searchsorted(col[near], ncol, "left")
    count = np.searchsorted(col[near], ncol, "right") - first
    band_lo = z[span] + params.agent_max_climb + STEP_NOISE
    band_hi = np.maximum(z[span] + params.agent_height - HEIGHT_NOISE, band_lo)  # empty at height <= climb
    start = np.column_stack([grid.bmin[0] + (x[span] + 0.5) * grid.cs, grid.bmin[1] + (y[span] + 0.5) * grid.cs])
    walkable, (tops, step), floor_triangle, floor_slope = floors
    gradient = floor_slope[floor_triangle[span]]

    def from_foot(look, tri):
        """Per (look, soup triangle): does the triangle block from the floor's plane up? A steep
        one does where it (or the steep surface rising from it) rises more than a climb above the
        floor and offers no floor to step onto within a climb (_blocking_tops)."""
        steep = ~walkable[tri] & (tops[tri] > band_lo[look])
        return steep & (step[tri] > band_lo[look])

    def part(look, tri):
        """_band_part of soup triangles tri seen from looks `look`: from the floor's plane up
        where from_foot, else from a climb above the floor."""
        ramp = ~from_foot(look, tri)
        lo = np.where(ramp, band_lo[look], z[span[look]] + HEIGHT_NOISE)
        tilt = (np.where(ramp[:, None], 0.0, gradient[look]), start[look])
        return _band_part(vertices[triangles[tri]], lo, band_hi[look], tilt)

    # Only the wall links' looks (the first) have a step to trace; a corner's gives segments only.
    reach = np.column_stack([DIR_DX[d], DIR_DY[d]]) * (_NEIGHBOUR_FAR_SIDE * grid.cs)
    best = np.full(len(link_span), np.inf)
    seen = []  # (look, triangle) pairs that block
    looking = np.flatnonzero(inside & (count > 0))
    # Every (look, candidate fragment) pair, in runs of looks holding about _PART_PAIRS pairs each.
    batch = (np.cumsum(count[looking]) - count[looking]) // _PART_PAIRS
    firsts = np.flatnonzero(np.diff(batch, prepend=-1)).tolist()
    for a, b in zip(firsts, firsts[1:] + [len(looking)]):
        looks = looking[a:b]
        look = np.repeat(looks, count[looks])
        f = near[np.repeat(first[looks], count[looks]) + run_positions(count[looks])]
        blocks = (hi[f] > band_lo[look]) & (lo[f] < band_hi[look])
        # A steep triangle that rises into the band somewhere, or whose steep surface does
        # (_blocking_tops), blocks from the floor up, also in a column where it stays below a
        # climb (a cone's foot round a floor under its rim).
        steep = (hi[f] > z[span[look]] + HEIGHT_NOISE) & (lo[f] < band_hi[look])
        steep[steep] &= from_foot(look[steep], label[f[steep]])
        blocks |= steep
        seen.append(np.column_stack([look[blocks], label[f[blocks]]]))
        # Only a blocking triangle seen from a wall link can move its fraction: trace those.
        traced = blocks & (look < len(link_span))
        look, f = look[traced], f[traced]
        if not len(look):
            continue
        t = _first_crossing(start[look], reach[look], part(look, label[f])[0]) * _NEIGHBOUR_FAR_SIDE
        # Pairs come grouped by look: each look's nearest crossing.
        head = np.flatnonzero(np.r_[True, look[1:] != look[:-1]])
        best[look[head]] = np.minimum(best[look[head]], np.minimum.reduceat(t, head))
    found = np.isfinite(best)
    out[found] = np.maximum(best[found], 0.5)
    pairs = unique_pairs(np.concatenate(seen)) if seen else np.zeros((0, 2), dtype=np.int64)
    blocking, row = np.unique(pairs[:, 1], return_inverse=True)
    interior_of = _interior_edges(blocking, vertices, triangles)
    row = row.reshape(-1)
    segs = [np.zeros((0, 5))]
    for first in range(0, len(pairs), _PART_PAIRS):  # the parts' temporaries a chunk at a time
        link, tri = pairs[first : first + _PART_PAIRS, 0], pairs[first : first + _PART_PAIRS, 1]
        lo_xy = np.column_stack([grid.bmin[0] + nx[link] * grid.cs, grid.bmin[1] + ny[link] * grid.cs])
        corners, source = part(link, tri)
        interior = interior_of[row[first : first + _PART_PAIRS]]
        k = corners.shape[1]
        for e in range(k):
            p, q, ok = _clip_to_square(corners[:, e], corners[:, (e + 1) % k], lo_xy - grid.cs, 3 * grid.cs)
            along = np.take_along_axis(interior, np.maximum(source[:, e : e + 1], 0), axis=1)[:, 0]
            outline = (source[:, e] < 0) | ~along
            segs.append(np.column_stack([p, q, z[span[link]]])[ok & outline & (p != q).any(axis=1)])
    return out, found, np.unique(np.concatenate(segs), axis=0)


def _looks(wall, outer_corners, x, y, grid: _Grid):
    """(span, nx, ny, inside, column) of each look into a neighbour column of _wall_fractions: each
    wall link's (span, d), then each outer corner's; the column is -1 off the grid."""
    link_span, d = wall
    corner_span, corner_dx, corner_dy = outer_corners
    span = np.concatenate([link_span, corner_span])
    nx = np.concatenate([x[link_span] + DIR_DX[d], x[corner_span] + corner_dx])
    ny = np.concatenate([y[link_span] + DIR_DY[d], y[corner_span] + corner_dy])
    inside = (nx >= 0) & (nx < grid.width) & (ny >= 0) & (ny < grid.height)
    return span, nx, ny, inside, np.where(inside, ny * grid.width + nx, -1)


def _fragments_seen(wall, outer_corners, x, y, frags: tuple, own_samples: tuple, grid: _Grid) -> tuple:
    """The fragments (col, lo, hi, label) in the columns _wall_fractions looks into: all it reads of
    them (the rest, the heightfield's largest arrays, need not be held). frags: those held, in
    their order; own_samples: (column, height, triangle) of the floors whose own sample was not
    held (_own_samples), each the one fragment of its column, made again here."""
    _, _, _, inside, ncol = _looks(wall, outer_corners, x, y, grid)
    looked = np.zeros(grid.width * grid.height, dtype=bool)
    looked[ncol[inside]] = True
    keep = looked[frags[0]]
    sample_col, sample_z, sample_tri = own_samples
    again = looked[sample_col]
    del looked
    col, lo, hi, label = (f[keep] for f in frags)
    return (
        np.concatenate([col, sample_col[again]]),
        np.concatenate([lo, sample_z[again]]),
        np.concatenate([hi, sample_z[again]]),
        np.concatenate([label, sample_tri[again]]),
    )


def _own_samples(frags: tuple, floors: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(per floor, per fragment) bool: the floors (column, height, triangle; in column order) whose
    column holds one fragment, their own sample (at the floor's height, from its triangle), and
    those fragments (col, lo, hi, label; in column order). Such a fragment is made again from the
    floor exactly, so it need not be held (_fragments_seen). A run of fragments at a time: the
    search holds an int64 index per fragment."""
    col, lo, hi, label = frags
    floor_col, floor_z, floor_tri = floors
    n = len(col)
    sampled = np.zeros(len(floor_col), dtype=bool)
    alone = np.zeros(n, dtype=bool)
    if not len(floor_col):
        return sampled, alone
    for a in range(0, n, _SAMPLE_CHUNK):
        b = min(a + _SAMPLE_CHUNK, n)
        # Alone in its column: the fragments before and after it (across the run's ends too) lie in
        # other columns.
        before = max(a - 1, 0)
        c = col[before : b + 1]
        column_ends = np.r_[True, c[1:] != c[:-1], True]
        lone = a + np.flatnonzero((column_ends[:-1] & column_ends[1:])[a - before : b - before])
        floor = np.minimum(np.searchsorted(floor_col, col[lone]), len(floor_col) - 1)
        own = (floor_col[floor] == col[lone]) & (floor_tri[floor] == label[lone])
        own &= (floor_z[floor] == lo[lone]) & (floor_z[floor] == hi[lone])
        sampled[floor[own]] = True
        alone[lone[own]] = True
    return sampled, alone


def _in_columns(col: np.ndarray, columns: np.ndarray, grid: _Grid) -> np.ndarray:
    """Whether each of col lies in one of columns: through a mask of the grid's columns (np.isin
    sorted every fragment with an int64 order, several times the fragments' own size)."""
    marked = np.zeros(grid.width * grid.height, dtype=bool)
    marked[columns] = True
    return marked[col]


def _interior_edges(tri: np.ndarray, vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """(T, 3) bool: per soup triangle tri (T,) and edge k (corner k to k + 1), whether another
    triangle of the welded soup (vertices, triangles) shares the edge and lies across it seen from
    above: the edge is inside the surface the two make, not its outline. An upright triangle lies
    on neither side."""
    touching = np.flatnonzero(np.isin(triangles, triangles[tri]).any(axis=1))
    a = triangles[touching]
    b, c = a[:, [1, 2, 0]], a[:, [2, 0, 1]]
    pa, pb, pc = vertices[a, :2], vertices[b, :2], vertices[c, :2]
    side = cross_vectors(pb - pa, pc - pa)
    upright = np.abs(side) <= COLLINEAR * np.linalg.norm(pb - pa, axis=2) * np.linalg.norm(pc - pa, axis=2)
    # The side of the third corner, seen along the edge from its lower vertex id to its higher.
    side = np.where(upright, 0, np.sign(side) * np.where(a < b, 1, -1)).ravel()
    _, edge = np.unique(_edge_keys(a, len(vertices)), return_inverse=True)
    edge = edge.reshape(-1)
    left = np.bincount(edge, weights=side > 0) > 0
    right = np.bincount(edge, weights=side < 0) > 0
    across = np.where(side > 0, right[edge], (side < 0) & left[edge])
    return across.reshape(-1, 3)[np.searchsorted(touching, tri)]


def _band_part(tri: np.ndarray, lo: np.ndarray, hi: np.ndarray, tilt=None) -> tuple[np.ndarray, np.ndarray]:
    """(N, 5, 2): seen from above, the part of each triangle (N, 3, 3) between heights lo and hi
    (N,), a polygon of up to five corners, padded by repeating its last (all corners the same
    where nothing of it lies between). A vertical triangle's part is a segment traced both ways.
    Also (N, 5): the triangle edge (0 to 2, corner k to k + 1) each of the part's edges (corner e
    to e + 1) runs along, or -1 where it is a cut at lo or hi.
    tilt: None, or (gradient (N, 2), origin (N, 2)): the lower cut is then the plane of that
    gradient through height lo at origin (a sloping floor), not the level lo."""
    poly, count = tri, np.full(len(tri), 3)
    source = np.tile(np.arange(3), (len(tri), 1))
    if tilt is not None:
        gradient, origin = tilt
        rise = (gradient[:, None, :] * (tri[..., :2] - origin[:, None, :])).sum(axis=2)
        poly = np.concatenate([tri[..., :2], (tri[..., 2] - rise)[..., None]], axis=2)
    poly, count, source = _clip_at_height(poly, count, source, lo, True)
    if tilt is not None:  # back to heights: the plane is linear, so the cut points stay on it
        rise = (gradient[:, None, :] * (poly[..., :2] - origin[:, None, :])).sum(axis=2)
        poly = np.concatenate([poly[..., :2], (poly[..., 2] + rise)[..., None]], axis=2)
    poly, count, source = _clip_at_height(poly, count, source, hi, False)
    rows = np.arange(len(poly))
    last_corner = np.maximum(count - 1, 0)
    last, last_source = poly[rows, last_corner], source[rows, last_corner]
    pad = np.arange(poly.shape[1])[None, :] >= count[:, None]
    corners = np.where(pad[..., None], last[:, None, :], poly)[..., :2]
    return corners, np.where(pad, last_source[:, None], source)


def _clip_at_height(poly: np.ndarray, count: np.ndarray, source: np.ndarray, level: np.ndarray, above: bool):
    """Polygons (N, K, 3) of `count` corners cut at height level (N,), keeping the part above it (or
    below): (N, K + 1, 3), their corner counts, and the source (N, K + 1) of each edge from a
    corner to the next, carried from the input's (N, K) (-1 for the cut's own edge)
    (Sutherland-Hodgman, one corner slot at a time)."""
    n, k = poly.shape[:2]
    rows = np.arange(n)
    out = np.zeros((n, k + 1, 3))
    out_source = np.full((n, k + 1), -1, dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    sign = 1.0 if above else -1.0
    for i in range(k):
        a, b = poly[:, i], poly[rows, (i + 1) % np.maximum(count, 1)]
        live = i < count
        a_in, b_in = sign * (a[:, 2] - level) >= 0, sign * (b[:, 2] - level) >= 0
        keep = live & a_in
        out[rows[keep], size[keep]] = a[keep]
        # A kept corner's edge runs along the input edge from it, to b or to where it is cut.
        out_source[rows[keep], size[keep]] = source[keep, i]
        size += keep
        cut = live & (a_in != b_in)
        t = (level[cut] - a[cut, 2]) / (b[cut, 2] - a[cut, 2])
        point = a[cut] + t[:, None] * (b[cut] - a[cut])
        point[:, 2] = level[cut]
        out[rows[cut], size[cut]] = point
        # Leaving, the edge from the cut point runs along the cut; entering, along the input edge.
        out_source[rows[cut], size[cut]] = np.where(a_in[cut], -1, source[cut, i])
        size += cut
    return out, size, out_source


def _clip_to_square(p: np.ndarray, q: np.ndarray, lo: np.ndarray, size: float):
    """Segments p-q (N, 2) clipped to the squares [lo, lo + size] (Liang-Barsky): (p', q', kept)."""
    d = q - p
    t0, t1 = np.zeros(len(p)), np.ones(len(p))
    ok = np.ones(len(p), dtype=bool)
    for axis in (0, 1):
        for sign, bound in ((-1.0, lo[:, axis]), (1.0, lo[:, axis] + size)):
            # Inside where sign * (p + t d - bound) <= 0.
            num, den = sign * (bound - p[:, axis]), sign * d[:, axis]
            flat = den == 0
            ok &= ~flat | (num >= 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                t = num / den
            t0 = np.where(~flat & (den < 0), np.maximum(t0, t), t0)
            t1 = np.where(~flat & (den > 0), np.minimum(t1, t), t1)
    ok &= t0 <= t1
    return p + t0[:, None] * d, p + t1[:, None] * d, ok


def _first_crossing(start: np.ndarray, step: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """(N,) the least t in [0, 1] where start + t * step meets an edge of polygon poly (N, K, 2)
    seen from above, or inf. Works for vertical ones, whose outline is a doubled segment, and for
    corners repeated as padding (edges of no length meet nothing)."""
    best = np.full(len(start), np.inf)
    k = poly.shape[1]
    for e in range(k):
        p, q = poly[:, e], poly[:, (e + 1) % k]
        edge = q - p
        rel = p - start
        denom = cross_vectors(step, edge)
        ok = np.abs(denom) > _PARALLEL * np.abs(edge).sum(axis=1)
        safe = np.where(ok, denom, 1.0)
        t = cross_vectors(rel, edge) / safe
        u = cross_vectors(rel, step) / safe
        meets = ok & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
        best = np.where(meets, np.minimum(best, t), best)
    return best


def _floor_mesh(vertices: np.ndarray, triangles: np.ndarray, floor_ids: np.ndarray) -> tuple:
    """The floor triangles as the traces walk them: (row of each soup triangle among them or -1,
    the row across each edge (F, 3) as _edge_neighbours, corners seen from above (F, 3, 2), their
    heights (F, 3), whether each edge (F, 3) is open: no other triangle of the soup has it, the
    surface ends there, where floor beyond can only be another piece's). vertices, triangles: the
    soup, welded (weld)."""
    local = np.full(len(triangles), -1, dtype=np.int64)
    local[floor_ids] = np.arange(len(floor_ids))
    corners = vertices[triangles[floor_ids]]
    # One int64 key per edge of the soup (its two vertices, lower first), sorted in place: each floor
    # edge's count among them is where its key starts and ends (no unique over every edge: on a
    # 150k-triangle terrain that held 20 MB more through the rest of the stage).
    a, b = triangles.ravel(), np.roll(triangles, -1, axis=1).ravel()
    key = np.minimum(a, b).astype(np.int64)
    key *= len(vertices)
    key += np.maximum(a, b)
    del b
    floor_key = key.reshape(-1, 3)[floor_ids]
    key.sort()
    open_edge = np.searchsorted(key, floor_key, "right") - np.searchsorted(key, floor_key, "left") == 1
    del key, floor_key
    return local, _edge_neighbours(triangles[floor_ids]), corners[..., :2], corners[..., 2], open_edge


def _floor_end_fractions(links, span_tri, x, y, z, floor_mesh: tuple, grid: _Grid, climb: float):
    """(fraction, found) per missing link (span, direction): where the floor really ends on the step
    to the neighbour centre (a ledge link's end; a wall link's floor ending short of the wall).

    The step is traced through the floor triangles, starting in the one the span was sampled
    from. Where it leaves a triangle it goes on in the floor beyond: the floor triangle across the
    exit edge (triangles joined by edges between vertices at the same position), or else, where
    the edge is open (the surface ends there: no triangle of the soup shares it, not even a steep
    one), the one _floor_beyond finds, which need share no vertex with it (a plank snapped to a
    platform's edge, modular tiles with float noise between them, a T-junction); only open ledge
    edges are cut to their part with no floor beside it (_ledge_piece). The floor ends where the trace
    leaves with no floor beyond. Steps the trace cannot settle (the floor runs past the neighbour
    centre) keep the cell edge, 0.5.

    Also returns the floor's edges where the traces end (as Heightfield.boundary describes them),
    each clipped to the square of _LEDGE_CLIP cells around its trace's exit point: the exact ledge,
    where a grid-aligned segment per step would make a staircase of a slanted one. They come as
    (link, edges): per edge its link, not made unique (each trace is its link's own, so the edges
    of any of the links are those rows: _link_edges).
    climb: agent_max_climb, how far the floor beyond a seam may lie above or below.
    """
    span, d = links
    out = np.full(len(span), 0.5)
    found = np.zeros(len(span), dtype=bool)
    no_edges = (np.zeros(0, dtype=np.int64), np.zeros((0, 5)))
    if not len(span):
        return out, found, no_edges
    local, across, xy, _, open_edge = floor_mesh  # xy: counter-clockwise seen from above
    start = np.column_stack([grid.bmin[0] + (x[span] + 0.5) * grid.cs, grid.bmin[1] + (y[span] + 0.5) * grid.cs])
    step = np.column_stack([DIR_DX[d], DIR_DY[d]]) * grid.cs
    nx, ny = x[span] + DIR_DX[d], y[span] + DIR_DY[d]
    inside = (nx >= 0) & (nx < grid.width) & (ny >= 0) & (ny < grid.height)
    near = _floor_near(
        np.concatenate([np.arange(len(span)), np.flatnonzero(inside)]),
        np.concatenate([y[span] * grid.width + x[span], (ny * grid.width + nx)[inside]]).astype(np.int64),
        floor_mesh,
        grid,
    )
    tri = local[span_tri[span]]
    entry = np.zeros(len(span))
    active = np.flatnonzero(tri >= 0)
    exits = []  # (link, edge start, edge end, triangle, edge open) where a trace leaves the floor
    for _ in range(_LEDGE_TRACE_STEPS):
        if not active.size:
            break
        corners = xy[tri[active]]
        exit_edge, t = _leave_triangle(corners, start[active], step[active], entry[active])
        beyond = across[tri[active], exit_edge]
        enter = t.copy()
        seam = np.flatnonzero((t < 1.0) & (beyond < 0) & open_edge[tri[active], exit_edge])
        beyond[seam], enter[seam] = _floor_beyond(
            active[seam], tri[active[seam]], t[seam], (start, step), floor_mesh, near, climb
        )
        ends = (t < 1.0) & (beyond < 0)
        out[active[ends]] = t[ends]
        found[active[ends]] = True
        k = exit_edge[ends]
        rows = np.arange(len(active))[ends]
        exits.append(
            (
                active[ends],
                corners[rows, k],
                corners[rows, (k + 1) % 3],
                tri[active[ends]],
                open_edge[tri[active[ends]], k],
            )
        )
        go_on = (t < 1.0) & (beyond >= 0)
        entry[active[go_on]] = enter[go_on]
        tri[active[go_on]] = beyond[go_on]
        active = active[go_on]
    if not exits:
        return out, found, no_edges
    link = np.concatenate([e[0] for e in exits])
    a, b = np.concatenate([e[1] for e in exits]), np.concatenate([e[2] for e in exits])
    at = start[link] + out[link, None] * step[link]
    ending = np.concatenate([e[3] for e in exits])
    seam = np.concatenate([e[4] for e in exits])
    a[seam], b[seam] = _ledge_piece(a[seam], b[seam], at[seam], ending[seam], floor_mesh, grid, climb)
    a, b, ok = _clip_to_square(a, b, at - 0.5 * _LEDGE_CLIP * grid.cs, _LEDGE_CLIP * grid.cs)
    return out, found, (link[ok], np.column_stack([a, b, z[span[link]]])[ok])


def _link_edges(edges: tuple, links: np.ndarray) -> np.ndarray:
    """The distinct floor edges (sorted rows) that _floor_end_fractions' traces of the links (a bool
    mask over its links) end at: its (link, edges)."""
    link, rows = edges
    return np.unique(rows[links[link]], axis=0)


def _ledge_piece(a, b, at, ending, floor_mesh: tuple, grid: _Grid, climb: float):
    """The piece of each ledge edge a-b (N, 2), an edge of floor triangle ending (rows of
    floor_mesh) a trace left through at `at`, that has no floor beyond it: it runs from the exit
    point each way to the nearest part of the edge that other floor continues (lying within
    _SEAM_GAP cells beyond the edge, within a climb of its height: the platform edge a plank is
    snapped to is no ledge across the plank's mouth). Floor beside the exit point itself, which the
    trace did not go on in, cuts nothing. Only floor touching the columns within a cell of the
    exit point counts: _LEDGE_CLIP keeps no more of the edge."""
    n = len(a)
    cell = np.floor((at - grid.bmin) / grid.cs).astype(np.int64)
    shift = np.array([(i, j) for i in (-1, 0, 1) for j in (-1, 0, 1)])
    around = cell[:, None, :] + shift[None]  # (N, 9, 2)
    inside = (
        (around[..., 0] >= 0) & (around[..., 0] < grid.width) & (around[..., 1] >= 0) & (around[..., 1] < grid.height)
    )
    link = np.broadcast_to(np.arange(n)[:, None], inside.shape)[inside]
    near = _floor_near(link, around[inside][:, 1] * grid.width + around[inside][:, 0], floor_mesh, grid)
    which, row = _pairs_of(np.arange(n), near)
    keep = row != ending[which]
    which, row = which[keep], row[keep]
    _, _, xy, heights, _ = floor_mesh
    edge = b - a
    along = edge / (edge * edge).sum(axis=1, keepdims=True)  # u = (p - a) . along: 0 at a, 1 at b
    out = np.column_stack([edge[:, 1], -edge[:, 0]]) / np.linalg.norm(edge, axis=1, keepdims=True)
    # The candidates in the edge's frame: (u along it, 0, v beyond it in metres), cut to 0 <= v <= gap.
    rel = xy[row] - a[which, None, :]
    poly = np.stack(
        [(rel * along[which, None, :]).sum(axis=2), np.zeros(rel.shape[:2]), (rel * out[which, None, :]).sum(axis=2)],
        axis=2,
    )
    count, source = np.full(len(row), 3), np.tile(np.arange(3), (len(row), 1))
    gap = np.full(len(row), _SEAM_GAP * grid.cs)
    poly, count, source = _clip_at_height(poly, count, source, np.zeros(len(row)), True)
    poly, count, _ = _clip_at_height(poly, count, source, gap, False)
    real = np.arange(poly.shape[1])[None, :] < count[:, None]
    u0 = np.where(real, poly[..., 0], np.inf).min(axis=1)
    u1 = np.where(real, poly[..., 0], -np.inf).max(axis=1)
    v1 = np.where(real, poly[..., 2], -np.inf).max(axis=1)
    beside = (count > 0) & (v1 > _SEAM_NOISE * grid.cs) & (u1 > u0)
    # Its height beside the edge, against the edge's own there.
    u_mid = 0.5 * (np.where(beside, u0, 0.0) + np.where(beside, u1, 0.0))
    v_mid = 0.5 * np.where(beside, v1, 0.0)
    on_edge = a[which] + u_mid[:, None] * edge[which]
    there = _plane_height(row, floor_mesh, on_edge + v_mid[:, None] * out[which])
    beside &= np.abs(there - _plane_height(ending[which], floor_mesh, on_edge)) <= climb + STEP_NOISE
    u_at = ((at - a) * along).sum(axis=1)
    lo, hi = np.zeros(n), np.ones(n)
    before = beside & (u1 <= u_at[which])
    np.maximum.at(lo, which[before], u1[before])
    after = beside & (u0 >= u_at[which])
    np.minimum.at(hi, which[after], u0[after])
    return a + lo[:, None] * edge, a + np.maximum(hi, lo)[:, None] * edge


def _touching_boxes(columns: np.ndarray, corners_xy: np.ndarray, grid: _Grid) -> np.ndarray:
    """The triangles (corners seen from above, (T, 3, 2)) whose box of columns, grown by one each
    way, holds a column marked in columns ((width * height,) bool): a sum table per box, so only
    those need rasterising onto the marked columns (a triangle starting on a column border touches
    the closed square before it too)."""
    small = index_dtype(grid.width * grid.height + 1)  # counts of columns: int32 while they fit
    table = np.zeros((grid.height + 1, grid.width + 1), dtype=small)
    table[1:, 1:] = columns.reshape(grid.height, grid.width).cumsum(0, dtype=small).cumsum(1, dtype=small)
    lo_cell = np.floor((corners_xy.min(axis=1) - grid.bmin) / grid.cs).astype(np.int64) - 1
    hi_cell = np.floor((corners_xy.max(axis=1) - grid.bmin) / grid.cs).astype(np.int64) + 1
    (i0, j0), (i1, j1) = (
        np.clip(lo_cell, 0, [grid.width, grid.height]).T,
        np.clip(hi_cell, 0, [grid.width, grid.height]).T,
    )
    return np.flatnonzero(table[j1, i1] - table[j0, i1] - table[j1, i0] + table[j0, i0] > 0)


def _floor_near(link: np.ndarray, col: np.ndarray, floor_mesh: tuple, grid: _Grid) -> tuple[np.ndarray, np.ndarray]:
    """(link, row) pairs sorted by link: the floor triangles (rows of floor_mesh) touching the
    closed square of the columns col (C,) given for each link (C,)."""
    _, _, xy, heights, _ = floor_mesh
    columns = np.zeros(grid.width * grid.height, dtype=bool)
    columns[col] = True
    near = _touching_boxes(columns, xy, grid)
    corners = np.concatenate([xy[near], heights[near, :, None]], axis=2)
    touched, _, _, _, row = _rasterise_conservative(corners, grid, columns=columns, closed=True)
    order = np.argsort(touched, kind="stable")
    touched, row = touched[order], near[row[order]]
    first = np.searchsorted(touched, col, "left")
    count = np.searchsorted(touched, col, "right") - first
    which = np.repeat(np.arange(len(col)), count)
    pos = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count) + np.repeat(first, count)
    pairs = unique_pairs(np.column_stack([link[which], row[pos]]))
    return pairs[:, 0], pairs[:, 1]


def _pairs_of(links: np.ndarray, near: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(which, row): for each of links (rows of near's links), every triangle row near pairs it
    with, and its index in links."""
    pair_link, pair_row = near
    first = np.searchsorted(pair_link, links, "left")
    count = np.searchsorted(pair_link, links, "right") - first
    which = np.repeat(np.arange(len(links)), count)
    return which, pair_row[np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count) + np.repeat(first, count)]


def _floor_beyond(links, current, t_exit, steps: tuple, floor_mesh: tuple, near: tuple, climb: float):
    """Where traces leave their floor triangles `current` (rows of floor_mesh) at t_exit through an
    edge no floor triangle shares (its vertices welded), the floor they go on in: (the row of the
    floor triangle, or -1 for none; the t where they enter it). That is a floor triangle near the
    step (near: _floor_near's pairs) the trace runs through past t_exit, entering it before the
    neighbour centre (t < 1) within a climb of the height it left at: one overlapping the edge, or
    touching it (another object's floor, with or without vertices there), or across a gap narrower
    than the rest of the step. Of those, the one entered first, and of those entered at one point,
    the one the trace stays in longest. links: rows of steps ((start, step) per link)."""
    start, step = steps
    _, _, xy, heights, _ = floor_mesh
    beyond, enter = np.full(len(links), -1, dtype=np.int64), t_exit.copy()
    which, row = _pairs_of(links, near)
    if not len(row):
        return beyond, enter
    s, st = start[links[which]], step[links[which]]
    t_in, t_out = _inside_interval(xy[row], s, st)
    t_in = np.maximum(t_in, t_exit[which])
    ok = (row != current[which]) & (t_in < 1.0) & (t_out > t_in)
    left_at = _plane_height(current, floor_mesh, start[links] + t_exit[:, None] * step[links])
    enter_at = _plane_height(row[ok], floor_mesh, s[ok] + t_in[ok, None] * st[ok])
    ok[ok] = np.abs(enter_at - left_at[which[ok]]) <= climb + STEP_NOISE
    earliest = np.full(len(links), np.inf)
    np.minimum.at(earliest, which[ok], t_in[ok])
    ok &= t_in <= earliest[which] + _SEAM_NOISE
    k = np.flatnonzero(ok)
    k = k[np.lexsort((t_out[k], which[k]))]
    last = k[np.r_[which[k][1:] != which[k][:-1], True]] if len(k) else k
    beyond[which[last]], enter[which[last]] = row[last], t_in[last]
    return beyond, enter


def _inside_interval(corners: np.ndarray, start: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(t_in, t_out): the part of the line start + t * step inside each counter-clockwise
    top-view triangle (N, 3, 2), empty where t_in > t_out."""
    edge = np.roll(corners, -1, axis=1) - corners
    rel0 = start[:, None, :] - corners
    side0 = edge[..., 0] * rel0[..., 1] - edge[..., 1] * rel0[..., 0]
    rate = edge[..., 0] * step[:, None, 1] - edge[..., 1] * step[:, None, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = -side0 / rate
    t_in = np.where(rate > 0, bound, -np.inf).max(axis=1)
    t_out = np.where(rate < 0, bound, np.inf).min(axis=1)
    outside = ((rate == 0) & (side0 < 0)).any(axis=1)
    return np.where(outside, np.inf, t_in), np.where(outside, -np.inf, t_out)


def _plane_height(rows: np.ndarray, floor_mesh: tuple, point: np.ndarray) -> np.ndarray:
    """(N,) the height of the plane of floor triangles rows (of floor_mesh) at points (N, 2)."""
    _, _, xy, heights, _ = floor_mesh
    p = np.concatenate([xy[rows], heights[rows, :, None]], axis=2)
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    return p[:, 0, 2] - ((point - p[:, 0, :2]) * normal[:, :2]).sum(axis=1) / normal[:, 2]


def _leave_triangle(corners: np.ndarray, start: np.ndarray, step: np.ndarray, entry: np.ndarray):
    """Where start + t * step leaves each counter-clockwise top-view triangle (N, 3, 2) it runs
    through from t = entry on: (the exit edge k, from corner k to k + 1; t, inf if it never leaves)."""
    edge = corners[:, [1, 2, 0]] - corners
    rel0 = start[:, None, :] - corners
    # Signed side of the edge (>= 0 inside) at t = 0 and its change per unit t along the step.
    side0 = edge[..., 0] * rel0[..., 1] - edge[..., 1] * rel0[..., 0]
    rate = edge[..., 0] * step[:, None, 1] - edge[..., 1] * step[:, None, 0]
    # (Divided only where the line runs outward: walks call this once per triangle crossed, so
    # no errstate context or rolled copy per call.)
    leave = np.full(rate.shape, np.inf)
    np.divide(side0, -rate, out=leave, where=rate < 0)
    exit_edge = np.argmin(leave, axis=1)
    return exit_edge, np.maximum(leave[np.arange(len(start)), exit_edge], entry)


def _plane_reach(rows: np.ndarray, start: np.ndarray, step: np.ndarray, floor_mesh: tuple, corners_of):
    """(N,) how far along start + t * step, t in [0, 1], the floor stays on the plane of the floor
    triangle it starts in (rows of floor_mesh, -1 for none: reach 0): the trace crosses welded
    edges into triangles of the same slope (a quad's two halves, a flat floor's fan) and stops at
    the first other one, where the plane no longer gives the floor's height.
    corners_of: rows -> (K, 3, 3) those floor triangles' corners."""
    _, across, xy, _, _ = floor_mesh

    def slope(row):
        p = corners_of(row)
        normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
        return -normal[:, :2] / normal[:, 2:3]

    reach = np.zeros(len(rows))
    tri = rows.copy()
    entry = np.zeros(len(rows))
    active = np.flatnonzero(tri >= 0)
    for _ in range(_LEDGE_TRACE_STEPS):
        if not active.size:
            break
        exit_edge, t = _leave_triangle(xy[tri[active]], start[active], step[active], entry[active])
        reach[active] = np.minimum(t, 1.0)
        beyond = across[tri[active], exit_edge]
        on = (t < 1.0) & (beyond >= 0)
        on[on] = np.abs(slope(beyond[on]) - slope(tri[active[on]])).max(axis=1) <= _COPLANAR_SLOPE
        entry[active[on]] = t[on]
        tri[active[on]] = beyond[on]
        active = active[on]
    return reach


def weld(vertices: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The soup with its vertices welded by exact position: (one vertex per position, the
    triangles' corners into them). Done once per heightfield: it is the traces' largest cost."""
    points, ids = np.unique(vertices, axis=0, return_inverse=True)
    return points, ids.reshape(-1)[triangles]


def _edge_neighbours(triangles: np.ndarray) -> np.ndarray:
    """(T, 3): the triangle across edge k (corner k to k+1) of each triangle, or -1 if none.

    The triangles' corners are welded vertex ids (weld). The floor triangles all run
    counter-clockwise seen from above, so the triangle across an edge walks it the other way: an
    edge walked the same way is a copy of the triangle in place (fuzz case 43272: a stacked
    duplicate step, whose trace went from copy to copy and never found the step's edge). An edge
    shared by more triangles (non-manifold) pairs each with one walking it the other way, if one
    is left.
    """
    m = len(triangles)
    if m == 0:
        return np.zeros((0, 3), dtype=np.int64)
    a, b = triangles.ravel(), np.roll(triangles, -1, axis=1).ravel()
    # One int64 key per edge: its segment (lower vertex id, higher), then which way it walks it. Sorted
    # stably, each segment's edges walking it backwards come first, then those walking it forwards,
    # each in listing order: the k-th either way pair up.
    key = np.minimum(a, b).astype(np.int64)
    key *= int(triangles.max()) + 1
    key += np.maximum(a, b)
    key *= 2
    key += a < b
    del a, b
    order = np.argsort(key, kind="stable")
    key = key[order]
    backward = np.flatnonzero(key % 2 == 0)
    rank = backward - np.searchsorted(key, key[backward], "left")
    forward = np.searchsorted(key, key[backward] + 1, "left") + rank
    del rank
    paired = forward < len(key)
    paired[paired] = key[forward[paired]] == key[backward[paired]] + 1
    backward, forward = order[backward[paired]], order[forward[paired]]
    del key, order, paired
    across = np.full(3 * m, -1, dtype=np.int64)
    across[backward] = forward // 3
    across[forward] = backward // 3
    return across.reshape(m, 3)
