"""Detail stage: a triangulated surface per polygon that follows the real floor (Recast: rcBuildPolyMeshDetail).

Each polygon starts as a fan over its own vertices. Its edges are sampled first (Recast's
hull tessellation): where the floor along an edge leaves the straight edge by more than
max_height_error, points are added on the edge, the same ones for both polygons that share it, so
neighbouring surfaces meet. Then the heightfield sample (span at a column centre inside the
polygon, on the polygon's own floor) farthest from the surface is inserted until every sample is
within max_height_error or the per-polygon insertion cap is reached.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .components import twin_edges
from .heightfield import Heightfield
from .navmesh import DetailMesh, NavMesh, PolyMesh
from .params import BakeParams
from .progress import SILENT, Progress

# At most this many samples are inserted into one polygon's detail triangulation.
MAX_INSERTIONS = 256
# At most this many points are added along one polygon edge.
MAX_EDGE_POINTS = 32
# Barycentric margin below which a sample counts as lying on a triangle edge.
_EDGE_EPS = 1e-9
# A polygon vertex's height is checked against its region's floor samples this many cells around it.
_VERTEX_REACH = 2


def build_detail(
    mesh: PolyMesh,
    hf: Heightfield,
    params: BakeParams,
    span_region: np.ndarray | None = None,
    progress: Progress = SILENT,
) -> DetailMesh:
    """The polygons' corners moved onto their floor and a surface over each polygon within
    params.max_height_error of the sampled floor.

    span_region: the region of each heightfield span (RegionMap.region). A region holds at most one
    span per column, so a polygon samples exactly its own floor even on steep, rolling ground. Without
    it, the span nearest the polygon's plane is taken, which suits gently sloped floors only.
    """
    if mesh.is_empty:
        return DetailMesh(
            mesh.vertices, np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64)
        )
    # Floors above each other are at least agent_height apart, so a sample farther than half of it
    # from the polygon's plane belongs to another floor.
    layer_tol = 0.5 * float(params.agent_height)
    sample_poly, samples, sample_span = _samples(mesh, hf, layer_tol, span_region)
    progress.at(0.2)
    vertices = _vertices_on_floor(
        mesh, sample_poly, samples, sample_span, hf, layer_tol, 0.5 * float(params.max_height_error), span_region
    )
    mesh = replace(mesh, vertices=vertices)
    progress.at(0.25)
    cuts = np.searchsorted(sample_poly, np.arange(mesh.polygon_count + 1))
    max_error = float(params.max_height_error)
    apex = fan_apexes(mesh)
    fits = _fan_fits(mesh, apex, sample_poly, samples, max_error, progress.span(0.25, 0.4))
    edge_points = _edge_points(mesh, hf, layer_tol, span_region, max_error, float(params.agent_max_climb))
    progress.at(0.5)
    offs = mesh.poly_offsets
    out_vertices, out_tris, out_polys = [], [], []
    base = 0
    for p in range(mesh.polygon_count):
        progress.at(0.5 + 0.5 * p / mesh.polygon_count)
        poly = mesh.vertices[mesh.polygon(p)]
        on_edges = [edge_points.get(e) for e in range(offs[p], offs[p + 1])]
        if fits[p] and not any(pts is not None for pts in on_edges):
            verts, tris = poly, np.array(_fan(len(poly), int(apex[p])), dtype=np.int64)
        else:
            verts, tris = _refine(poly, int(apex[p]), samples[cuts[p] : cuts[p + 1]], max_error, on_edges)
        out_vertices.append(verts)
        out_tris.append(tris + base)
        out_polys.append(np.full(len(tris), p, dtype=np.int64))
        base += len(verts)
    return DetailMesh(
        corners=mesh.vertices,
        vertices=np.concatenate(out_vertices),
        triangles=np.concatenate(out_tris).astype(np.int64),
        polygons=np.concatenate(out_polys),
    )


def surface_height(mesh: NavMesh, poly: int, xy) -> float:
    """Height of the detail surface of polygon `poly` at xy (clamped to the nearest triangle)."""
    q = np.asarray(xy, dtype=np.float64)[:2]
    sel = np.nonzero(mesh.detail_polygons == poly)[0]
    if len(sel):
        tri = mesh.detail_vertices[mesh.detail_triangles[sel]]
    else:
        pv = mesh.vertices[mesh.polygon(poly)]
        n = len(pv)
        tri = np.stack([np.repeat(pv[:1], n - 2, axis=0), pv[1:-1], pv[2:]], axis=1)
    bary = _barycentric(tri, q[None, :])[:, 0, :]
    k = int(np.argmax(bary.min(axis=1)))
    w = np.clip(bary[k], 0.0, None)
    w = w / w.sum()
    return float(w @ tri[k, :, 2])


def _vertices_on_floor(
    mesh: PolyMesh,
    sample_poly: np.ndarray,
    samples: np.ndarray,
    sample_span: np.ndarray,
    hf: Heightfield,
    layer_tol: float,
    tol: float,
    span_region: np.ndarray | None = None,
) -> np.ndarray:
    """The vertices, each moved up or down onto its polygons' floor where it is more than tol off it.

    Outline points take their height between two column centres and keep it when simplification
    or the push off walls moves them across a slope, and a vertex added on a long edge (a portal's
    end) takes it along the edge, across a crease: any of these can float above the floor or sink
    below it. The floor at a vertex is that of the nearest sample of its polygon within
    _VERTEX_REACH cells, carried over along that sample's slope but not past its triangle's
    lowest or highest point; failing one, the nearest sample of the polygon's region there within
    layer_tol (half the agent height) of the vertex: a region can hold another floor in the next
    column, at least an agent height away, but a vertex pushed across a steep slope can be more
    than a climb step off its own. A vertex whose polygons hold no sample that near (a thin polygon
    between cell centres, at the foot of a stair) takes the nearest span of its region instead."""
    vertex = mesh.poly_vertices
    poly = mesh.edge_polygon
    xyz = mesh.vertices[vertex]
    floor = _floor_near(
        hf,
        xyz,
        mesh.regions[poly],
        samples,
        mesh.regions[sample_poly],
        sample_span,
        layer_tol,
        (
            poly,
            sample_poly,
        ),
    )
    missing = np.flatnonzero(np.isnan(floor))
    if len(missing) and span_region is not None:
        span = np.flatnonzero(span_region >= 0)
        centre = hf.bmin[:2] + (np.column_stack([hf.x[span], hf.y[span]]) + 0.5) * hf.cell_size
        points = np.column_stack([centre, hf.z[span]])
        floor[missing] = _floor_near(
            hf, xyz[missing], mesh.regions[poly[missing]], points, span_region[span], span, layer_tol
        )
    vertices = np.array(mesh.vertices)
    off = np.abs(floor - vertices[vertex, 2])
    # A vertex of several polygons takes the floor closest to its height.
    by_vertex = np.lexsort((np.nan_to_num(off, nan=np.inf), vertex))
    first = by_vertex[np.concatenate([[True], vertex[by_vertex[1:]] != vertex[by_vertex[:-1]]])]
    move = first[off[first] > tol]
    vertices[vertex[move], 2] = floor[move]
    return vertices


def _floor_near(
    hf: Heightfield,
    xyz: np.ndarray,
    region: np.ndarray,
    points: np.ndarray,
    point_region: np.ndarray,
    point_span: np.ndarray,
    layer_tol: float,
    owners: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """(N,) the floor height under each of xyz (N, 3) from the nearest of `points` (floor samples at
    column centres, one per region and column) of the same region within _VERTEX_REACH cells,
    carried along its span's slope but not past its triangle's lowest or highest point; NaN where
    none is that near. A point on another floor of the region (farther than layer_tol) is skipped
    unless owners = (polygon of each of xyz, polygon of each point) says it is the same polygon's,
    and a point of the same polygon is preferred to a nearer one of another."""
    cs = hf.cell_size
    cell = np.floor((points[:, :2] - hf.bmin[:2]) / cs).astype(np.int64)
    key = (point_region * hf.height + cell[:, 1]) * hf.width + cell[:, 0]
    order = np.argsort(key, kind="stable")
    key = key[order]
    base = np.floor((xyz[:, :2] - hf.bmin[:2]) / cs).astype(np.int64)
    k = np.arange(-_VERTEX_REACH, _VERTEX_REACH + 1)
    di, dj = (a.ravel() for a in np.meshgrid(k, k))
    slot = np.repeat(np.arange(len(xyz)), len(di))
    i, j = base[slot, 0] + np.tile(di, len(xyz)), base[slot, 1] + np.tile(dj, len(xyz))
    query = (region[slot] * hf.height + j) * hf.width + i
    at = np.minimum(np.searchsorted(key, query), max(len(key) - 1, 0))
    hit = (i >= 0) & (i < hf.width) & (j >= 0) & (j < hf.height)
    hit &= (key[at] == query) if len(key) else False
    slot, point = slot[hit], order[at[hit]]
    rel = xyz[slot, :2] - points[point, :2]
    span = point_span[point]
    slope = hf.gradient[span] if hf.gradient is not None else np.zeros((len(point), 2))
    z = points[point, 2] + (rel * slope).sum(axis=1)
    if hf.surface_range is not None:  # not past the sample's triangle: a ramp's slope ends at its foot
        z = np.clip(z, hf.surface_range[span, 0], hf.surface_range[span, 1])
    own = owners[1][point] == owners[0][slot] if owners is not None else np.zeros(len(slot), dtype=bool)
    usable = own | (np.abs(z - xyz[slot, 2]) <= layer_tol)
    slot, z, own, dist = slot[usable], z[usable], own[usable], np.hypot(*rel[usable].T)
    best = np.lexsort((dist, ~own, slot))
    best = best[np.concatenate([[True], slot[best[1:]] != slot[best[:-1]]])] if len(best) else best
    floor = np.full(len(xyz), np.nan)
    floor[slot[best]] = z[best]
    return floor


def _column_index(hf: Heightfield) -> tuple[np.ndarray, np.ndarray]:
    """Per grid column: first span index and span count (spans are sorted by (j, i, z))."""
    col = hf.y.astype(np.int64) * hf.width + hf.x.astype(np.int64)
    n_cols = hf.width * hf.height
    count = np.bincount(col, minlength=n_cols)
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    return start, count


# Polygon-column pairs examined at once while sampling: bounds the temporaries on large meshes.
_PAIRS_PER_CHUNK = 1 << 20
# Samples measured against their polygon's fan at a time (bounds _fan_fits' temporaries).
_SAMPLES_PER_CHUNK = 1 << 16


def _samples(mesh: PolyMesh, hf: Heightfield, layer_tol: float, span_region: np.ndarray | None):
    """Floor samples strictly inside each polygon (top view), one per column, on the polygon's floor:
    (S,) polygon of each sample, sorted, (S, 3) points and (S,) their spans. All polygons at once, in chunks.

    span_region given: the span of the polygon's own region in each column. Otherwise the span
    nearest the polygon's least-squares plane, if within layer_tol of it."""
    cs = hf.cell_size
    start, count = _column_index(hf)
    offs = mesh.poly_offsets
    sizes = mesh.polygon_sizes
    corner = mesh.vertices[mesh.poly_vertices]
    a = corner[:, :2]
    d = mesh.vertices[mesh.edge_next_vertex][:, :2] - a
    edge_eps = 1e-6 * cs * np.linalg.norm(d, axis=1)
    lo = np.maximum(np.floor((np.minimum.reduceat(a, offs[:-1]) - hf.bmin[:2]) / cs).astype(np.int64), 0)
    hi = np.minimum(
        np.floor((np.maximum.reduceat(a, offs[:-1]) - hf.bmin[:2]) / cs).astype(np.int64), [hf.width - 1, hf.height - 1]
    )
    width, height = hi[:, 0] - lo[:, 0] + 1, hi[:, 1] - lo[:, 1] + 1
    pairs = np.where((width > 0) & (height > 0), width * height, 0)
    plane = None if span_region is not None else _planes(corner, offs)
    out_poly, out_xyz, out_span = [], [], []
    first = 0
    ends = np.cumsum(pairs)
    while first < mesh.polygon_count:
        last = max(int(np.searchsorted(ends, (ends[first] - pairs[first]) + _PAIRS_PER_CHUNK, side="right")), first + 1)
        polys = np.arange(first, last)
        n = pairs[polys]
        owner = np.repeat(polys, n)
        k = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
        ii = lo[owner, 0] + k % width[owner]
        jj = lo[owner, 1] + k // width[owner]
        cx, cy = hf.bmin[0] + (ii + 0.5) * cs, hf.bmin[1] + (jj + 0.5) * cs
        cols = jj * hf.width + ii
        keep = count[cols] > 0
        for j in range(int(sizes[polys].max(initial=0))):
            has = keep & (sizes[owner] > j)
            e = offs[owner[has]] + j
            keep[has] = d[e, 0] * (cy[has] - a[e, 1]) - d[e, 1] * (cx[has] - a[e, 0]) > edge_eps[e]
        owner, cx, cy, cols = owner[keep], cx[keep], cy[keep], cols[keep]
        reps = count[cols]
        span = np.repeat(start[cols], reps) + (np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps))
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
        out_poly.append(owner[pair])
        out_xyz.append(np.column_stack([cx[pair], cy[pair], hf.z[pick]]))
        out_span.append(pick)
        first = last
    return np.concatenate(out_poly), np.concatenate(out_xyz), np.concatenate(out_span)


