"""Walkable heightfield stage: triangle soup -> compact walkable spans with neighbour links.

(Recast: rcRasterizeTriangles + filters + rcBuildCompactHeightfield.)
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .errors import NavMeshError
from .params import BakeParams
from .progress import SILENT, Progress
from .soup import TriangleSoup, volume_triangles

# Neighbour directions, indexed 0..3: (+x, +y, -x, -y).
DIR_DX = np.array([1, 0, -1, 0])
DIR_DY = np.array([0, 1, 0, -1])


@dataclass
class Heightfield:
    """Walkable floor samples, one per (column, floor), in the soup's local frame.

    Column (i, j) covers x in [bmin_x + i*cs, bmin_x + (i+1)*cs), likewise y; its centre is
    at +0.5 cell. Spans are sorted by (j, i, z).
    cell_size: cs. bmin: (2,) float64 xy of cell (0, 0)'s corner. width, height: grid size.
    x, y: (S,) int32 column of each span. z: (S,) float64 floor height at the column centre.
    ceiling: (S,) float64 bottom of the next solid above (inf if none).
    area: (S,) int32 area id. links: (S, 4) int64: index of the connected neighbour span in each
    direction (DIR_DX/DIR_DY), or -1 where the floor ends there (wall, ledge, drop, low ceiling).
    link_block: (S, 4) float64 or None: where a missing link's floor ends, as a fraction of the
    centre-to-centre step. For drops and ledges, where the floor's triangles end along the step,
    else 0.5 (the cell edge: the true edge lies between the two centre samples). For walls and low
    ceilings, where the step first meets the blocking triangles, else 1.0 (the neighbour's centre:
    they were rasterised conservatively, so they lie somewhere inside the neighbour column).
    None means 0.5 everywhere. Unused where the link exists.
    link_found: (S, 4) bool or None: whether link_block was found on the step (the floor's end is a
    line across it there) or is only the expected place. None means found wherever link_block < 1.
    boundary: (G, 5) float64 or None: where the floor ends, as top-view segments (x0, y0, x1, y1, z)
    with the floor height z of the span that sees them. At walls, exactly: the edges of every
    triangle that blocks a wall link inside the agent's band, clipped to the neighbour column's
    square. At ledges, a cell-wide segment across the step at link_block. None when not recorded
    (hand-built heightfields).
    gradient: (S, 2) float64 or None: the floor's slope (dz/dx, dz/dy) at each span, that of the
    triangle it was sampled from; None means flat.
    surface_range: (S, 2) float64 or None: the lowest and highest point of that triangle, which bound
    the floor carried along the gradient away from the column centre; None means unbounded.
    """

    cell_size: float
    bmin: np.ndarray
    width: int
    height: int
    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    ceiling: np.ndarray
    area: np.ndarray
    links: np.ndarray
    link_block: np.ndarray | None = None
    link_found: np.ndarray | None = None
    boundary: np.ndarray | None = None
    gradient: np.ndarray | None = None
    surface_range: np.ndarray | None = None

    @property
    def span_count(self) -> int:
        return len(self.z)

    def centers_xy(self) -> np.ndarray:
        """(S, 2) xy of each span's column centre."""
        return np.stack(
            [self.bmin[0] + (self.x + 0.5) * self.cell_size, self.bmin[1] + (self.y + 0.5) * self.cell_size], axis=1
        )

    def block_fraction(self) -> np.ndarray:
        """(S, 4) link_block, with the cell-edge default 0.5 when it was not recorded."""
        if self.link_block is None:
            return np.full((self.span_count, 4), 0.5)
        return self.link_block

    def block_found(self) -> np.ndarray:
        """(S, 4) link_found, or where block_fraction() < 1 when it was not recorded."""
        if self.link_found is None:
            return self.block_fraction() < 1.0
        return self.link_found


# (triangle, row) or (triangle, cell) pairs handled per vectorised batch; bounds peak memory.
_CHUNK_PAIRS = 131072
# Fragments whose z-intervals are closer than this merge into one span (float noise, touching solids).
_MERGE_GAP = 1e-5
# Inclusive tolerance (in cell sizes) of the coverage tests, so centres on shared edges are not lost.
_INSIDE_TOL = 1e-9
# Surfaces closer than this (m) along a column are one surface to the inside-solid test.
_SAME_SURFACE = 1e-4


# Memory a bake takes per cell of surface seen from above, and per column of the grid (bytes,
# measured on the shared levels with some margin), and the share of the machine's memory it may ask.
BYTES_PER_CELL = 600
BYTES_PER_COLUMN = 48
MEMORY_SHARE = 0.75


