"""Points along polygon edges where the floor leaves the straight edge (Recast's hull tessellation),
the same for both polygons of a shared edge."""

from __future__ import annotations

import numpy as np

from ..components import run_positions, twin_edges
from ..heightfield import Heightfield
from ..navmesh import PolyMesh
from .samples import floor_at

# At most this many points are added along one polygon edge.
MAX_EDGE_POINTS = 32
# The floor along an edge is sampled this many cells apart: a cell apart, an edge across a bending
# floor was off by 1.1 times max_height_error between two samples within it (a rolling terrain).
EDGE_STEP = 0.5
# Edge samples whose floor is found at once (bounds the temporaries: on large levels they were the
# detail stage's peak).
_EDGE_SAMPLES_PER_CHUNK = 1 << 16


def _edge_points(
    mesh: PolyMesh,
    hf: Heightfield,
    start: np.ndarray,
    layer_tol: float,
    span_region: np.ndarray | None,
    max_error: float,
    climb: float,
    polygons: np.ndarray | None = None,
) -> dict[int, np.ndarray]:
    """Per edge slot whose floor leaves the straight edge by more than max_error: (K, 3) points on
    it, in the slot's direction, where the floor is farthest from the line through those kept so far
    (Douglas-Peucker on samples EDGE_STEP cells apart). Both slots of a shared edge get the same points.

    The floor under a sample is the span of the edge's polygon's region in that column (else its
    neighbour's, or beside a wall a span of no region linked to the polygon's: the floor eroded off
    the region; else that of the nearest column around holding one, _floor_beside), taken at the
    sample on its slope, or without regions the span nearest the straight edge within layer_tol. A
    region can reach round to another floor beside the edge (the floor below a ramp's top end,
    joined to the ramp at its foot): samples are kept only while the floor runs on from the edge's
    start as linked spans do, at most a climb step per link (_one_floor).
    start: samples.column_starts(hf). polygons: a bool per polygon, to measure only their edges."""
    cs = hf.cell_size
    u, w = mesh.poly_vertices, mesh.edge_next_vertex
    owner = mesh.edge_polygon
    # One slot per undirected edge: the one running from the lower vertex id (or the only one).
    canon = (u < w) | (mesh.neighbors < 0)
    if polygons is not None:
        canon &= polygons[owner] | ((mesh.neighbors >= 0) & polygons[np.maximum(mesh.neighbors, 0)])
    slots = np.flatnonzero(canon)
    a, b = mesh.vertices[u[slots]], mesh.vertices[w[slots]]
    steps = np.maximum(np.ceil(np.linalg.norm(b[:, :2] - a[:, :2], axis=1) / (EDGE_STEP * cs)).astype(np.int64), 1)
    n = steps - 1
    cuts = np.concatenate([[0], np.cumsum(n)])
    floor = np.empty(int(cuts[-1]))
    off = np.zeros(len(slots))
    # A run of edges at a time, so the per-sample temporaries stay bounded.
    first = 0
    while first < len(slots):
        last = max(int(np.searchsorted(cuts, cuts[first] + _EDGE_SAMPLES_PER_CHUNK, side="right")) - 1, first + 1)
        run = slice(first, last)
        floor[cuts[first] : cuts[last]], off[run] = _edge_floor(
            mesh, hf, start, layer_tol, span_region, slots[run], a[run], b[run], steps[run]
        )
        first = last
    out: dict[int, np.ndarray] = {}
    twins = twin_edges(u, w) if (off > max_error).any() else None
    for k in np.flatnonzero(off > max_error).tolist():
        t = (np.arange(n[k]) + 1) / steps[k]
        xyz = a[k] + t[:, None] * (b[k] - a[k])
        profile_floor = floor[cuts[k] : cuts[k + 1]]
        good = ~np.isnan(profile_floor)
        profile = np.column_stack([xyz[:, 0], xyz[:, 1], profile_floor])[good]
        on = _one_floor(a[k, 2], profile[:, 2], climb)
        keep = _profile_points(a[k], b[k], profile[on], t[good][on], max_error)
        if not keep:
            continue
        pts = profile[on][sorted(keep)]
        e = int(slots[k])
        out[e] = pts
        back = int(twins[e]) if twins is not None else -1
        if back >= 0 and mesh.neighbors[e] >= 0:
            out[back] = pts[::-1]
    return out