def _edge_points(
    mesh: PolyMesh, hf: Heightfield, layer_tol: float, span_region: np.ndarray | None, max_error: float, climb: float
) -> dict[int, np.ndarray]:
    """Per edge slot whose floor leaves the straight edge by more than max_error: (K, 3) points on
    it, in the slot's direction, where the floor is farthest from the line through those kept so far
    (Douglas-Peucker on samples one cell apart). Both slots of a shared edge get the same points.

    The floor under a sample is the span of the edge's polygon's region in that column (else its
    neighbour's), or without regions the span nearest the straight edge within layer_tol. A region
    can reach round to another floor beside the edge (the floor below a ramp's top end, joined to the
    ramp at its foot): samples are kept only while the floor runs on from the edge's start as linked
    spans do, at most a climb step per link (_one_floor)."""
    cs = hf.cell_size
    start, count = _column_index(hf)
    u, w = mesh.poly_vertices, mesh.edge_next_vertex
    owner = mesh.edge_polygon
    # One slot per undirected edge: the one running from the lower vertex id (or the only one).
    canon = (u < w) | (mesh.neighbors < 0)
    slots = np.flatnonzero(canon)
    a, b = mesh.vertices[u[slots]], mesh.vertices[w[slots]]
    steps = np.maximum(np.ceil(np.linalg.norm(b[:, :2] - a[:, :2], axis=1) / cs).astype(np.int64), 1)
    n = steps - 1
    edge = np.repeat(np.arange(len(slots)), n)
    t = (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n) + 1) / np.repeat(steps, n)
    xyz = a[edge] + t[:, None] * (b[edge] - a[edge])
    ii = np.floor((xyz[:, 0] - hf.bmin[0]) / cs).astype(np.int64)
    jj = np.floor((xyz[:, 1] - hf.bmin[1]) / cs).astype(np.int64)
    inside = (ii >= 0) & (ii < hf.width) & (jj >= 0) & (jj < hf.height)
    cols = np.where(inside, jj * hf.width + np.clip(ii, 0, hf.width - 1), 0)
    reps = np.where(inside, count[cols], 0)
    span = np.repeat(start[cols], reps) + (np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps))
    sample = np.repeat(np.arange(len(t)), reps)
    floor = np.full(len(t), np.nan)
    if span_region is not None:
        other = mesh.neighbors[slots]
        # The neighbour's region may hold another storey in this column: only its span nearest the
        # edge counts, and only within a storey's height of it.
        gap = np.abs(hf.z[span] - xyz[sample, 2])
        least = np.full(len(t), np.inf)
        np.minimum.at(least, sample, gap)
        near_line = (gap <= least[sample]) & (gap < 2.0 * layer_tol)
        for region_of, accept in (
            (mesh.regions[owner[slots]], True),
            (np.where(other >= 0, mesh.regions[np.maximum(other, 0)], -1), near_line),
        ):
            mine = (span_region[span] == region_of[edge[sample]]) & np.isnan(floor[sample]) & accept
            floor[sample[mine]] = hf.z[span[mine]]
    else:
        gap = np.abs(hf.z[span] - xyz[sample, 2])
        order = np.lexsort((gap, sample))
        first = order[np.concatenate([[True], sample[order][1:] != sample[order][:-1]])] if len(order) else order
        first = first[gap[first] <= layer_tol]
        floor[sample[first]] = hf.z[span[first]]
    known = ~np.isnan(floor)
    off = np.zeros(len(slots))
    np.maximum.at(off, edge[known], np.abs(floor[known] - xyz[known, 2]))
    out: dict[int, np.ndarray] = {}
    twins = twin_edges(u, w) if (off > max_error).any() else None
    cuts = np.concatenate([[0], np.cumsum(n)])
    for k in np.flatnonzero(off > max_error).tolist():
        sel = slice(cuts[k], cuts[k + 1])
        good = known[sel]
        profile = np.column_stack([xyz[sel, 0], xyz[sel, 1], floor[sel]])[good]
        on = _one_floor(a[k, 2], profile[:, 2], climb)
        keep = _profile_points(a[k], b[k], profile[on], t[sel][good][on], max_error)
        if not keep:
            continue
        pts = profile[on][sorted(keep)]
        e = int(slots[k])
        out[e] = pts
        back = int(twins[e]) if twins is not None else -1
        if back >= 0 and mesh.neighbors[e] >= 0:
            out[back] = pts[::-1]
    return out


