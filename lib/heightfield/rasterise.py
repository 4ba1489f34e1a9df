"""Rasterisation: triangles to height fragments per column (floor samples at column centres,
conservative z-ranges of everything else over the column squares they touch)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..components import run_positions
from ..geometry import UPRIGHT_NZ
from ..progress import SILENT, Progress
from .field import Heightfield

# (triangle, row) or (triangle, cell) pairs handled per vectorised batch; bounds peak memory.
_CHUNK_PAIRS = 1 << 16
# Inclusive tolerance (in cell sizes) of the coverage tests, so centres on shared edges are not lost.
_INSIDE_TOL = 1e-9
# A segment whose direction has a component at most this (m) along an axis does not move along it:
# it crosses no cell boundary of that axis.
_STILL = 1e-12


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
            yield seg, run_positions(c)
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


def _sample_centres(
    p: np.ndarray, labels: np.ndarray, grid: _Grid, rows: range | None = None, tol_cells: float = _INSIDE_TOL
):
    """Fragments [z, z] at every column centre inside a non-vertical triangle, with its label
    (the area id of a floor triangle, or anything else per triangle); in the given rows only, or all.

    Scanline: per (triangle, row) the triangle's x-interval on the row's centre line gives the
    covered centres directly, with a small inclusive tolerance (tol_cells) for centres on shared edges.
    """
    cs, (bx, by) = grid.cs, grid.bmin
    tol = tol_cells * cs
    lo_y, hi_y = p[:, :, 1].min(axis=1), p[:, :, 1].max(axis=1)
    j0 = np.maximum(np.ceil((lo_y - tol - by) / cs - 0.5), 0).astype(np.int64)
    j1 = np.minimum(np.floor((hi_y + tol - by) / cs - 0.5), grid.height - 1).astype(np.int64)
    if rows is not None:
        j0, j1 = np.maximum(j0, rows.start), np.minimum(j1, rows.stop - 1)
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


def _rasterise_conservative(
    p: np.ndarray, grid: _Grid, progress: Progress = SILENT, columns: np.ndarray | None = None, closed: bool = False
):
    """Non-walkable fragments: the triangle's z-range over every column square it touches; only in
    the columns marked in `columns` ((width * height,) bool) when given. Squares are half-open (an
    edge exactly on a column border belongs to the column above it), or closed (to both).

    Scanline over row strips: the triangle's x-range within a strip bounds the touched columns;
    columns whose square lies wholly inside a non-vertical triangle take the plane's range over
    the square directly, the rest get exact per-square z-ranges.
    """
    cs, (bx, by) = grid.cs, grid.bmin
    lo_y, hi_y = p[:, :, 1].min(axis=1), p[:, :, 1].max(axis=1)

    def cell_range(lo, hi, origin, n):
        if closed:  # [k*cs, (k+1)*cs], within the coverage tests' tolerance
            first = np.ceil((lo - origin) / cs - 1 - _INSIDE_TOL)
            last = np.maximum(np.floor((hi - origin) / cs + _INSIDE_TOL), first)
        else:  # half-open [k*cs, (k+1)*cs): an edge exactly on a boundary belongs to the upper column
            first = np.floor((lo - origin) / cs)
            last = np.maximum(np.ceil((hi - origin) / cs) - 1, first)
        return np.clip(first, 0, n - 1).astype(np.int64), np.clip(last, 0, n - 1).astype(np.int64)

    j0, j1 = cell_range(lo_y, hi_y, by, grid.height)
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    flat = np.abs(normal[:, 2]) > UPRIGHT_NZ * np.linalg.norm(normal, axis=1)
    grad = -normal[:, :2] / np.where(flat, normal[:, 2], 1.0)[:, None]
    out = []
    rows = max(int((j1 - j0 + 1).sum()), 1)
    done = 0
    for t, j in _row_batches(j0, j1):
        progress.at(done / rows)
        done += len(t)
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
            if columns is not None:
                wanted = columns[jj * grid.width + i]
                row, tt, i, jj = row[wanted], tt[wanted], i[wanted], jj[wanted]
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
        moving = np.abs(comp) > _STILL
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
