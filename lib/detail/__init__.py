"""Detail stage: a triangulated surface per polygon that follows the real floor (Recast: rcBuildPolyMeshDetail).

Each polygon starts as a fan over its own vertices. Its edges are sampled first (Recast's
hull tessellation): where the floor along an edge leaves the straight edge by more than
max_height_error, points are added on the edge, the same ones for both polygons that share it, so
neighbouring surfaces meet. Then the heightfield sample (span at a column centre inside the
polygon, on the polygon's own floor) farthest from the surface is inserted until every sample is
within max_height_error or the per-polygon triangle cap is reached. The surface is then measured
between the samples (lib.detail.probes: points along its inner edges and inside its triangles, at
the floor under them) and those found off the floor are inserted the same way. A polygon left
farther than that at the cap is listed as rough, and the pipeline cuts it in two
(lib.polygons.rough).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..heightfield import Heightfield
from ..navmesh import DetailMesh, NavMesh, PolyMesh
from ..params import BakeParams
from ..progress import SILENT, Progress
from .corners import _vertices_on_floor
from .edges import _edge_points
from .fan import _barycentric, _fan, _fan_fits, fan_apexes
from .probes import PROBE_ROUNDS, SampleColumns, off_floor
from .refine import Refinement
from .samples import FloorSamples, column_starts, floor_samples, layer_tolerance, sample_heights

__all__ = ["FloorSamples", "build_detail", "floor_samples", "surface_height"]


def build_detail(
    mesh: PolyMesh,
    hf: Heightfield,
    params: BakeParams,
    span_region: np.ndarray | None = None,
    progress: Progress = SILENT,
    kept: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
    samples: FloorSamples | None = None,
) -> DetailMesh:
    """The polygons' corners moved onto their floor and a surface over each polygon within
    params.max_height_error of the sampled floor.

    kept: surfaces (as DetailMesh.surfaces gives them) to take as they are for these polygons, whose
    corners and neighbours are those they were built for (a rebuild after cutting rough polygons):
    only the other polygons' fans and edges are measured.
    samples: every polygon's floor samples (floor_samples), when the caller already has them.

    span_region: the region of each heightfield span (RegionMap.region). A region holds at most one
    span per column, so a polygon samples exactly its own floor even on steep, rolling ground. Without
    it, the span nearest the polygon's plane is taken, which suits gently sloped floors only.
    """
    if mesh.is_empty:
        return DetailMesh(
            mesh.vertices, np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64)
        )
    layer_tol = layer_tolerance(params)
    if samples is None:
        samples = floor_samples(mesh, hf, params, span_region, progress.span(0.0, 0.2))
    sample_poly = samples.polygon
    vertices = _vertices_on_floor(
        mesh, sample_poly, samples.span, hf, layer_tol, 0.5 * float(params.max_height_error), span_region
    )
    mesh = replace(mesh, vertices=vertices)
    # The surface is measured against the floor at each sample's column centre: the span's own
    # height (as the corners above take it, with its triangle's slope), unless its floor triangle
    # misses the centre and a linked span's holds it (a column along a floor's edge, floor_at).
    # The samples' points are found where they are needed, never all at once (24 bytes a sample;
    # the heights are 8). The polygons whose surfaces are built here: every one but those kept,
    # whose samples are not measured (a rebuild after cutting rough polygons keeps most).
    built = np.ones(mesh.polygon_count, dtype=bool)
    measured = None
    if kept is None:
        heights = sample_heights(hf, samples.span)
    else:  # the samples of the polygons built only (a copy, but of few)
        built[list(kept)] = False
        measured = np.flatnonzero(built[sample_poly])
        heights = np.full(len(sample_poly), np.nan)
        heights[measured] = sample_heights(hf, samples.span[measured])

    def points(rows) -> np.ndarray:
        xyz = samples.points(hf, rows)
        xyz[:, 2] = heights[rows]
        return xyz

    progress.at(0.25)
    cuts = np.searchsorted(sample_poly, np.arange(mesh.polygon_count + 1))
    max_error = float(params.max_height_error)
    apex = fan_apexes(mesh)
    if measured is None:
        fits = _fan_fits(mesh, apex, sample_poly, points, max_error, progress.span(0.25, 0.4))
    else:
        fits = _fan_fits(
            mesh,
            apex,
            sample_poly[measured],
            lambda rows: points(measured[rows]),
            max_error,
            progress.span(0.25, 0.4),
        )
        del measured
    # Found again rather than passed from the sampling: held through it, they raised the 6 x 6
    # level's peak by 54 MB.
    start = column_starts(hf)
    edge_points = _edge_points(mesh, hf, start, layer_tol, span_region, max_error, float(params.agent_max_climb), built)
    del start
    progress.at(0.5)
    offs = mesh.poly_offsets
    surfaces: list[tuple[np.ndarray, np.ndarray]] = []
    rough: set[int] = set()

    def on_edges(p: int) -> list:
        return [edge_points.get(e) for e in range(offs[p], offs[p + 1])]

    def columns(chunk: dict) -> SampleColumns:  # the samples of the chunk's polygons, a run of them
        return SampleColumns(hf, samples, slice(cuts[min(chunk)], cuts[max(chunk) + 1]))

    def refinement(p: int) -> Refinement:
        own = points(slice(cuts[p], cuts[p + 1]))
        return Refinement(mesh.vertices[mesh.polygon(p)], int(apex[p]), own, max_error, on_edges(p))

    # The polygons in turn, a chunk at a time: a chunk's triangulations are kept open until probes
    # between its samples have been measured (they hold the chunk's samples).
    chunk: dict[int, Refinement | None] = {}
    held = 0
    for p in range(mesh.polygon_count):
        progress.at(0.5 + 0.5 * p / mesh.polygon_count)
        poly = mesh.vertices[mesh.polygon(p)]
        if kept is not None and p in kept:
            surfaces.append(kept[p])
            continue
        edges = on_edges(p)
        if fits[p] and not any(pts is not None for pts in edges):
            surfaces.append((poly, np.array(_fan(len(poly), int(apex[p])), dtype=np.int64)))
            chunk[p] = None
        else:
            refined = refinement(p)
            verts, tris, off = refined.result()
            surfaces.append((verts, tris))
            if off:
                rough.add(p)
            chunk[p] = refined
            held += cuts[p + 1] - cuts[p]
        if held >= _PROBED_SAMPLES or p == mesh.polygon_count - 1:
            _probe(chunk, surfaces, rough, columns(chunk), refinement, max_error)
            chunk, held = {}, 0
    if chunk:
        _probe(chunk, surfaces, rough, columns(chunk), refinement, max_error)
    return DetailMesh.from_surfaces(mesh.vertices, surfaces, sorted(rough))


# Samples whose polygons' triangulations are held open at once, waiting for their probes.
_PROBED_SAMPLES = 1 << 18


def _probe(
    chunk: dict,
    surfaces: list[tuple[np.ndarray, np.ndarray]],
    rough: set[int],
    columns: SampleColumns,
    refinement: Callable[[int], Refinement],
    max_error: float,
) -> None:
    """Measures the surfaces of the polygons of `chunk` (polygon -> its open triangulation, None for
    a fan) between their samples (probes.off_floor), and inserts the probes found off the floor
    into their triangulation (a fan's is opened), for up to PROBE_ROUNDS rounds; updates surfaces
    and rough in place. A surface within max_error of every sample (one per column centre) can leave
    the floor between them: a long thin triangle between two rows of samples sagged 2.8 times the
    error under a rolling terrain at cell 0.3 m."""
    measured = sorted(chunk)
    settled: dict[int, set[bytes]] = {}  # the parts of the surfaces measured on the floor (off_floor)
    for _ in range(PROBE_ROUNDS):
        found = off_floor(columns, {p: surfaces[p] for p in measured}, max_error, settled)
        if not found:
            break
        for p, pts in found.items():
            refined = chunk[p]
            if refined is None:
                refined = chunk[p] = refinement(p)
            refined.add(pts)
            verts, tris, off = refined.result()
            surfaces[p] = (verts, tris)
            if off:
                rough.add(p)
            else:
                rough.discard(p)
        # A polygon at its triangle cap takes no more points: once rough it is cut, not measured again.
        measured = sorted(p for p in found if p not in rough or ((open_ := chunk[p]) is not None and open_.budget > 0))


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