def _one_floor(start: float, heights: np.ndarray, climb: float) -> np.ndarray:
    """Bool per sample along an edge (heights, in order from the edge's start at height `start`,
    one cell apart): whether it continues the floor the edge starts on. Samples a cell apart lie in
    the same or neighbouring columns, at most two links (a diagonal) apart, so one floor rises or
    falls at most 2 * climb from one to the next; a sample farther than that from the last one kept
    is another floor (where samples are missing the floor may have moved more, and is dropped too:
    fewer points, never a wrong one)."""
    keep = np.zeros(len(heights), dtype=bool)
    last = start
    for i, z in enumerate(heights.tolist()):
        if abs(z - last) <= 2.0 * climb:
            keep[i], last = True, z
    return keep


def _profile_points(a: np.ndarray, b: np.ndarray, profile: np.ndarray, t: np.ndarray, max_error: float) -> list[int]:
    """Indices of the samples to keep along a -> b so the polyline through them stays within
    max_error of every sample's height (Douglas-Peucker, at most MAX_EDGE_POINTS)."""
    keep: list[int] = []
    stack = [(0.0, float(a[2]), 1.0, float(b[2]), 0, len(t))]
    while stack and len(keep) < MAX_EDGE_POINTS:
        t0, z0, t1, z1, lo, hi = stack.pop()
        if hi <= lo:
            continue
        line = z0 + (t[lo:hi] - t0) / (t1 - t0) * (z1 - z0)
        gap = np.abs(profile[lo:hi, 2] - line)
        k = int(np.argmax(gap))
        if gap[k] <= max_error:
            continue
        m = lo + k
        keep.append(m)
        stack.append((t0, z0, float(t[m]), float(profile[m, 2]), lo, m))
        stack.append((float(t[m]), float(profile[m, 2]), t1, z1, m + 1, hi))
    return keep


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