def _check_memory(area: float, cs: float, width: int, height: int) -> None:
    """Refuse, before allocating, a bake whose estimated memory exceeds MEMORY_SHARE of the machine's
    (area: the triangles' area seen from above)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return  # no way to know this machine's memory: let the allocation speak
    cells = area / cs**2
    need = BYTES_PER_CELL * cells + BYTES_PER_COLUMN * float(width) * float(height)
    if need > MEMORY_SHARE * total:
        raise NavMeshError(
            f"baking this level at cell size {cs:g} m needs about {need / 1e9:.3g} GB ({cells:.3g} cells of surface, "
            f"a {width} x {height} grid), more than this machine's {total / 1e9:.3g} GB allow: use a larger "
            f"cell_size or bake a part of the level"
        )


def build_heightfield(
    soup: TriangleSoup, params: BakeParams, progress: Progress = SILENT, volumes: tuple = ()
) -> Heightfield:
    """Rasterise the soup and keep the walkable floor spans with their links.

    Walkable triangles are sampled exactly at column centres (unbiased floor coverage); all other
    triangles are rasterised conservatively (every touched column gets the triangle's z-range over
    it), so thin walls always block. Fragments merge into solid spans per column; a span is a floor
    when a walkable fragment lies within agent_max_climb of its top and the headroom fits the agent,
    at the height of the highest such fragment.
    volumes: AreaVolumes painting the floor inside them with an area, or removing it.
    """
    cs = float(params.cell_size)
    verts = soup.vertices
    if len(verts):
        bmin = verts[:, :2].min(axis=0).astype(np.float64)
        extent = verts[:, :2].max(axis=0) - bmin
    else:
        bmin, extent = np.zeros(2), np.zeros(2)
    width = max(1, int(np.ceil(extent[0] / cs)))
    height = max(1, int(np.ceil(extent[1] / cs)))
    grid = _Grid(cs, bmin, width, height)

    tris = soup.triangles
    if len(tris) == 0:
        return _empty(grid)
    p = verts[tris]  # (M, 3, 3)
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    _check_memory(0.5 * float(np.abs(normal[:, 2]).sum()), cs, width, height)
    nz = normal[:, 2] / np.linalg.norm(normal, axis=1)
    cos_slope = np.cos(np.radians(params.agent_max_slope))
    floor_tri = soup.walkable & (nz > 0) & (nz >= cos_slope - 1e-12)

    floor_ids = np.flatnonzero(floor_tri)
    frags = [_sample_centres(p[floor_tri], floor_ids, grid)]
    progress.at(0.2)
    frags.append(_rasterise_conservative(p[~floor_tri], grid))
    progress.at(0.4)
    col = np.concatenate([f[0] for f in frags])
    lo = np.concatenate([f[1] for f in frags])
    hi = np.concatenate([f[2] for f in frags])
    walk = np.concatenate([f[3] for f in frags])
    # Every fragment's label is the soup triangle it came from.
    label = np.concatenate([frags[0][4], np.flatnonzero(~floor_tri)[frags[1][4]]])
    if not walk.any():
        return _empty(grid)

    span_col, span_bottom, span_top, floor_top, ceiling, span_walk, span_tri = _merge_spans(
        col, lo, hi, walk, label, params.agent_max_climb
    )
    keep = span_walk & (ceiling - span_top >= params.agent_height)
    keep[keep] &= ~_inside_solids(span_col[keep], span_top[keep], p[soup.closed], grid)
    shells = [(volume.area, volume_triangles(volume, soup.origin)) for volume in volumes]
    for area, shell in shells:
        if area is None:  # a volume that removes the floor inside it
            keep[keep] &= ~_inside_solids(span_col[keep], floor_top[keep], shell, grid)
    solid = (span_col, span_bottom, span_top)
    span_col, z, ceiling, span_tri = span_col[keep], floor_top[keep], ceiling[keep], span_tri[keep]
    x = (span_col % width).astype(np.int32)
    y = (span_col // width).astype(np.int32)
    progress.at(0.6)
    links = _link_spans(span_col, x, y, z, ceiling, grid, params)
    block = _block_fractions(links, x, y, z, solid, grid, params)
    progress.at(0.8)
    found = np.zeros_like(links, dtype=bool)
    ledge = (links < 0) & (block < 1.0)
    block[ledge], found[ledge], ledge_edges = _ledge_fractions(
        np.nonzero(ledge), span_tri, x, y, z, soup.vertices, tris, floor_ids, grid
    )
    wall = (links < 0) & (block == 1.0)
    block[wall], found[wall], blockers = _wall_fractions(
        np.nonzero(wall), x, y, z, (col, lo, hi, label), soup.vertices, tris, grid, params
    )
    area = soup.areas[span_tri].astype(np.int32)
    for volume_area, shell in shells:  # later volumes paint over earlier ones
        if volume_area is not None:
            area[_inside_solids(span_col, z, shell, grid)] = volume_area
    hf = Heightfield(cs, bmin, width, height, x, y, z, ceiling, area, links, block, found)
    hf.boundary = np.concatenate([blockers, ledge_edges, _ledge_segments(hf, ledge & ~found)])
    # The slope of the floor triangle each span was sampled from (one facing up: n_z > 0).
    top = normal[span_tri]
    hf.gradient = -top[:, :2] / top[:, 2:3]
    hf.surface_range = np.column_stack([p[span_tri, :, 2].min(axis=1), p[span_tri, :, 2].max(axis=1)])
    return hf


def _ledge_segments(hf: Heightfield, ledge: np.ndarray) -> np.ndarray:
    """(L, 5) boundary segments of ledge links whose floor's end was not traced: a cell-wide
    segment across each step at its block fraction."""
    assert hf.link_block is not None  # recorded by the wall pass before the boundary is built
    span, d = np.nonzero(ledge)
    step = np.column_stack([DIR_DX[d], DIR_DY[d]]).astype(np.float64)
    mid = hf.centers_xy()[span] + (hf.link_block[span, d] * hf.cell_size)[:, None] * step
    half = 0.5 * hf.cell_size * step[:, ::-1]
    return np.column_stack([mid - half, mid + half, hf.z[span]])


@dataclass(frozen=True)
class _Grid:
    cs: float
    bmin: np.ndarray
    width: int
    height: int


def _empty(grid: _Grid) -> Heightfield:
    f, i = np.zeros(0), np.zeros(0, dtype=np.int32)
    return Heightfield(
        grid.cs,
        grid.bmin,
        grid.width,
        grid.height,
        i,
        i.copy(),
        f,
        f.copy(),
        i.copy(),
        np.zeros((0, 4), dtype=np.int64),
        np.zeros((0, 4)),
    )


def _batches(counts: np.ndarray):
    """Expand segments of the given lengths into (segment, index within segment), in bounded batches."""
    ends = np.cumsum(counts)
    start = 0
    while start < len(counts):
        base = ends[start] - counts[start]
        stop = max(int(np.searchsorted(ends, base + _CHUNK_PAIRS, side="right")), start + 1)
        c = counts[start:stop]
        total = int(c.sum())
        if total:
            seg = np.repeat(np.arange(start, stop), c)
            yield seg, np.arange(total) - np.repeat(np.cumsum(c) - c, c)
        start = stop


def _row_batches(j0: np.ndarray, j1: np.ndarray):
    """Yield (triangle, row) pairs for each triangle's rows j0..j1, in bounded batches."""
    for t, local in _batches(np.maximum(j1 - j0 + 1, 0)):
        yield t, j0[t] + local


