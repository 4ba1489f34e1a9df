"""Floor samples of each polygon: one span per column centre inside it, on its own floor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..components import index_dtype, run_positions, sorted_starts
from ..geometry import distance_to_triangles
from ..heightfield import Heightfield
from ..heightfield.walk import floor_under
from ..navmesh import PolyMesh
from ..params import BakeParams
from ..progress import SILENT, Progress


def column_starts(hf: Heightfield) -> np.ndarray:
    """(width * height + 1,): column c's spans are start[c]:start[c + 1] (spans are sorted by (j, i,
    z)). int32 while span ids fit: the grid can hold millions of columns."""
    return sorted_starts(hf.y.astype(np.int64) * hf.width + hf.x, hf.width * hf.height)


# Polygon-column pairs examined at once while sampling: bounds the temporaries on large meshes.
_PAIRS_PER_CHUNK = 1 << 17
# A column centre within this share of a cell of a polygon's edge is on it (cross product with the
# edge, relative to the edge's length): rounding, counted inside.
_ON_EDGE = 1e-6
# A point this close (m, seen from above) to a floor triangle lies on it (float noise on shared edges).
ON_TRIANGLE = 1e-6
# Sample heights found at once by `sample_heights` (bounds floor_at's temporaries).
_HEIGHTS_PER_CHUNK = 1 << 16


@dataclass(frozen=True)
class FloorSamples:
    """Floor samples of a polygon mesh: one span per column centre strictly inside each polygon (top
    view), on the polygon's floor. polygon: (S,) the polygon of each, sorted (each polygon's in the
    order `floor_samples` finds them); span: (S,) its span. Ids only, int32 while they fit (8 bytes a
    sample), as they are kept through the cuts of rough polygons; `points` gives the column centres
    at floor height."""

    polygon: np.ndarray
    span: np.ndarray

    def points(self, hf: Heightfield, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """(S, 3) the samples' column centres at their floor's height, or those of `rows` only: the
        detail stage finds them where it needs them, never all at once (24 bytes a sample)."""
        return span_points(hf, self.span if rows is None else self.span[rows])

    def replaced(self, polygons: np.ndarray, new: FloorSamples) -> FloorSamples:
        """These samples with those of `polygons` (sorted ids) replaced by `new` (the samples of
        those polygons as they are now): what sampling every polygon again would give, as each
        polygon's samples depend on it alone."""
        keep = ~np.isin(self.polygon, polygons)
        kept = self.polygon[keep]
        new_polygon, new_span = new.polygon.astype(self.polygon.dtype), new.span
        if np.any(new_polygon[1:] < new_polygon[:-1]):  # floor_samples gives them sorted
            order = np.argsort(new_polygon, kind="stable")
            new_polygon, new_span = new_polygon[order], new_span[order]
        # Merged as a stable sort of the kept then the new would order them, without its order
        # array (the samples' size in int64): each new sample after the kept ones of its polygon.
        at = np.searchsorted(kept, new_polygon, side="right") + np.arange(len(new_polygon))
        is_new = np.zeros(len(kept) + len(new_polygon), dtype=bool)
        is_new[at] = True
        polygon = np.empty(len(is_new), dtype=self.polygon.dtype)
        polygon[at], polygon[~is_new] = new_polygon, kept
        del kept
        span = np.empty(len(is_new), dtype=np.result_type(self.span, new_span))
        span[at], span[~is_new] = new_span, self.span[keep]
        return FloorSamples(polygon, span)


def span_points(hf: Heightfield, span: np.ndarray) -> np.ndarray:
    """(K, 3) the column centres of the spans at their floor's height."""
    xyz = np.empty((len(span), 3))
    xyz[:, 0] = hf.bmin[0] + (hf.x[span] + 0.5) * hf.cell_size
    xyz[:, 1] = hf.bmin[1] + (hf.y[span] + 0.5) * hf.cell_size
    xyz[:, 2] = hf.z[span]
    return xyz