def _fan(n: int, apex: int) -> list[list[int]]:
    """The fan triangulation of an n-gon from corner `apex`."""
    return [[apex, (apex + k) % n, (apex + k + 1) % n] for k in range(1, n - 1)]


def fan_apexes(mesh: PolyMesh) -> np.ndarray:
    """Per polygon, the corner whose fan has the fattest thinnest triangle (2·area / longest side²):
    a fan from a corner next to a nearly straight one would start with a sliver along the polygon's
    edge, and a point on that edge would take its height across the sliver. All polygons at once."""
    offs, sizes = mesh.poly_offsets, mesh.polygon_sizes
    xy = mesh.vertices[mesh.poly_vertices, :2]
    best, apex = np.full(mesh.polygon_count, -np.inf), np.zeros(mesh.polygon_count, dtype=np.int64)
    for j in range(int(sizes.max(initial=3))):
        has = np.flatnonzero(sizes > j)
        worst = np.full(len(has), np.inf)
        n = sizes[has]
        a = xy[offs[has] + j]
        for k in range(1, int(n.max(initial=3)) - 1):
            fan = np.flatnonzero(n > k + 1)
            b, c = xy[offs[has[fan]] + (j + k) % n[fan]], xy[offs[has[fan]] + (j + k + 1) % n[fan]]
            u, v, w = b - a[fan], c - a[fan], c - b
            area2 = np.abs(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0])
            longest = np.maximum(np.maximum((u**2).sum(1), (v**2).sum(1)), (w**2).sum(1))
            worst[fan] = np.minimum(worst[fan], area2 / np.maximum(longest, 1e-300))
        better = worst > best[has]
        best[has[better]], apex[has[better]] = worst[better], j
    return apex