def _line_span(tri: np.ndarray, y: np.ndarray):
    """x-interval [lo, hi] where each triangle's projection meets the line at height y (lo > hi: none)."""
    lo = np.full(len(y), np.inf)
    hi = np.full(len(y), -np.inf)
    for e in range(3):
        p0, p1 = tri[:, e], tri[:, (e + 1) % 3]
        d0, d1 = p0[:, 1] - y, p1[:, 1] - y
        dy = p1[:, 1] - p0[:, 1]
        moving = dy != 0
        f = np.clip(-d0 / np.where(moving, dy, 1.0), 0.0, 1.0)
        x = np.where(moving & (d0 * d1 <= 0), p0[:, 0] + f * (p1[:, 0] - p0[:, 0]), np.nan)
        x_on = np.where(d0 == 0, p0[:, 0], np.nan)
        for cand in (x, x_on):
            lo = np.fmin(lo, cand)
            hi = np.fmax(hi, cand)
    return lo, hi


def _sample_centres(p: np.ndarray, labels: np.ndarray, grid: _Grid):
    """Fragments [z, z] at every column centre inside a non-vertical triangle, with its label
    (the area id of a floor triangle, or anything else per triangle).

    Scanline: per (triangle, row) the triangle's x-interval on the row's centre line gives the
    covered centres directly, with a small inclusive tolerance for centres on shared edges.
    """
    cs, (bx, by) = grid.cs, grid.bmin
    tol = _INSIDE_TOL * cs
    lo_y, hi_y = p[:, :, 1].min(axis=1), p[:, :, 1].max(axis=1)
    j0 = np.maximum(np.ceil((lo_y - tol - by) / cs - 0.5), 0).astype(np.int64)
    j1 = np.minimum(np.floor((hi_y + tol - by) / cs - 0.5), grid.height - 1).astype(np.int64)
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    grad = -normal[:, :2] / normal[:, 2:3]
    zlo, zhi = p[:, :, 2].min(axis=1), p[:, :, 2].max(axis=1)
    out = []
    for t, j in _row_batches(j0, j1):
        yc = by + (j + 0.5) * cs
        # Nudge the line inside the triangle's y-range so rows touching a vertex keep it.
        lo, hi = _line_span(p[t], np.clip(yc, lo_y[t], hi_y[t]))
        i0 = np.maximum(np.ceil((lo - tol - bx) / cs - 0.5), 0)
        i1 = np.minimum(np.floor((hi + tol - bx) / cs - 0.5), grid.width - 1)
        ok = np.isfinite(i0) & np.isfinite(i1) & (i1 >= i0)
        t, j, yc, i0 = t[ok], j[ok], yc[ok], i0[ok].astype(np.int64)
        for row, local in _batches(i1[ok].astype(np.int64) - i0 + 1):
            tt, i = t[row], i0[row] + local
            px = bx + (i + 0.5) * cs
            z = p[tt, 0, 2] + grad[tt, 0] * (px - p[tt, 0, 0]) + grad[tt, 1] * (yc[row] - p[tt, 0, 1])
            z = np.clip(z, zlo[tt], zhi[tt])
            out.append((j[row] * grid.width + i, z, z, np.ones(len(tt), dtype=bool), labels[tt]))
    return _concat_frags(out)