def _edge_floor(
    mesh: PolyMesh,
    hf: Heightfield,
    start: np.ndarray,
    layer_tol: float,
    span_region: np.ndarray | None,
    slots: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    steps: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(floor, off) of the edge slots `slots` (from a to b, `steps` steps): the floor under each of
    their samples, in order (NaN where none is found), as _edge_points describes, and per slot how
    far the floor it found leaves the straight edge at most (0 where it found none)."""
    owner = mesh.edge_polygon
    n = steps - 1
    edge = np.repeat(np.arange(len(slots)), n)
    t = (run_positions(n) + 1) / np.repeat(steps, n)
    xyz = a[edge] + t[:, None] * (b[edge] - a[edge])
    del t
    span, sample = _column_spans(hf, start, xyz[:, :2])
    height = floor_at(hf, span, xyz[sample, :2])
    floor = np.full(len(xyz), np.nan)
    if span_region is not None:
        other = mesh.neighbors[slots]
        # The neighbour's region may hold another storey in this column: only its span nearest the
        # edge counts, and only within a storey's height of it.
        gap = np.abs(height - xyz[sample, 2])
        least = np.full(len(xyz), np.inf)
        np.minimum.at(least, sample, gap)
        near_line = (gap <= least[sample]) & (gap < 2.0 * layer_tol)
        own = mesh.regions[owner[slots]]
        # Beside a wall the column may hold only the floor eroded off the region (no region, -1):
        # the polygon's floor where a link joins it to the region; not a surface of no region
        # apart from it (fuzz case 601749: a box's top 0.2 m above the floor the edge runs on).
        joined = _eroded_off(hf, span, own[edge[sample]], span_region)
        # That eroded floor is the region's own, at whatever height the straight edge passes (on the
        # shared undulating level a 30 m wall edge ran 4.8 m under a hump): the nearest such span
        # to the line counts, not only one within a storey's height of it.
        least_joined = np.full(len(xyz), np.inf)
        np.minimum.at(least_joined, sample[joined], gap[joined])
        nearest_joined = joined & (gap <= least_joined[sample])
        wall = other[edge[sample]] < 0
        for region_of, accept in (
            (own, True),
            (
                np.where(other >= 0, mesh.regions[np.maximum(other, 0)], -1),
                np.where(wall, nearest_joined, near_line),
            ),
        ):
            mine = (span_region[span] == region_of[edge[sample]]) & np.isnan(floor[sample]) & accept
            floor[sample[mine]] = height[mine]
        missing = np.flatnonzero(np.isnan(floor))
        floor[missing] = _floor_beside(hf, start, xyz[missing], own[edge[missing]], span_region)
    else:
        gap = np.abs(height - xyz[sample, 2])
        order = np.lexsort((gap, sample))
        first = order[np.concatenate([[True], sample[order][1:] != sample[order][:-1]])] if len(order) else order
        first = first[gap[first] <= layer_tol]
        floor[sample[first]] = height[first]
    known = ~np.isnan(floor)
    off = np.zeros(len(slots))
    np.maximum.at(off, edge[known], np.abs(floor[known] - xyz[known, 2]))
    return floor, off


def _column_spans(hf: Heightfield, start: np.ndarray, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(span, point) for every span in the column under each point xy (K, 2); none off the grid."""
    ii = np.floor((xy[:, 0] - hf.bmin[0]) / hf.cell_size).astype(np.int64)
    jj = np.floor((xy[:, 1] - hf.bmin[1]) / hf.cell_size).astype(np.int64)
    inside = (ii >= 0) & (ii < hf.width) & (jj >= 0) & (jj < hf.height)
    cols = np.where(inside, jj * hf.width + np.clip(ii, 0, hf.width - 1), 0)
    reps = np.where(inside, start[cols + 1] - start[cols], 0)
    span = np.repeat(start[cols], reps) + run_positions(reps)
    return span, np.repeat(np.arange(len(xy)), reps)


def _floor_beside(
    hf: Heightfield, start: np.ndarray, xyz: np.ndarray, region: np.ndarray, span_region: np.ndarray
) -> np.ndarray:
    """(K,) the floor at each point whose own column holds none of its region's: that of the span of
    `region` (or of no region, linked to it) whose column centre is nearest among the 8 around,
    carried to the point on its slope; nan where they hold none. At radius 0 an outline runs along
    the floor's real edge, which can pass the last column whose centre is on the floor: the column
    under the edge then holds nothing, and a 40 m wall edge along a terrain's border ran straight,
    4.4 m under the floor between its ends."""
    cs = hf.cell_size
    spans, points = [], []
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            if dx or dy:
                span, point = _column_spans(hf, start, xyz[:, :2] + (dx * cs, dy * cs))
                spans.append(span)
                points.append(point)
    span, point = np.concatenate(spans), np.concatenate(points)
    ok = (span_region[span] == region[point]) | _eroded_off(hf, span, region[point], span_region)
    span, point = span[ok], point[ok]
    out = np.full(len(xyz), np.nan)
    if not len(span):
        return out
    reach = np.hypot(*(hf.centers_xy(span) - xyz[point, :2]).T)
    order = np.lexsort((reach, point))
    first = order[np.concatenate([[True], point[order][1:] != point[order][:-1]])]
    out[point[first]] = floor_at(hf, span[first], xyz[point[first], :2])
    return out


def _eroded_off(hf: Heightfield, span: np.ndarray, region: np.ndarray, span_region: np.ndarray) -> np.ndarray:
    """Bool per span: it has no region and a link joins it to a span of `region` (one per span):
    the floor eroded off that region beside its walls."""
    joined = np.zeros(len(span), dtype=bool)
    for d in range(4):  # one direction at a time: no (K, 4) temporaries
        linked = hf.links[span, d]
        joined |= (linked >= 0) & (span_region[np.maximum(linked, 0)] == region)
    return (span_region[span] < 0) & joined


def _one_floor(start: float, heights: np.ndarray, climb: float) -> np.ndarray:
    """Bool per sample along an edge (heights, in order from the edge's start at height `start`,
    at most a cell apart): whether it continues the floor the edge starts on. Samples a cell apart lie in
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