def _fan_fits(
    mesh: PolyMesh,
    apex: np.ndarray,
    sample_poly: np.ndarray,
    samples: np.ndarray,
    max_error: float,
    progress: Progress = SILENT,
) -> np.ndarray:
    """Bool per polygon: its fan triangulation (from `apex`) is already within max_error of every
    sample (with a hair to spare), so refinement would insert nothing. All polygons at once, the
    samples _SAMPLES_PER_CHUNK at a time (each sample is measured on its own)."""
    corner = mesh.vertices[mesh.poly_vertices]
    worst = np.zeros(mesh.polygon_count)
    for start in range(0, len(samples), _SAMPLES_PER_CHUNK):
        progress.at(start / len(samples))
        part = slice(start, start + _SAMPLES_PER_CHUNK)
        z = _fan_heights(mesh, corner, apex, sample_poly[part], samples[part])
        np.maximum.at(worst, sample_poly[part], np.abs(z - samples[part, 2]))
    return worst <= max_error - 1e-9


def _fan_heights(
    mesh: PolyMesh, corner: np.ndarray, apex: np.ndarray, sample_poly: np.ndarray, samples: np.ndarray
) -> np.ndarray:
    """(N,) height of each sample on its polygon's fan from `apex`: in the fan triangle that holds
    it, or the one it lies least outside of."""
    offs, sizes = mesh.poly_offsets, mesh.polygon_sizes
    first = offs[sample_poly]
    n, top = sizes[sample_poly], apex[sample_poly]
    a = corner[first + top]
    best = np.full(len(samples), -np.inf)
    z = np.zeros(len(samples))
    for k in range(1, int(sizes.max(initial=2)) - 1):
        has = np.flatnonzero(sizes[sample_poly] > k + 1)
        b = corner[first[has] + (top[has] + k) % n[has]]
        c = corner[first[has] + (top[has] + k + 1) % n[has]]
        ux, uy = b[:, 0] - a[has, 0], b[:, 1] - a[has, 1]
        vx, vy = c[:, 0] - a[has, 0], c[:, 1] - a[has, 1]
        det = ux * vy - uy * vx
        det = np.where(det != 0.0, det, 1e-300)
        rx, ry = samples[has, 0] - a[has, 0], samples[has, 1] - a[has, 1]
        w1, w2 = (rx * vy - ry * vx) / det, (ux * ry - uy * rx) / det
        w0 = 1.0 - w1 - w2
        score = np.minimum(np.minimum(w0, w1), w2)
        better = score > best[has]
        rows = has[better]
        best[rows] = score[better]
        z[rows] = (w0 * a[has, 2] + w1 * b[:, 2] + w2 * c[:, 2])[better]
    return z