def _rasterise_conservative(p: np.ndarray, grid: _Grid):
    """Non-walkable fragments: the triangle's z-range over every column square it touches.

    Scanline over row strips: the triangle's x-range within a strip bounds the touched columns;
    columns whose square lies wholly inside a non-vertical triangle take the plane's range over
    the square directly, the rest get exact per-square z-ranges.
    """
    cs, (bx, by) = grid.cs, grid.bmin
    lo_y, hi_y = p[:, :, 1].min(axis=1), p[:, :, 1].max(axis=1)

    def cell_range(lo, hi, origin, n):
        # Half-open columns [k*cs, (k+1)*cs): an edge exactly on a boundary belongs to the upper column.
        first = np.floor((lo - origin) / cs)
        last = np.maximum(np.ceil((hi - origin) / cs) - 1, first)
        return np.clip(first, 0, n - 1).astype(np.int64), np.clip(last, 0, n - 1).astype(np.int64)

    j0, j1 = cell_range(lo_y, hi_y, by, grid.height)
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    flat = np.abs(normal[:, 2]) > 1e-9 * np.linalg.norm(normal, axis=1)
    grad = -normal[:, :2] / np.where(flat, normal[:, 2], 1.0)[:, None]
    out = []
    for t, j in _row_batches(j0, j1):
        tri = p[t]
        ya = by + j * cs
        yb = ya + cs
        la, ra = _line_span(tri, np.clip(ya, lo_y[t], hi_y[t]))
        lb, rb = _line_span(tri, np.clip(yb, lo_y[t], hi_y[t]))
        in_strip = (tri[:, :, 1] >= ya[:, None]) & (tri[:, :, 1] <= yb[:, None])
        xlo = np.fmin(np.fmin(la, lb), np.where(in_strip, tri[:, :, 0], np.inf).min(axis=1))
        xhi = np.fmax(np.fmax(ra, rb), np.where(in_strip, tri[:, :, 0], -np.inf).max(axis=1))
        ok = xlo <= xhi
        i0, i1 = cell_range(xlo[ok], xhi[ok], bx, grid.width)
        t, j, ya = t[ok], j[ok], ya[ok]
        # Squares wholly inside: both strip edges cross the triangle over the square's width.
        inner_lo = np.ceil((np.maximum(la[ok], lb[ok]) - bx) / cs)
        inner_hi = np.floor((np.minimum(ra[ok], rb[ok]) - bx) / cs) - 1
        whole = flat[t] & (ya >= lo_y[t]) & (ya + cs <= hi_y[t])
        inner_lo = np.where(whole, inner_lo, np.inf)
        for row, local in _batches(i1 - i0 + 1):
            tt, i, jj = t[row], i0[row] + local, j[row]
            x0, y0 = bx + i * cs, ya[row]
            inner = (i >= inner_lo[row]) & (i <= inner_hi[row])
            if inner.any():
                ta = tt[inner]
                cx, cy = x0[inner] + 0.5 * cs, y0[inner] + 0.5 * cs
                zc = p[ta, 0, 2] + grad[ta, 0] * (cx - p[ta, 0, 0]) + grad[ta, 1] * (cy - p[ta, 0, 1])
                dz = 0.5 * cs * (np.abs(grad[ta, 0]) + np.abs(grad[ta, 1]))
                n = len(ta)
                out.append((jj[inner] * grid.width + i[inner], zc - dz, zc + dz, np.zeros(n, bool), ta))
            v = ~flat[tt]
            if v.any():
                out.append(_vertical_fragments(p, tt[v], i[v], jj[v], x0[v], y0[v], grid))
            b = ~inner & flat[tt]
            if b.any():
                out.append(_flat_fragments(p, tt[b], i[b], jj[b], x0[b], y0[b], grid))
    return _concat_frags(out)


