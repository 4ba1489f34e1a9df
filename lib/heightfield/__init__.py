"""Walkable heightfield stage: triangle soup -> compact walkable spans with neighbour links.

(Recast: rcRasterizeTriangles + filters + rcBuildCompactHeightfield.) build_heightfield runs the
stage's steps, one module each: rasterise (triangles to fragments per column), spans (fragments
merged into solid spans, floors inside solids dropped, neighbours linked) and ends (where the floor
really ends on a wall or ledge link, and the boundary segments that follow). field holds the
Heightfield value they build.
"""

from __future__ import annotations

import os

import numpy as np

from ..components import index_dtype
from ..errors import NavMeshError
from ..geometry import HEIGHT_NOISE
from ..params import BakeParams
from ..progress import SILENT, Progress
from ..soup import TriangleSoup, volume_triangles
from .ends import (
    _blocking_tops,
    _floor_end_fractions,
    _floor_mesh,
    _fragments_seen,
    _ledge_segments,
    _link_edges,
    _outer_corners,
    _own_samples,
    _wall_fractions,
    _walls,
    weld,
)
from .field import DIR_DX, DIR_DY, Heightfield, LinkEnds
from .rasterise import _empty, _Grid, _rasterise_conservative, _sample_centres
from .spans import (
    _column_order,
    _floors_off_centre,
    _inside_solids,
    _link_overlaps,
    _link_spans,
    _merge_spans,
    _sample_cracks,
    _under_steep,
)

__all__ = ["DIR_DX", "DIR_DY", "Heightfield", "LinkEnds", "build_heightfield"]


# Memory a bake takes per cell of surface seen from above, and per column of the grid (bytes): about
# twice the peaks measured (100-200 B per cell on the shared levels, their 4 x 4 and 6 x 6 tilings,
# the 150k terrain and a centimetre room; 9-13 B per column of an empty grid), and the share of the
# machine's memory a bake may ask.
BYTES_PER_CELL = 250
BYTES_PER_COLUMN = 16
MEMORY_SHARE = 0.75
# A triangle exactly at agent_max_slope is walkable despite the rounding of its normal's cosine.
_SLOPE_NOISE = 1e-12


