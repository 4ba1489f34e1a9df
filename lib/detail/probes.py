"""The detail surface measured against the real floor between the samples: along its triangles'
inner edges and inside them."""

from __future__ import annotations

import numpy as np

from ..components import run_positions
from ..heightfield import Heightfield
from ..heightfield.walk import floor_under
from .edges import EDGE_STEP
from .samples import FloorSamples

# Rounds of probing, and inserting the probes found off the floor into the polygons' surfaces.
PROBE_ROUNDS = 8
# Floor triangles a probe's floor is followed across to the surface's corners around it (a detail
# triangle can be metres long on a soup of 0.1 m triangles).
_JOIN_STEPS = 512
# The columns a probe takes its polygon's sample from: its own first, then the sides, then the
# corners (a probe near the polygon's edge can lie in a column whose centre is outside it).
# Triangles whose probes off_floor makes at once, and probes it measures at once (bound its
# temporaries).
_TRIANGLES_PER_GROUP = 1 << 10
_PROBES_PER_CHUNK = 1 << 12
_AROUND = ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1))


class SampleColumns:
    """Each polygon's floor sample by column: the span a probe's floor is followed from."""

    def __init__(self, hf: Heightfield, samples: FloorSamples, rows: slice):
        """Of the samples `rows` only (samples are sorted by polygon: a run of polygons')."""
        self.hf = hf
        polygon, span = samples.polygon[rows], samples.span[rows]
        key = polygon.astype(np.int64) * (hf.width * hf.height) + hf.y[span].astype(np.int64) * hf.width
        key += hf.x[span]
        order = np.argsort(key, kind="stable")
        self.key, self.span = key[order], span[order]

    def span_at(self, polygon: np.ndarray, xy: np.ndarray) -> np.ndarray:
        """(K,) the span of polygon's sample in the column of each point xy (K, 2), or in the
        nearest column around holding one; -1 where none does."""
        hf = self.hf
        out = np.full(len(xy), -1, dtype=np.int64)
        if not len(self.key):
            return out
        base = np.floor((xy - hf.bmin[:2]) / hf.cell_size).astype(np.int64)
        for di, dj in _AROUND:
            todo = np.flatnonzero(out < 0)
            if not len(todo):
                break
            i, j = base[todo, 0] + di, base[todo, 1] + dj
            ok = (i >= 0) & (i < hf.width) & (j >= 0) & (j < hf.height)
            key = (polygon[todo] * hf.height + j) * hf.width + i
            at = np.minimum(np.searchsorted(self.key, key), len(self.key) - 1)
            hit = ok & (self.key[at] == key)
            out[todo[hit]] = self.span[at[hit]]
        return out


def off_floor(
    columns: SampleColumns,
    surfaces: dict[int, tuple[np.ndarray, np.ndarray]],
    max_error: float,
    settled: dict[int, set[bytes]] | None = None,
) -> dict[int, np.ndarray]:
    """Polygon -> (K, 3) its probes (points on the floor) that lie farther than max_error from its
    surface, for the polygons of `surfaces` (polygon -> (vertices, triangles)) that have any.

    A surface within max_error of every sample (one per column centre) can leave the floor between
    them: a long thin triangle between two rows of samples, across a bend of the floor, sagged
    2.8 times the error under a rolling terrain's floor at cell 0.3 m. Probes: points EDGE_STEP
    cells apart along every edge inside the polygon (its boundary edges are sampled so along their
    length, lib.detail.edges), the centroid of every triangle and the points halfway from each
    corner to its opposite side's midpoint; each at the floor under it, followed from the polygon's
    sample in its column or the nearest around (floor_under). A probe whose floor is not reached
    so, or from which the floor does not run on to the surface's corners around it at their
    heights, is not measured.

    settled: polygon -> its parts (a triangle or inner edge, as _part_key gives them) whose probes
    were all found on the floor by earlier calls with these columns: measured again they would be,
    so they are not (a polygon measured again after a few insertions has kept most of its
    triangles). Updated with the parts found so for the polygons returned (the only ones measured
    again).
    """
    if settled is None:
        settled = {}
    out: dict[int, np.ndarray] = {}
    group: list[int] = []
    size = 0
    for p in surfaces:  # polygons a group at a time: a level's large polygons hold a million probes
        group.append(p)
        size += len(surfaces[p][1])
        if size >= _TRIANGLES_PER_GROUP:
            out.update(_off_floor_group(columns, {q: surfaces[q] for q in group}, max_error, settled))
            group, size = [], 0
    if group:
        out.update(_off_floor_group(columns, {q: surfaces[q] for q in group}, max_error, settled))
    return out