def _vertical_fragments(pm, t, i, j, x0, y0, grid: _Grid):
    """z-ranges of vertical triangles over column squares.

    A vertical triangle projects to a segment; its part over a square is the slab u in [ua, ub]
    along that segment, whose z-range comes from the vertices inside the slab and the edges'
    heights at ua and ub. Cheaper than clipping and exact for thin walls.
    """
    cs = grid.cs
    tri = pm[t]
    xy = tri[:, :, :2]
    ext = xy - xy[:, :1]
    k = np.argmax((ext**2).sum(axis=2), axis=1)
    d = np.take_along_axis(ext, k[:, None, None], axis=1)[:, 0]
    d /= np.linalg.norm(d, axis=1)[:, None]
    u = np.einsum("tvk,tk->tv", ext, d)  # position of each vertex along the segment, from vertex 0
    ua = np.full(len(t), -np.inf)
    ub = np.full(len(t), np.inf)
    for axis, lo in ((0, x0), (1, y0)):
        comp = d[:, axis]
        moving = np.abs(comp) > 1e-12
        safe = np.where(moving, comp, 1.0)
        e0 = (lo - xy[:, 0, axis]) / safe
        e1 = (lo + cs - xy[:, 0, axis]) / safe
        ua = np.where(moving, np.maximum(ua, np.minimum(e0, e1)), ua)
        ub = np.where(moving, np.minimum(ub, np.maximum(e0, e1)), ub)
    ua = np.maximum(ua, u.min(axis=1))
    ub = np.minimum(ub, u.max(axis=1))
    tol = _INSIDE_TOL * cs
    z = tri[:, :, 2]
    in_slab = (u >= ua[:, None] - tol) & (u <= ub[:, None] + tol)
    zmin = np.where(in_slab, z, np.inf).min(axis=1)
    zmax = np.where(in_slab, z, -np.inf).max(axis=1)
    for e in range(3):
        u0, u1, z0, z1 = u[:, e], u[:, (e + 1) % 3], z[:, e], z[:, (e + 1) % 3]
        du = u1 - u0
        inv = 1.0 / np.where(du != 0, du, 1.0)
        for at in (ua, ub):
            on = (du != 0) & (at >= np.minimum(u0, u1)) & (at <= np.maximum(u0, u1))
            ze = z0 + (at - u0) * inv * (z1 - z0)
            zmin = np.where(on, np.minimum(zmin, ze), zmin)
            zmax = np.where(on, np.maximum(zmax, ze), zmax)
    hit = (ua <= ub + tol) & (zmin <= zmax)
    n = int(hit.sum())
    return j[hit] * grid.width + i[hit], zmin[hit], zmax[hit], np.zeros(n, bool), t[hit]


def _flat_fragments(pm, t, i, j, x0, y0, grid: _Grid):
    """z-ranges of non-vertical triangles over the column squares their edges cross.

    z is linear over the triangle, so its extremes over triangle ∩ square lie at that polygon's
    corners: triangle vertices inside the square, square corners inside the triangle, and edge /
    side crossings. Every candidate is evaluated in one vectorised pass (no polygon clipping).
    """
    cs = grid.cs
    x1, y1 = x0 + cs, y0 + cs
    tol = _INSIDE_TOL * cs
    vx = [np.ascontiguousarray(pm[t, k, 0]) for k in range(3)]
    vy = [np.ascontiguousarray(pm[t, k, 1]) for k in range(3)]
    vz = [np.ascontiguousarray(pm[t, k, 2]) for k in range(3)]
    zmin = np.full(len(t), np.nan)
    zmax = np.full(len(t), np.nan)

    def take(ok, z):
        nonlocal zmin, zmax
        cand = np.where(ok, z, np.nan)
        zmin = np.fmin(zmin, cand)
        zmax = np.fmax(zmax, cand)

    for k in range(3):
        take((vx[k] >= x0 - tol) & (vx[k] <= x1 + tol) & (vy[k] >= y0 - tol) & (vy[k] <= y1 + tol), vz[k])
    ex = [vx[(k + 1) % 3] - vx[k] for k in range(3)]
    ey = [vy[(k + 1) % 3] - vy[k] for k in range(3)]
    area2 = ex[0] * ey[2] * -1 + ey[0] * ex[2]  # (b - a) x (c - a), with c - a = -(edge 2)
    # Plane gradient -(n_x, n_y) / n_z with n = (b - a) x (c - a).
    gx = -(ey[0] * (vz[2] - vz[0]) + (vz[1] - vz[0]) * ey[2]) / area2
    gy = ((vz[1] - vz[0]) * ex[2] + ex[0] * (vz[2] - vz[0])) / area2
    sign = np.sign(area2)
    slack = -tol * np.abs(area2) / cs
    for qx in (x0, x1):
        for qy in (y0, y1):
            inside = np.ones(len(t), dtype=bool)
            for k in range(3):
                inside &= (ex[k] * (qy - vy[k]) - ey[k] * (qx - vx[k])) * sign >= slack
            take(inside, vz[0] + gx * (qx - vx[0]) + gy * (qy - vy[0]))
    for k in range(3):
        dz = vz[(k + 1) % 3] - vz[k]
        for d_a, d_o, p_a, p_o, lo_o, hi_o, sides in (
            (ex[k], ey[k], vx[k], vy[k], y0, y1, (x0, x1)),
            (ey[k], ex[k], vy[k], vx[k], x0, x1, (y0, y1)),
        ):
            moving = d_a != 0
            inv = 1.0 / np.where(moving, d_a, 1.0)
            for side in sides:
                f = (side - p_a) * inv
                o = p_o + f * d_o
                take(moving & (f >= 0) & (f <= 1) & (o >= lo_o - tol) & (o <= hi_o + tol), vz[k] + f * dz)
    hit = ~np.isnan(zmin)
    n = int(hit.sum())
    return j[hit] * grid.width + i[hit], zmin[hit], zmax[hit], np.zeros(n, bool), t[hit]


def _concat_frags(parts):
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0, bool), np.zeros(0, np.int64)
    return tuple(np.concatenate([part[k] for part in parts]) for k in range(5))