def memory_limit() -> tuple[float, str] | None:
    """The bytes a bake may still allocate and what sets that: MEMORY_SHARE of the machine's memory
    (room for the rest of the system), or all of a container's memory limit (cgroup v2 or v1) or of
    what this process's address-space limit (ulimit -v) leaves, the estimate being padded already;
    None where none can be known."""
    limits = []
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        limits.append((MEMORY_SHARE * physical, "a bake may take of this machine's memory"))
    except (AttributeError, ValueError, OSError):
        physical = None
    for name in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(name) as file:
                text = file.read().strip()
        except OSError:
            continue
        # "max", or v1's page-rounded 2^63 for no limit: only a limit below the machine's counts.
        if text.isdigit() and (physical is None or int(text) < physical):
            limits.append((float(text), "of this container's memory limit"))
    try:
        import resource

        cap = resource.getrlimit(resource.RLIMIT_AS)[0]
        if cap != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as file:
                used = int(file.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            limits.append((cap - used, "left under this process's address-space limit (ulimit -v)"))
    except (ImportError, OSError, ValueError, AttributeError):
        pass
    return min(limits) if limits else None


def memory_estimate(area: float, cs: float, width: int, height: int) -> float:
    """Bytes a bake is estimated to take (area: the triangles' area seen from above)."""
    return BYTES_PER_CELL * area / cs**2 + BYTES_PER_COLUMN * float(width) * float(height)


def _check_memory(area: float, cs: float, width: int, height: int, extent) -> None:
    """Refuse, before allocating, a bake whose estimated memory exceeds what `memory_limit` allows
    (area: the triangles' area seen from above; extent: the level's size across, meters)."""
    limit = memory_limit()
    need = memory_estimate(area, cs, width, height)
    if limit is None or need <= limit[0]:
        return
    raise NavMeshError(
        f"baking this level ({extent[0]:.4g} x {extent[1]:.4g} m seen from above) at cell_size {cs:g} m needs "
        f"about {need / 1e9:.3g} GB ({area / cs**2:.3g} cells of surface, a {width} x {height} grid), more than "
        f"the {max(limit[0], 0) / 1e9:.3g} GB {limit[1]}: use a larger cell_size (it is in meters, whatever "
        "units the level was modelled in; an agent preset sets it) or bake a part of the level"
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
    _check_memory(0.5 * float(np.abs(normal[:, 2]).sum()), cs, width, height, extent)
    nz = normal[:, 2] / np.linalg.norm(normal, axis=1)
    cos_slope = np.cos(np.radians(params.agent_max_slope))
    floor_tri = soup.walkable & (nz > 0) & (nz >= cos_slope - _SLOPE_NOISE)

    floor_ids = np.flatnonzero(floor_tri)
    centres = _sample_centres(p[floor_tri], floor_ids, grid)
    # Joined with the others below, once: the fragments are the stage's largest arrays.
    frags = [centres, _sample_cracks(p[floor_tri], floor_ids, grid, centres, params.agent_max_climb)]
    del centres
    progress.at(0.2)
    frags.append(_rasterise_conservative(p[~floor_tri], grid, progress.span(0.2, 0.35)))
    # Column and label ids in int32 while they fit: fragments are the stage's largest arrays.
    col = np.concatenate([f[0] for f in frags]).astype(index_dtype(width * height))
    lo = np.concatenate([f[1] for f in frags])
    hi = np.concatenate([f[2] for f in frags])
    walk = np.concatenate([f[3] for f in frags])
    # Every fragment's label is the soup triangle it came from.
    label = np.concatenate([frags[0][4], frags[1][4], np.flatnonzero(~floor_tri)[frags[2][4]]])
    label = label.astype(index_dtype(len(tris)))
    del frags  # one copy of the fragments at a time
    if not walk.any():
        return _empty(grid)
    # In column order, each array replaced in turn (so only one is ever held twice).
    order = _column_order(col, lo, hi)
    progress.at(0.4)
    col = col[order]
    lo = lo[order]
    hi = hi[order]
    walk = walk[order]
    label = label[order]
    del order

    span_col, span_bottom, span_top, floor_top, ceiling, span_walk, span_tri = _merge_spans(
        col, lo, hi, walk, label, params.agent_max_climb, progress.span(0.4, 0.5)
    )
    del walk
    span_walk, floor_top, span_tri = _floors_off_centre(
        (span_col, span_bottom, span_top, ceiling),
        (span_walk, floor_top, span_tri),
        p[floor_tri],
        floor_ids,
        grid,
        params,
    )
    keep = span_walk & (ceiling - span_top >= params.agent_height - HEIGHT_NOISE)
    progress.at(0.5)
    keep[keep] &= ~_inside_solids(span_col[keep], span_top[keep], p[soup.closed], grid)
    # Welded here, before the floors under steep triangles are dropped: those follow the steep
    # surfaces up (_blocking_tops), and the traces below walk the welded floor.
    points, welded = weld(soup.vertices, tris)
    tops = _blocking_tops(points, welded, floor_tri)
    steep_tops = tuple(top[~floor_tri] for top in tops)
    keep[keep] &= ~_under_steep(span_col[keep], floor_top[keep], p[~floor_tri], steep_tops, grid, params)
    del steep_tops
    shells = [(volume.area, volume_triangles(volume, soup.origin)) for volume in volumes]
    for area, shell in shells:
        if area is None:  # a volume that removes the floor inside it
            keep[keep] &= ~_inside_solids(span_col[keep], floor_top[keep], shell, grid)
    solid = (span_col, span_bottom, span_top)
    # How far each floor's solid rises above it in its column (a riser merged onto a tread): a step
    # the agent can take between two floors (_link_spans). float32: a rise of at most a climb.
    lift = (span_top[keep] - floor_top[keep]).astype(np.float32)
    # The kept floors' arrays one at a time, each dropping its every-span copy (the solid's are held).
    z = floor_top[keep]
    del floor_top, span_walk
    ceiling = ceiling[keep]
    span_tri = span_tri[keep]
    span_col = span_col[keep]
    del keep
    # A fragment that is the one floor of its column's own sample is not held through the linking:
    # _fragments_seen makes it again from the floor (on open ground most fragments are that).
    sampled, alone = _own_samples((col, lo, hi, label), (span_col, z, span_tri))
    rest = np.flatnonzero(~alone)
    del alone
    col = col[rest]
    lo = lo[rest]
    hi = hi[rest]
    label = label[rest]
    del rest
    x = (span_col % width).astype(np.int32)
    y = (span_col // width).astype(np.int32)
    # Solid in each neighbour column within the agent's band, before linking: then the solid spans
    # (every one's, not only the floors') are not held through it.
    walls = _walls(x, y, z, solid, grid, params)
    del solid, span_bottom, span_top
    progress.at(0.6)
    # The slope of the floor triangle each span was sampled from (one facing up: n_z > 0), and the
    # heights that triangle spans: per triangle, with each span's row.
    # Rows of every floor triangle (floor_ids, sorted), not only the spans' own: the detail stage
    # follows the floor from a span's triangle across its neighbours (Heightfield.floor_across).
    floors = floor_ids
    floor_triangle = np.searchsorted(floors, span_tri).astype(index_dtype(len(floors)))
    floor_slope = -normal[floors, :2] / normal[floors, 2:3]
    heights = p[floors, :, 2]
    floor_range = np.column_stack([heights.min(axis=1), heights.max(axis=1)])
    del p, normal, nz, heights  # per soup triangle: as large as a tenth of the spans' arrays
    floor = (floor_triangle, floor_slope, floor_range)
    links, near = _link_spans(span_col, x, y, z, lift, floor, ceiling, grid, params, progress.span(0.6, 0.7))
    del lift
    progress.at(0.7)
    walls &= links < 0  # a wall where the link is missing
    progress.at(0.8)
    floor_mesh = _floor_mesh(points, welded, floor_ids)
    plane = (span_tri, floor_mesh, lambda rows: soup.vertices[tris[floor_ids[rows]]])
    _link_overlaps(links, near, x, y, z, grid, floor, plane, params.agent_max_climb)
    del floor, near, plane
    # Where the floor ends, for the missing links only (LinkEnds), in order of span * 4 + direction.
    key = np.flatnonzero(links.ravel() < 0)
    span, d = key // 4, key % 4
    wall = walls.ravel()[key]
    del walls
    # Of the fragments, only those in the columns the links look into are read again. Ledge links
    # look too: steep triangles that block from the floor up (a rock's foot, round the floor under
    # it that is no floor, _under_steep) lie in a column with nothing in the band above a climb.
    # Each span at a missing link also looks into its own column: the foot of a face leaning away
    # can run through it, in front of the column the face blocks in (a box's side 84 degrees steep).
    own = np.unique(span)
    outer = tuple(np.concatenate(pair) for pair in zip(_outer_corners(links), (own, 0 * own, 0 * own)))
    own_samples = (span_col[sampled], z[sampled], span_tri[sampled])
    wall_frags = _fragments_seen((span, d), outer, x, y, (col, lo, hi, label), own_samples, grid)
    del col, lo, hi, label, sampled, own_samples
    block = np.where(wall, 1.0, 0.5)
    found = np.zeros(len(key), dtype=bool)
    ledge = ~wall
    # The floor's end traced on every missing link's step at once: a ledge link's end, and where a
    # wall link's floor ends short of the wall (below).
    at, ends, traced_edges = _floor_end_fractions(
        (span, d), span_tri, x, y, z, floor_mesh, grid, params.agent_max_climb
    )
    block[ledge], found[ledge] = at[ledge], ends[ledge]
    ledge_edges = _link_edges(traced_edges, ledge)
    progress.at(0.9)
    floors_seen = (floor_tri, tops, floor_triangle, floor_slope)
    blocked, met, blockers = _wall_fractions(
        (span, d), outer, x, y, z, wall_frags, points, welded, grid, params, floors_seen
    )
    block[wall], found[wall] = blocked[wall], met[wall]
    # A ledge whose step meets such a triangle before the floor's traced end ends there.
    steep = ledge & met & (~found | (blocked < block))
    block[steep], found[steep] = blocked[steep], True
    # The floor can end short of the blocking geometry beyond it (a slope's edge a few centimetres
    # before a steep face): there the floor's own edge is where it ends.
    short = wall & ends & (at < block)
    block[short], found[short] = at[short], True
    short_ledges = _link_edges(traced_edges, short)
    del at, ends, traced_edges
    # The floor mesh's corners, heights and neighbours are the heightfield's floor rows (floor_ids).
    _, floor_across, floor_xy, floor_heights, _ = floor_mesh
    floor_across = floor_across.astype(index_dtype(len(floors)))
    del wall_frags, floor_mesh, points, welded
    area = soup.areas[span_tri].astype(np.int32)
    for volume_area, shell in shells:  # later volumes paint over earlier ones
        if volume_area is not None:
            area[_inside_solids(span_col, z, shell, grid)] = volume_area
    hf = Heightfield(cs, bmin, width, height, x, y, z, ceiling, area, links, LinkEnds(key, block, found))
    untraced = ledge & ~found
    hf.boundary = np.concatenate(
        [blockers, ledge_edges, short_ledges, _ledge_segments(hf, span[untraced], d[untraced])]
    )
    hf.floor_triangle, hf.floor_slope, hf.floor_range = floor_triangle, floor_slope, floor_range
    hf.floor_corners, hf.floor_heights = floor_xy, floor_heights
    hf.floor_across = floor_across
    return hf