def _off_floor_group(
    columns: SampleColumns,
    surfaces: dict[int, tuple[np.ndarray, np.ndarray]],
    max_error: float,
    settled: dict[int, set[bytes]],
) -> dict[int, np.ndarray]:
    """off_floor for a few polygons at once."""
    polys = list(surfaces)
    if not polys:
        return {}
    sizes = np.array([len(surfaces[p][0]) for p in polys])
    counts = np.array([len(surfaces[p][1]) for p in polys])
    base = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    verts = np.concatenate([surfaces[p][0] for p in polys])
    tris = np.concatenate([surfaces[p][1] for p in polys]).astype(np.int64) + np.repeat(base, counts)[:, None]
    owner = np.repeat(np.asarray(polys, dtype=np.int64), counts)
    # Inner edges: those two triangles of a polygon share (vertex ids are per polygon).
    a, b = tris.ravel(), np.roll(tris, -1, axis=1).ravel()
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    edge, count = np.unique(lo * len(verts) + hi, return_counts=True)
    inner = edge[count > 1]
    u, w = inner // len(verts), inner % len(verts)
    # The owner of an inner edge is that of its vertices' triangles.
    vertex_owner = np.empty(len(verts), dtype=np.int64)
    vertex_owner[tris.ravel()] = np.repeat(owner, 3)
    edge_owner = vertex_owner[u]
    # The parts (every inner edge, then every triangle, numbered in turn) not settled in earlier rounds.
    n_edges = len(u)
    part_owner = np.concatenate([edge_owner, owner])
    part_corners = np.full((len(part_owner), 3, 3), np.nan)  # an edge's third corner is NaN
    part_corners[:n_edges, 0], part_corners[:n_edges, 1] = verts[u], verts[w]
    part_corners[n_edges:] = verts[tris]
    todo = np.ones(len(part_owner), dtype=bool)
    again = np.flatnonzero(np.isin(part_owner, list(settled)))
    for part, key in zip(again.tolist(), _part_keys(part_corners[again])):
        todo[part] = key not in settled[int(part_owner[part])]
    edge_part, tri_part = np.flatnonzero(todo[:n_edges]), n_edges + np.flatnonzero(todo[n_edges:])
    parts_u, parts_w, edge_owner = u[edge_part], w[edge_part], edge_owner[edge_part]
    tris_todo, owner = tris[tri_part - n_edges], owner[tri_part - n_edges]
    corners = part_corners[tri_part]
    # Inside each triangle: its centroid, and the points halfway from each corner to the opposite
    # side's midpoint (where the surface's sag under a floor bending along one corner's two sides
    # peaks).
    inside = [corners.mean(axis=1)] + [
        0.5 * corners[:, k] + 0.25 * (corners.sum(axis=1) - corners[:, k]) for k in range(3)
    ]
    # Along each inner edge, EDGE_STEP cells apart as along the polygon's own edges (at least its
    # midpoint): a long edge across a bending floor can be off a third of the way along.
    length = np.hypot(*(verts[parts_w, :2] - verts[parts_u, :2]).T)
    steps = np.maximum(np.ceil(length / (EDGE_STEP * columns.hf.cell_size)).astype(np.int64), 2)
    along = np.repeat(np.arange(len(parts_u)), steps - 1)
    t = (run_positions(steps - 1) + 1) / steps[along]
    on_edges = verts[parts_u[along]] + t[:, None] * (verts[parts_w[along]] - verts[parts_u[along]])
    probe = np.concatenate([on_edges, *inside])
    probe_owner = np.concatenate([edge_owner[along], np.tile(owner, len(inside))])
    probe_part = np.concatenate([edge_part[along], np.tile(tri_part, len(inside))])
    # The surface's corners around each probe: its edge's ends, its triangle's corners.
    ends = np.concatenate([np.column_stack([parts_u, parts_w, parts_w])[along], np.tile(tris_todo, (len(inside), 1))])
    # Measured _PROBES_PER_CHUNK at a time (a level's large polygons can hold a million probes).
    kept_rows, kept_floor = [], []
    for first in range(0, len(probe), _PROBES_PER_CHUNK):
        rows = np.arange(first, min(first + _PROBES_PER_CHUNK, len(probe)))
        off, floor = _measure(columns, probe[rows], probe_owner[rows], verts[ends[rows]], max_error)
        kept_rows.append(rows[off])
        kept_floor.append(floor)
    has, floor = np.concatenate(kept_rows), np.concatenate(kept_floor)
    out: dict[int, np.ndarray] = {}
    if not len(has):
        return out
    points = np.column_stack([probe[has, :2], floor])
    by = probe_owner[has]
    order = np.argsort(by, kind="stable")
    cuts = np.flatnonzero(np.diff(by[order])) + 1
    for rows in np.split(order, cuts):
        out[int(by[rows[0]])] = points[rows]
    # The parts measured here with no probe off the floor, of the polygons measured again.
    on_floor = np.zeros(len(part_owner), dtype=bool)
    on_floor[edge_part] = on_floor[tri_part] = True
    on_floor[probe_part[has]] = False
    on_floor = np.flatnonzero(on_floor & np.isin(part_owner, list(out)))
    for p, key in zip(part_owner[on_floor].tolist(), _part_keys(part_corners[on_floor])):
        settled.setdefault(p, set()).add(key)
    return out