def _merge_spans(col, lo, hi, walk, label, climb: float):
    """Merge overlapping fragments per column into solid spans (Recast's span merge, exact heights).

    Returns per span: column, bottom, top, floor top, ceiling (bottom of the next span up, inf if
    none), walkable flag (a walkable fragment within `climb` of the top) and that fragment's label
    (-1 if none). The floor top is the height of that walkable fragment (the floor sampled at the
    column centre), not the span's top: whatever else merged onto the floor within a climb step (the
    top edge of a low sheet, a steep face, an underside) is stepped over and raises the solid, not
    the surface an agent stands on. Recast takes the span's top instead, which lifts the navmesh
    onto such an edge by up to a climb step where no surface is.
    """
    # Columns are offset by more than the soup's height range, so one float key sorts by
    # (column, lo) and one global accumulate gives the running max of hi within each column.
    zbase = lo.min()
    stride = float(hi.max() - zbase) + 1.0
    offset = col * stride - zbase
    # Fragments come mostly in column order already, which a stable sort (a merge of sorted runs)
    # takes in about linear time. Ties in the key are the same height in one column, and every
    # per-span figure below is a max or a sum, so their order does not matter.
    order = np.argsort(lo + offset, kind="stable")
    col, lo, hi, walk, label, offset = col[order], lo[order], hi[order], walk[order], label[order], offset[order]
    run = np.maximum.accumulate(hi + offset) - offset
    start = np.ones(len(col), dtype=bool)
    start[1:] = (col[1:] != col[:-1]) | (lo[1:] > run[:-1] + _MERGE_GAP)
    starts = np.flatnonzero(start)
    sid = np.cumsum(start) - 1
    span_col = col[starts]
    span_bottom = lo[starts]
    span_top = np.maximum.reduceat(hi, starts)
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
    tilted = np.abs(normal[:, 2]) > 1e-9 * np.linalg.norm(normal, axis=1)
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


def _link_spans(col, x, y, z, ceiling, grid: _Grid, params: BakeParams) -> np.ndarray:
    """Link each span to the best passable span of each neighbour column; links are mutual."""
    s = len(z)
    counts = np.bincount(col, minlength=grid.width * grid.height)
    first = np.cumsum(counts) - counts
    links = np.full((s, 4), -1, dtype=np.int64)
    for d in range(4):
        nx, ny = x + DIR_DX[d], y + DIR_DY[d]
        inside = (nx >= 0) & (nx < grid.width) & (ny >= 0) & (ny < grid.height)
        ncol = np.where(inside, ny * grid.width + nx, 0)
        cnt = np.where(inside, counts[ncol], 0)
        base = first[ncol]
        # First candidate of every neighbour column in one full-length pass (most columns hold one span).
        cand = np.where(cnt > 0, base, 0)
        zc = z[cand]
        dz = np.abs(zc - z)
        room = np.minimum(ceiling, ceiling[cand]) - np.maximum(z, zc)
        ok = (cnt > 0) & (dz <= params.agent_max_climb) & (room >= params.agent_height)
        best = np.where(ok, cand, -1)
        best_dz = np.where(ok, dz, np.inf)
        k = 1
        active = np.flatnonzero(cnt > k)
        while active.size:
            cand = base[active] + k
            za, zc = z[active], z[cand]
            dz = np.abs(zc - za)
            room = np.minimum(ceiling[active], ceiling[cand]) - np.maximum(za, zc)
            ok = (dz <= params.agent_max_climb) & (room >= params.agent_height) & (dz < best_dz[active])
            best[active[ok]] = cand[ok]
            best_dz[active[ok]] = dz[ok]
            k += 1
            active = active[cnt[active] > k]
        links[:, d] = best
    # Keep a link only when the neighbour picked this span back (only matters when a column holds
    # two floors within climb of one neighbour, possible when agent_height < 2 * agent_max_climb).
    opposite = (np.arange(4) + 2) % 4
    idx = np.arange(s)
    mutual = links.copy()
    for d in range(4):
        b = links[:, d]
        has = b >= 0
        back = np.full(s, -1, dtype=np.int64)
        back[has] = links[b[has], opposite[d]]
        mutual[:, d] = np.where(has & (back == idx), b, -1)
    return mutual