def floor_at(hf: Heightfield, span: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """(K,) the floor of each span at the point xy (K, 2), not at its column's centre: carried there
    on the slope of the span's floor triangle, within that triangle's heights (on a 44 degree slope
    the centre is 0.14 m off at a point 0.14 m from it).

    Where that triangle does not hold the point (seen from above), the floor of a span linked to
    it (in the 8 columns around: one link, or two for a diagonal) whose floor triangle does, the
    nearest in height of those: the point is over that floor. A column takes the floor of any
    triangle touching its square, so the column along an upper floor's edge over a ramp that
    passes a climb step below it holds the upper floor, and that floor carried past its edge put
    points over the ramp 0.45 m above it (a stairwell at cell size 0.3). Before both, the floor
    the span's triangle runs on into, where it reaches the point (floor_under)."""
    on_slope = _on_slope(hf, span, xy)
    corners = hf.triangle_at(span)
    if corners is None or not len(span):
        return on_slope
    off = np.flatnonzero(distance_to_triangles(xy, corners) > ON_TRIANGLE)
    if not len(off):
        return on_slope
    # The floor the span's triangle continues into, where it reaches the point: exact, where the
    # slope carried there (cut at the triangle's heights) is off on any soup finer than the cells.
    walked, reached = floor_under(hf, span[off], xy[off])
    on_slope[off[reached]] = walked[reached]
    off = off[~reached]
    if not len(off):
        return on_slope
    linked = hf.links[span[off]].astype(np.int64)
    around = [linked]
    for d in range(4):  # the diagonals: a link, then one to either side of it
        step = linked[:, d]
        for side in ((d + 1) % 4, (d + 3) % 4):
            around.append(np.where(step >= 0, hf.links[np.maximum(step, 0), side], -1)[:, None])
    near = np.concatenate(around, axis=1)
    row, col = np.nonzero(near >= 0)
    other = near[row, col]
    at = xy[off[row]]
    around_corners = hf.triangle_at(other)
    assert around_corners is not None  # recorded for every span, as for these
    holds = np.flatnonzero(distance_to_triangles(at, around_corners) <= ON_TRIANGLE)
    row, other, at = row[holds], other[holds], at[holds]
    z = _on_slope(hf, other, at)
    order = np.lexsort((np.abs(z - on_slope[off[row]]), row))
    first = order[np.concatenate([[True], row[order][1:] != row[order][:-1]])] if len(order) else order
    out = on_slope.copy()
    out[off[row[first]]] = z[first]
    return out


def _on_slope(hf: Heightfield, span: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """(K,) the plane of each span's floor triangle at the point xy (K, 2), within the triangle's
    heights (the span's floor itself where none is recorded)."""
    on_slope = hf.z[span] + ((xy - hf.centers_xy(span)) * hf.gradient_at(span)).sum(axis=1)
    bounds = hf.surface_range_at(span)
    return on_slope if bounds is None else np.clip(on_slope, bounds[:, 0], bounds[:, 1])


def sample_heights(hf: Heightfield, span: np.ndarray) -> np.ndarray:
    """(S,) the floor at the column centre of each of the spans `span` (floor_at): the span's own
    height, unless its floor triangle does not hold the centre (the column along a floor's edge).
    In chunks of _HEIGHTS_PER_CHUNK samples."""
    heights = np.empty(len(span))
    for first in range(0, len(span), _HEIGHTS_PER_CHUNK):
        part = slice(first, first + _HEIGHTS_PER_CHUNK)
        heights[part] = floor_at(hf, span[part], span_points(hf, span[part])[:, :2])
    return heights


def layer_tolerance(params: BakeParams) -> float:
    """Floors above each other are at least agent_height apart, so a sample farther than half of it
    from a polygon's plane belongs to another floor."""
    return 0.5 * float(params.agent_height)


def floor_samples(
    mesh: PolyMesh,
    hf: Heightfield,
    params: BakeParams,
    span_region: np.ndarray | None = None,
    progress: Progress = SILENT,
    polygons: np.ndarray | None = None,
) -> FloorSamples:
    """The floor samples of every polygon, or of `polygons` (sorted ids) only, in chunks
    (FloorSamples.replaced puts those in place of earlier ones).

    span_region given: the span of the polygon's own region in each column. Otherwise the span
    nearest the polygon's least-squares plane, if within layer_tolerance of it."""
    layer_tol = layer_tolerance(params)
    start = column_starts(hf)
    cs = hf.cell_size
    count = np.diff(start)
    offs = mesh.poly_offsets
    corner = mesh.vertices[mesh.poly_vertices]
    a = corner[:, :2]
    d = mesh.vertices[mesh.edge_next_vertex][:, :2] - a
    edge_eps = _ON_EDGE * cs * np.linalg.norm(d, axis=1)
    lo = np.maximum(np.floor((np.minimum.reduceat(a, offs[:-1]) - hf.bmin[:2]) / cs).astype(np.int64), 0)
    hi = np.minimum(
        np.floor((np.maximum.reduceat(a, offs[:-1]) - hf.bmin[:2]) / cs).astype(np.int64), [hf.width - 1, hf.height - 1]
    )
    width, height = hi[:, 0] - lo[:, 0] + 1, hi[:, 1] - lo[:, 1] + 1
    ids = np.arange(mesh.polygon_count) if polygons is None else np.asarray(polygons, dtype=np.int64)
    pairs = np.where((width[ids] > 0) & (height[ids] > 0), width[ids] * height[ids], 0)
    plane = None if span_region is not None else _planes(corner, offs)
    out_poly, out_span = [], []
    poly_dtype, span_dtype = index_dtype(mesh.polygon_count), index_dtype(hf.span_count)
    first = 0
    ends = np.cumsum(pairs)
    while first < len(ids):
        progress.at(first / len(ids))
        last = max(int(np.searchsorted(ends, (ends[first] - pairs[first]) + _PAIRS_PER_CHUNK, side="right")), first + 1)
        polys = ids[first:last]
        # Each row of each polygon's box, narrowed to the columns whose centres lie inside.
        rows = np.where(pairs[first:last] > 0, height[polys], 0)
        row_poly = np.repeat(polys, rows)
        jj = lo[row_poly, 1] + run_positions(rows)
        left, right = _inside_rows(
            hf, row_poly, hf.bmin[1] + (jj + 0.5) * cs, lo[row_poly, 0], hi[row_poly, 0] + 1, mesh, a, d, edge_eps
        )
        n = np.maximum(right - left, 0)
        owner = np.repeat(row_poly, n)
        ii = np.repeat(left, n) + run_positions(n)
        jj = np.repeat(jj, n)
        cols = jj * hf.width + ii
        keep = count[cols] > 0
        owner, ii, jj, cols = owner[keep], ii[keep], jj[keep], cols[keep]
        cx, cy = hf.bmin[0] + (ii + 0.5) * cs, hf.bmin[1] + (jj + 0.5) * cs
        reps = count[cols]
        span = np.repeat(start[cols], reps) + run_positions(reps)
        pair = np.repeat(np.arange(len(cols)), reps)
        if span_region is not None:
            mine = span_region[span] == mesh.regions[owner[pair]]
            pick, pair = span[mine], pair[mine]
        else:
            assert plane is not None  # made whenever span_region is not given
            q = owner[pair]
            dz = np.abs(hf.z[span] - (plane[q, 0] * cx[pair] + plane[q, 1] * cy[pair] + plane[q, 2]))
            order = np.lexsort((dz, pair))
            best = order[np.concatenate([[True], pair[order][1:] != pair[order][:-1]])]
            best = best[dz[best] <= layer_tol]
            pick, pair = span[best], pair[best]
        # Narrowed per chunk: the samples are the detail stage's largest arrays.
        out_poly.append(owner[pair].astype(poly_dtype))
        out_span.append(pick.astype(span_dtype))
        first = last
    del count, start
    polygon = np.concatenate(out_poly) if out_poly else np.zeros(0, dtype=poly_dtype)
    del out_poly
    span = np.concatenate(out_span) if out_span else np.zeros(0, dtype=span_dtype)
    return FloorSamples(polygon, span)


def _inside_rows(
    hf: Heightfield,
    row_poly: np.ndarray,
    cy: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    mesh: PolyMesh,
    a: np.ndarray,
    d: np.ndarray,
    edge_eps: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(left, right): the columns ii in [left, right) of each row (at height cy) of polygon
    row_poly's box whose centres lie strictly inside it: left of every edge by more than edge_eps.
    Along a row each edge's test is monotone in ii (every rounding step is), so it passes on a run
    of columns ending at one side of the row: found by bisection with the test itself, exactly the
    columns that testing each would keep, in a few steps per row rather than one test per column."""
    offs, sizes = mesh.poly_offsets, mesh.polygon_sizes
    left, right = left.copy(), right.copy()
    for j in range(int(sizes[row_poly].max(initial=0))):
        has = np.flatnonzero(sizes[row_poly] > j)
        e = offs[row_poly[has]] + j
        across = d[e, 0] * (cy[has] - a[e, 1])
        # Where the edge runs towards +y the test passes left of some column (a run from `left`),
        # else right of one (a run to `right`; all or none where the edge runs along x).
        prefix = d[e, 1] > 0
        low, high = left[has], right[has]
        while True:
            active = np.flatnonzero(low < high)
            if not len(active):
                break
            mid = (low[active] + high[active]) // 2
            k = e[active]
            passes = across[active] - d[k, 1] * (hf.bmin[0] + (mid + 0.5) * hf.cell_size - a[k, 0]) > edge_eps[k]
            past = passes == prefix[active]  # the run's end (or start) lies past mid
            low[active] = np.where(past, mid + 1, low[active])
            high[active] = np.where(past, high[active], mid)
        right[has] = np.where(prefix, low, right[has])
        left[has] = np.where(prefix, left[has], low)
    return left, right


def _planes(corner: np.ndarray, offs: np.ndarray) -> np.ndarray:
    """(P, 3) least-squares planes z = a x + b y + c through each polygon's vertices, all at once
    (normal equations about each polygon's centroid, which keeps them well conditioned)."""
    size = np.diff(offs)
    centre = np.add.reduceat(corner, offs[:-1]) / size[:, None]
    local = corner - np.repeat(centre, size, axis=0)
    x, y, z = local[:, 0], local[:, 1], local[:, 2]
    sxx, sxy, syy, sxz, syz = (np.add.reduceat(t, offs[:-1]) for t in (x * x, x * y, y * y, x * z, y * z))
    zeros = np.zeros_like(sxx)
    lhs = np.stack([sxx, sxy, zeros, sxy, syy, zeros, zeros, zeros, size.astype(np.float64)], axis=1).reshape(-1, 3, 3)
    rhs = np.stack([sxz, syz, zeros], axis=1)
    slope_x, slope_y, offset = np.einsum("pij,pj->pi", np.linalg.pinv(lhs), rhs).T
    return np.column_stack([slope_x, slope_y, centre[:, 2] + offset - slope_x * centre[:, 0] - slope_y * centre[:, 1]])