def _barycentric(tri: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(T, N, 3) barycentric coordinates (top view) of points q (N, 2) in triangles tri (T, 3, >=2)."""
    a, b, c = tri[:, 0, :2], tri[:, 1, :2], tri[:, 2, :2]
    v0, v1 = b - a, c - a
    det = v0[:, 0] * v1[:, 1] - v0[:, 1] * v1[:, 0]
    det = np.where(np.abs(det) > 0, det, 1e-300)
    r = q[None, :, :] - a[:, None, :]
    w1 = (r[..., 0] * v1[:, None, 1] - r[..., 1] * v1[:, None, 0]) / det[:, None]
    w2 = (v0[:, None, 0] * r[..., 1] - v0[:, None, 1] * r[..., 0]) / det[:, None]
    return np.stack([1.0 - w1 - w2, w1, w2], axis=-1)


def _refine(
    poly: np.ndarray, apex: int, samples: np.ndarray, max_error: float, on_edges: list
) -> tuple[np.ndarray, np.ndarray]:
    """Fan triangulation of the polygon from `apex`, its edge points (on_edges[k]: points along edge
    k in order, or None), then inserted samples (Delaunay flips) until the error bound holds."""
    n = len(poly)
    extra = sum(len(pts) for pts in on_edges if pts is not None)
    tin = _Tin([*poly], _fan(n, apex), extra)
    for k, pts in enumerate(on_edges):
        u = k
        for point in pts if pts is not None else ():
            u = tin.insert_on_boundary(u, (k + 1) % n, point)
    owner = np.zeros(len(samples), dtype=np.int64)
    w = np.zeros((len(samples), 3))
    err = np.zeros(len(samples))
    _locate(tin, samples, np.arange(len(samples)), np.arange(len(tin.tris)), owner, w, err)
    for _ in range(MAX_INSERTIONS):
        worst = int(np.argmax(err)) if len(err) else 0
        if not len(err) or err[worst] <= max_error:
            break
        err[worst] = -1.0
        changed = tin.insert(int(owner[worst]), w[worst], samples[worst])
        if changed:
            changed_arr = np.asarray(sorted(changed))
            mark = np.zeros(len(tin.tris), dtype=bool)
            mark[changed_arr] = True
            redo = np.nonzero(mark[owner] & (err >= 0))[0]
            _locate(tin, samples, redo, changed_arr, owner, w, err)
    return np.asarray(tin.verts, dtype=np.float64), np.asarray(tin.tris, dtype=np.int64)


def _locate(tin: _Tin, samples, which: np.ndarray, cand: np.ndarray, owner, w, err) -> None:
    """Assign samples `which` to their containing triangle among `cand`; update weights and errors.

    Written out component by component: this runs once per insertion on small arrays, where the
    number of numpy calls, not their size, sets the cost."""
    if len(which) == 0:
        return
    corner = tin.array[tin.tri_array[cand]]  # (T, 3, 3)
    ax, ay = corner[:, 0, 0, None], corner[:, 0, 1, None]
    ux, uy = corner[:, 1, 0, None] - ax, corner[:, 1, 1, None] - ay
    vx, vy = corner[:, 2, 0, None] - ax, corner[:, 2, 1, None] - ay
    det = ux * vy - uy * vx
    det = np.where(det != 0.0, det, 1e-300)
    q = samples[which]
    rx, ry = q[None, :, 0] - ax, q[None, :, 1] - ay
    w1 = (rx * vy - ry * vx) / det
    w2 = (ux * ry - uy * rx) / det
    w0 = 1.0 - w1 - w2
    best = np.argmax(np.minimum(np.minimum(w0, w1), w2), axis=0)
    cols = np.arange(len(which))
    wb = np.column_stack([w0[best, cols], w1[best, cols], w2[best, cols]])
    owner[which] = cand[best]
    w[which] = wb
    err[which] = np.abs(np.einsum("nk,nk->n", wb, corner[best, :, 2]) - q[:, 2])


class _Tin:
    """A small triangulation of one convex polygon with point insertion and Lawson flips."""

    def __init__(self, verts: list, tris: list[list[int]], boundary: int = 0):
        self.verts = verts
        # The same vertices as one array (room for every insertion and `boundary` edge points), for
        # vectorised point location.
        self.array = np.empty((len(verts) + MAX_INSERTIONS + boundary, 3))
        self.array[: len(verts)] = verts
        self.tris = tris
        # The triangles as an array too (each insertion adds at most two), kept in step by _set.
        self.tri_array = np.zeros((len(tris) + 2 * (MAX_INSERTIONS + boundary), 3), dtype=np.int64)
        self.tri_array[: len(tris)] = tris
        # Top-view coordinates as float tuples for the flip tests (plain floats beat numpy scalars).
        self.xy = [(float(q[0]), float(q[1])) for q in verts]
        self.edge: dict[tuple[int, int], int] = {}
        for t in range(len(tris)):
            self._register(t)

    def _register(self, t: int) -> None:
        tri = self.tris[t]
        for i in range(3):
            self.edge[(tri[i], tri[(i + 1) % 3])] = t

    def _set(self, t: int, tri: list[int]) -> None:
        if t < len(self.tris):
            old = self.tris[t]
            for i in range(3):
                if self.edge.get((old[i], old[(i + 1) % 3])) == t:
                    del self.edge[(old[i], old[(i + 1) % 3])]
            self.tris[t] = tri
        else:
            self.tris.append(tri)
        self.tri_array[t] = tri
        self._register(t)

    def _add_vertex(self, new: int, point: np.ndarray) -> None:
        self.array[new] = point
        self.verts.append(self.array[new].copy())
        self.xy.append((float(point[0]), float(point[1])))

    def insert_on_boundary(self, u: int, v: int, point: np.ndarray) -> int:
        """Split the boundary edge u -> v at point (on it, seen from above); the new vertex."""
        t = self.edge[(u, v)]
        opp = next(x for x in self.tris[t] if x not in (u, v))
        new = len(self.verts)
        self._add_vertex(new, point)
        t1 = len(self.tris)
        self._set(t, [opp, u, new])
        self._set(t1, [v, opp, new])
        self._legalize(new, [t, t1])
        return new

    def insert(self, t: int, w: np.ndarray, point: np.ndarray) -> set[int]:
        """Split triangle t at point (3 triangles, or 2+2 across an inner edge it lies on); the changed triangles.

        Points on the polygon's own boundary are not inserted: they would put a vertex inside a
        polygon edge, which the neighbouring polygon's detail surface would not share.
        """
        on_edge = np.nonzero(w < _EDGE_EPS)[0]
        if len(on_edge) > 1:
            return set()
        new = len(self.verts)
        tri = self.tris[t]
        if len(on_edge) == 0:
            a, b, c = tri
            self._add_vertex(new, point)
            t1, t2 = len(self.tris), len(self.tris) + 1
            self._set(t, [a, b, new])
            self._set(t1, [b, c, new])
            self._set(t2, [c, a, new])
            created = [t, t1, t2]
        else:
            k = int(on_edge[0])
            opp, u, v = tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]
            other = self.edge.get((v, u))
            if other is None:
                return set()
            far = next(x for x in self.tris[other] if x not in (u, v))
            self._add_vertex(new, point)
            t1, t2 = len(self.tris), len(self.tris) + 1
            self._set(t, [opp, u, new])
            self._set(t1, [v, opp, new])
            self._set(other, [far, v, new])
            self._set(t2, [u, far, new])
            created = [t, t1, other, t2]
        return self._legalize(new, created)

    def _legalize(self, new: int, created: list[int]) -> set[int]:
        """Lawson flips around a new vertex; the triangles changed."""
        changed = set(created)
        stack = [(self.tris[s][0], self.tris[s][1]) for s in created]
        while stack:
            u, v = stack.pop()
            t_in = self.edge.get((u, v))
            t_out = self.edge.get((v, u))
            if t_in is None or t_out is None or new not in self.tris[t_in]:
                continue
            far = next(x for x in self.tris[t_out] if x not in (u, v))
            if not self._in_circle(new, u, v, far) or not self._convex_quad(new, u, far, v):
                continue
            self._set(t_in, [new, u, far])
            self._set(t_out, [new, far, v])
            changed.update((t_in, t_out))
            stack.extend([(u, far), (far, v)])
        return changed

    def _in_circle(self, a: int, b: int, c: int, d: int) -> bool:
        """Is d strictly inside the circumcircle of the CCW triangle abc (top view)?"""
        dx, dy = self.xy[d]
        rows = []
        for i in (a, b, c):
            x, y = self.xy[i][0] - dx, self.xy[i][1] - dy
            rows.append((x, y, x * x + y * y))
        (ax, ay, aw), (bx, by, bw), (cx, cy, cw) = rows
        det = ax * (by * cw - bw * cy) - ay * (bx * cw - bw * cx) + aw * (bx * cy - by * cx)
        return det > 1e-12

    def _convex_quad(self, a: int, b: int, c: int, d: int) -> bool:
        """Is the quad a, b, c, d strictly convex, so flipping its diagonal keeps both triangles valid?"""
        q = [self.xy[i] for i in (a, b, c, d)]
        for k in range(4):
            (x0, y0), (x1, y1), (x2, y2) = q[k], q[(k + 1) % 4], q[(k + 2) % 4]
            if (x1 - x0) * (y2 - y1) - (y1 - y0) * (x2 - x1) <= 1e-12:
                return False
        return True