def _block_fractions(links, x, y, z, solid, grid: _Grid, params: BakeParams) -> np.ndarray:
    """(S, 4) where each missing link's floor ends, as a fraction of the centre-to-centre step.

    A missing link is a wall when the neighbour column holds solid inside the agent's band
    (above climb, below head height): that solid was rasterised conservatively, so the true
    blocking geometry lies uniformly anywhere in the neighbour column, at its centre on average
    (1.0). Otherwise the floor simply ends (ledge, drop, grid edge): between the two centre
    samples, unbiased at the cell edge (0.5).
    """
    solid_col, solid_bottom, solid_top = solid
    block = np.full((len(z), 4), 0.5)
    # Solid spans are sorted by (column, bottom): per column a contiguous run.
    counts = np.bincount(solid_col, minlength=grid.width * grid.height)
    first = np.cumsum(counts) - counts
    for d in range(4):
        miss = np.flatnonzero(links[:, d] < 0)
        nx, ny = x[miss] + DIR_DX[d], y[miss] + DIR_DY[d]
        inside = (nx >= 0) & (nx < grid.width) & (ny >= 0) & (ny < grid.height)
        miss, ncol = miss[inside], (ny * grid.width + nx)[inside]
        lo, hi = z[miss] + params.agent_max_climb, z[miss] + params.agent_height
        wall = np.zeros(len(miss), dtype=bool)
        k = 0
        active = np.flatnonzero(counts[ncol] > 0)
        while active.size:
            c = first[ncol[active]] + k
            wall[active] |= (solid_top[c] > lo[active]) & (solid_bottom[c] < hi[active])
            k += 1
            active = active[counts[ncol[active]] > k]
        block[miss[wall], d] = 1.0
    return block


def _wall_fractions(wall, x, y, z, frags, vertices, triangles, grid: _Grid, params: BakeParams):
    """(fraction, found) per wall link: where the line from this centre across the neighbour
    column first meets geometry that blocks the agent there; and the blocking segments (as
    Heightfield.boundary describes them).

    Candidates are the triangles rasterised into the neighbour column within the agent's band
    (above climb, below head height); the fraction is the first crossing of the line with one of
    them, seen from above, between the near and far sides of the neighbour square (0.5 to 1.5).
    Where none crosses it (geometry that only clips the neighbour square off the line) it stays
    1.0, the neighbour centre, not found.
    """
    span, d = wall
    out = np.ones(len(span))
    nx, ny = x[span] + DIR_DX[d], y[span] + DIR_DY[d]
    inside = (nx >= 0) & (nx < grid.width) & (ny >= 0) & (ny < grid.height)
    ncol = np.where(inside, ny * grid.width + nx, -1)
    col, lo, hi, label = frags
    near = np.flatnonzero(np.isin(col, ncol[inside]))
    near = near[np.argsort(col[near], kind="stable")]
    first = np.searchsorted(col[near], ncol, "left")
    count = np.searchsorted(col[near], ncol, "right") - first
    band_lo, band_hi = z[span] + params.agent_max_climb, z[span] + params.agent_height
    start = np.column_stack([grid.bmin[0] + (x[span] + 0.5) * grid.cs, grid.bmin[1] + (y[span] + 0.5) * grid.cs])
    reach = np.column_stack([DIR_DX[d], DIR_DY[d]]) * (_NEIGHBOUR_FAR_SIDE * grid.cs)
    best = np.full(len(span), np.inf)
    k = 0
    active = np.flatnonzero(inside & (count > 0))
    seen = []  # (wall link, triangle) pairs that block
    while active.size:
        f = near[first[active] + k]
        blocks = (hi[f] > band_lo[active]) & (lo[f] < band_hi[active])
        t = _first_crossing(start[active], reach[active], vertices[triangles[label[f]], :2])
        best[active] = np.where(blocks, np.minimum(best[active], t * _NEIGHBOUR_FAR_SIDE), best[active])
        seen.append(np.column_stack([active[blocks], label[f[blocks]]]))
        k += 1
        active = active[count[active] > k]
    found = np.isfinite(best)
    out[found] = np.maximum(best[found], 0.5)
    pairs = np.unique(np.concatenate(seen), axis=0) if seen else np.zeros((0, 2), dtype=np.int64)
    link, tri = pairs[:, 0], pairs[:, 1]
    lo_xy = np.column_stack([grid.bmin[0] + nx[link] * grid.cs, grid.bmin[1] + ny[link] * grid.cs])
    corners = vertices[triangles[tri], :2]
    segs = [_clip_to_square(corners[:, e], corners[:, (e + 1) % 3], lo_xy - grid.cs, 3 * grid.cs) for e in range(3)]
    blockers = np.concatenate([np.column_stack([p, q, z[span[link]]])[ok] for p, q, ok in segs])
    return out, found, np.unique(blockers, axis=0)


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


# The far side of the neighbour column, in centre-to-centre steps.
_NEIGHBOUR_FAR_SIDE = 1.5