def _part_keys(corners: np.ndarray) -> list[bytes]:
    """Surface parts' keys: the bytes of their corners' coordinates (K, 3, 3) in order (an edge's two
    ends, lower vertex id first, then NaN; a triangle's three), which alone set its probes and what
    they measure."""
    size = 9 * corners.itemsize
    raw = np.ascontiguousarray(corners).tobytes()
    return [raw[k : k + size] for k in range(0, len(raw), size)]


def _measure(
    columns: SampleColumns, probe: np.ndarray, owner: np.ndarray, around: np.ndarray, max_error: float
) -> tuple[np.ndarray, np.ndarray]:
    """(rows of the probes (K, 3) of polygons `owner` farther than max_error from the floor, that
    floor there) as off_floor measures them; around: (K, 3, 3) the surface's corners around each."""
    span = columns.span_at(owner, probe[:, :2])
    has = np.flatnonzero(span >= 0)
    floor, reached = floor_under(columns.hf, span[has], probe[has, :2])
    has, floor = has[reached], floor[reached]
    off = np.abs(probe[has, 2] - floor) > max_error
    has, floor = has[off], floor[off]
    # Only where one floor runs from the probe to those corners, reaching them at their height (a
    # box's top under the next step of a stair of boxes runs on under it): a surface across a
    # stair's riser (or any step a polygon spans within a climb) cannot follow it whatever is
    # inserted, and probes there only added triangles (nav_test's 0.8 m steps: 613 triangles to
    # 769, its samples off the floor in bench.surface 27 to 127).
    # The three corners walked at once: a walk's steps are a Python loop, run once for them all.
    corner = around[has].reshape(-1, 3)
    there, joined = floor_under(columns.hf, np.repeat(span[has], 3), corner[:, :2], steps=_JOIN_STEPS)
    joined[joined] = np.abs(there[joined] - corner[joined, 2]) <= max_error
    kept = joined.reshape(-1, 3).all(axis=1)
    return has[kept], floor[kept]
