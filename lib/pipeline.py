"""The bake pipeline: triangle soup -> NavMesh, one stage after another (Recast's rcBuild* chain)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import auto_links, clearance, contours, detail, heightfield, polygons, prune, regions
from . import links as offmesh
from .boundary import FloorBoundary
from .navmesh import NavMesh
from .params import BakeParams
from .progress import Progress, ProgressCallback
from .soup import TriangleSoup, downward_floors, prepare_soup

# Rounds of cutting rough polygons in two: each halves them, so 8 take a polygon to a 256th.
ROUGH_ROUNDS = 8


def generate(
    vertices,
    triangles,
    params: BakeParams | None = None,
    walkable=None,
    areas=None,
    progress: ProgressCallback | None = None,
    seeds=None,
    seed_names=None,
    area_costs=None,
    volumes=(),
    links=(),
) -> NavMesh:
    """Bake a navmesh from a world-space triangle soup (Z-up, meters).

    walkable: optional per-triangle bool, False for "obstacle only" (blocks, never walked on).
    areas: optional per-triangle area id (0..63).
    seeds: optional (K, 3) walkable seeds: only the islands they stand on are kept (lib.prune).
    seed_names: optional name per seed, for the error naming a seed on no floor.
    area_costs: optional {area id: travel cost factor}, kept with the navmesh (NavMesh.area_costs).
    volumes: lib.soup.AreaVolume list: closed meshes that mark the floor inside them with an area id
    or remove it (area None); later ones paint over earlier ones.
    links: lib.links.LinkSpec list: off-mesh links placed by hand, their ends snapped onto the
    navmesh (before seeds prune it: an island reached through a link is kept); automatic jump and
    drop links join them when params.jump_max_distance is set (lib.auto_links).
    progress: called as progress(stage, fraction_done) at each stage and, at most every
    lib.progress.REPORT_INTERVAL seconds, within the long ones; it may raise
    lib.errors.BakeCancelled to stop.
    Raises NavMeshError for unusable input; returns an empty NavMesh with `empty_reason` when the
    input is valid but nothing is walkable.
    """
    params = params or BakeParams()
    report = progress or (lambda stage, fraction: None)
    report("input", 0.0)
    soup = prepare_soup(vertices, triangles, walkable, areas)
    if soup.empty_reason:
        return NavMesh.empty(params, soup.empty_reason)
    report("heightfield", 0.05)
    hf = heightfield.build_heightfield(soup, params, Progress(progress, "heightfield", 0.05, 0.35), tuple(volumes))
    if hf.span_count == 0:
        return NavMesh.empty(
            params, "no walkable surface: nothing is flat enough with enough headroom" + _flipped(soup, params)
        )
    report("regions", 0.35)
    region_map = regions.build_regions(hf, params, Progress(progress, "regions", 0.35, 0.5))
    no_area = "no walkable area is left after eroding by the agent radius and dropping small islands"
    if region_map.region_count == 0:
        return NavMesh.empty(params, no_area + _flipped(soup, params))
    report("contours", 0.5)
    region_map, outlines = _outlines(hf, region_map, params, Progress(progress, "contours", 0.5, 0.65))
    if not outlines:
        return NavMesh.empty(params, no_area + _flipped(soup, params))
    report("polygons", 0.65)
    polys = polygons.build_polygons(outlines, params, Progress(progress, "polygons", 0.65, 0.8))
    if polys.is_empty:
        return NavMesh.empty(params, "the walkable outlines were too small to hold a polygon")
    report("detail", 0.8)
    span_region = region_map.region
    del region_map, outlines  # the detail stage reads only each span's region
    hf = hf.floors_only()  # and of the heightfield, the floors only
    surface = detail.build_detail(polys, hf, params, span_region, Progress(progress, "detail", 0.8, 0.9))
    # A polygon too large for its floor's relief to follow within the detail's triangle cap is cut
    # in two, and the surfaces round the cuts built again (lib.polygons.rough): only the halves are
    # sampled again, and only the surfaces round them measured. The floor samples are kept for that
    # only once a cut is made (not through the first build, whose arrays are the stage's largest).
    samples = None
    for _ in range(ROUGH_ROUNDS):
        halved, cut = polygons.split_rough(polys, surface.rough) if len(surface.rough) else (polys, [])
        if not cut:
            break
        touched = set(np.concatenate([polys.polygon(p) for p in cut]).tolist())
        kept = surface.surfaces(
            [p for p in range(polys.polygon_count) if p not in cut and touched.isdisjoint(polys.polygon(p).tolist())]
        )
        if samples is None:
            samples = detail.floor_samples(polys, hf, params, span_region, Progress(progress, "detail", 0.9, 0.9))
        # The first half of a cut polygon keeps its id, the second is added at the end.
        halves = np.union1d(cut, np.arange(polys.polygon_count, halved.polygon_count))
        polys = halved
        samples = samples.replaced(halves, detail.floor_samples(polys, hf, params, span_region, polygons=halves))
        surface = detail.build_detail(
            polys, hf, params, span_region, Progress(progress, "detail", 0.9, 0.9), kept, samples
        )
    del hf, span_region, samples  # the bake's largest values: not held through the stages after
    report("clearance", 0.9)
    on_floor = replace(polys, vertices=surface.corners)
    clear = clearance.compute_clearance(on_floor, Progress(progress, "clearance", 0.9, 1.0))
    mesh = NavMesh.assemble(polys, surface, clear, origin=soup.origin, area_costs=area_costs or ())
    # Off-mesh links and seeds are edits of the assembled navmesh: their ends are located on it.
    jumps = auto_links.jump_links(mesh, soup.vertices[soup.triangles] + soup.origin, params)
    mesh = offmesh.attach_links(mesh, list(links) + jumps)
    if seeds is not None:
        mesh = prune.keep_seeded(mesh, seeds, seed_names)
    report("done", 1.0)
    return mesh


def _outlines(
    hf: heightfield.Heightfield, region_map: regions.RegionMap, params: BakeParams, progress: Progress
) -> tuple[regions.RegionMap, list[contours.RegionOutline]]:
    """The regions' outlines, and the regions they outline. Bridge spans (regions.py) near a ring
    that could not be pushed off the walls are closed, and the floor outlined again without them;
    that outline is kept if fewer rings fail: a passage is given up rather than the outline reaching
    into the agent's band."""
    # One boundary for both outlines: most rings come out the same, and their pushes are not
    # measured again (FloorBoundary.memo).
    boundary = FloorBoundary(hf, params)
    outlines = contours.build_contours(hf, region_map, params, progress.span(0.0, 0.6), boundary)
    closed = regions.bridges_near(hf, region_map, [(o.region, o.unpushed) for o in outlines if o.unpushed])
    if len(closed):
        closed_map = regions.build_regions(hf, params, progress.span(0.6, 0.75), (region_map, closed))
        again = contours.build_contours(hf, closed_map, params, progress.span(0.75, 1.0), boundary)
        if sum(len(o.unpushed) for o in again) < sum(len(o.unpushed) for o in outlines):
            return closed_map, again
    return region_map, outlines


def _flipped(soup: TriangleSoup, params: BakeParams) -> str:
    """For an empty navmesh's reason: the triangles that would be floors but face down (flipped
    normals, which the bake never walks on), with the fix; empty when there are none."""
    down = downward_floors(
        soup.vertices, soup.triangles, soup.walkable, params.agent_max_slope, min_area=params.region_min_area
    )
    if not down.any():
        return ""
    return (
        f"; {int(down.sum())} triangles that would be floors face down (flipped normals): turn them over "
        "(in Blender: Mesh > Normals > Recalculate Outside)"
    )