def _first_crossing(start: np.ndarray, step: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """(N,) the least t in [0, 1] where start + t * step meets an edge of triangle tri (N, 3, 2)
    seen from above, or inf. Works for vertical triangles, whose outline is a doubled segment."""
    best = np.full(len(start), np.inf)
    for e in range(3):
        p, q = tri[:, e], tri[:, (e + 1) % 3]
        edge = q - p
        rel = p - start
        denom = step[:, 0] * edge[:, 1] - step[:, 1] * edge[:, 0]
        ok = np.abs(denom) > 1e-12 * (np.abs(edge).sum(axis=1) + 1e-300)
        safe = np.where(ok, denom, 1.0)
        t = (rel[:, 0] * edge[:, 1] - rel[:, 1] * edge[:, 0]) / safe
        u = (rel[:, 0] * step[:, 1] - rel[:, 1] * step[:, 0]) / safe
        meets = ok & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
        best = np.where(meets, np.minimum(best, t), best)
    return best


# Floor triangles a ledge trace may cross within one centre-to-centre step before it gives up.
_LEDGE_TRACE_STEPS = 8
# A ledge edge is recorded within a square this many cells wide around each exit point through it:
# consecutive exits along a straight ledge lie at most sqrt(2) cells apart, so the pieces overlap.
_LEDGE_CLIP = 2.0


def _ledge_fractions(ledge, span_tri, x, y, z, vertices, triangles, floor_ids, grid: _Grid):
    """(fraction, found) per ledge link: where the floor really ends on the step to the neighbour centre.

    The step is traced through the floor triangles, starting in the one the span was sampled
    from and crossing into the floor triangle across each exit edge (triangles joined by edges
    between vertices at the same position). The floor ends where the trace leaves through an
    edge with no floor beyond. Steps the trace cannot settle (the floor runs past the neighbour
    centre, or a seam between unwelded meshes) keep the cell edge, 0.5.

    Also returns the floor's edges where the traces end (as Heightfield.boundary describes them),
    each clipped to the square of _LEDGE_CLIP cells around its trace's exit point: the exact ledge,
    where a grid-aligned segment per step would make a staircase of a slanted one.
    """
    span, d = ledge
    out = np.full(len(span), 0.5)
    found = np.zeros(len(span), dtype=bool)
    if not len(span):
        return out, found, np.zeros((0, 5))
    local = np.full(len(triangles), -1, dtype=np.int64)
    local[floor_ids] = np.arange(len(floor_ids))
    across = _edge_neighbours(vertices, triangles[floor_ids])
    xy = vertices[triangles[floor_ids], :2]  # (F, 3, 2), counter-clockwise seen from above
    start = np.column_stack([grid.bmin[0] + (x[span] + 0.5) * grid.cs, grid.bmin[1] + (y[span] + 0.5) * grid.cs])
    step = np.column_stack([DIR_DX[d], DIR_DY[d]]) * grid.cs
    tri = local[span_tri[span]]
    entry = np.zeros(len(span))
    active = np.flatnonzero(tri >= 0)
    exits = []  # (link, edge start, edge end) where a trace leaves the floor
    for _ in range(_LEDGE_TRACE_STEPS):
        if not active.size:
            break
        corners = xy[tri[active]]
        edge = np.roll(corners, -1, axis=1) - corners  # (A, 3, 2)
        rel0 = start[active, None, :] - corners
        # Signed side of the edge (>= 0 inside) at t = 0 and its change per unit t along the step.
        side0 = edge[..., 0] * rel0[..., 1] - edge[..., 1] * rel0[..., 0]
        slope = edge[..., 0] * step[active, None, 1] - edge[..., 1] * step[active, None, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            leave = np.where(slope < 0, side0 / -slope, np.inf)
        exit_edge = np.argmin(leave, axis=1)
        t = np.maximum(leave[np.arange(len(active)), exit_edge], entry[active])
        beyond = across[tri[active], exit_edge]
        ends = (t < 1.0) & (beyond < 0)
        out[active[ends]] = t[ends]
        found[active[ends]] = True
        k = exit_edge[ends]
        rows = np.arange(len(active))[ends]
        exits.append((active[ends], corners[rows, k], corners[rows, (k + 1) % 3]))
        go_on = (t < 1.0) & (beyond >= 0)
        entry[active[go_on]] = t[go_on]
        tri[active[go_on]] = beyond[go_on]
        active = active[go_on]
    if not exits:
        return out, found, np.zeros((0, 5))
    link = np.concatenate([e[0] for e in exits])
    a, b = np.concatenate([e[1] for e in exits]), np.concatenate([e[2] for e in exits])
    at = start[link] + out[link, None] * step[link]
    a, b, ok = _clip_to_square(a, b, at - 0.5 * _LEDGE_CLIP * grid.cs, _LEDGE_CLIP * grid.cs)
    edges = np.column_stack([a, b, z[span[link]]])[ok]
    return out, found, np.unique(edges, axis=0)


def _edge_neighbours(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """(T, 3): the triangle across edge k (corner k to k+1) of each triangle, or -1 if none.

    Vertices are welded by exact position. An edge shared by more than two triangles (non-manifold)
    pairs with one of them.
    """
    m = len(triangles)
    if m == 0:
        return np.zeros((0, 3), dtype=np.int64)
    _, ids = np.unique(vertices, axis=0, return_inverse=True)
    t = ids.reshape(-1)[triangles]
    a, b = t.ravel(), np.roll(t, -1, axis=1).ravel()
    n = int(t.max()) + 1
    key = np.minimum(a, b) * n + np.maximum(a, b)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    same_next = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    across = np.full(3 * m, -1, dtype=np.int64)
    # Pair each edge with the next one of the same key, and the last of a run with the one before.
    across[order[same_next]] = order[same_next + 1] // 3
    across[order[same_next + 1]] = order[same_next] // 3
    return across.reshape(m, 3)
