"""Detour's binary navmesh (.bin): the tile set ('MSET', version 1) RecastDemo saves and
recast-navigation-js's importNavMesh (Babylon.js, three.js), DotRecast and Detour itself load.

Detour is Y-up: Blender's (x, y, z) is written as (x, z, -y). That rotation keeps our winding, which
is Recast's poly mesh winding (counter-clockwise seen from above), so polygons are written as they are.
A level that would overflow a tile's 16-bit indices (or any level, given tile_size) is cut into a grid
of square tiles: polygons crossing a tile border are clipped there, their detail surface with them,
and the clipped edges become portals (DT_EXT_LINK | side) that Detour links across when it loads.
Inside each tile the polygons are also cut along a finer grid (`piece_size`), the two sides of a
cut each other's neighbours, so that Detour's search finds paths near ours.
Off-mesh links are dtOffMeshConnections in the tile of their start, their userId the link's index in
mesh.links, their radius the link's (at least format.MIN_LINK_RADIUS: Detour attaches the ends within
it); Detour attaches an end only in the start's tile or the 8 around it, so a link reaching farther is
refused. A link no agent of the navmesh fits (its radius below the bake radius: our query closes it
to every agent, Detour's rad carries no agent width) is left out, and `export_warnings` says so, as
it says which links' cost factors Detour cannot price (it costs a connection by its area alone).
"""

from __future__ import annotations

import math

import numpy as np

from .. import files
from ..errors import NavMeshError
from ..navmesh import MAX_AREA, NavMesh
from ..params import BakeParams
from ..query.graph import FITS_TOL
from .binary import _pack
from .format import (
    EXT_LINK,
    MAX_TILE_POLYGONS,
    MIN_POLYGON_BITS,
    REFERENCE_BITS,
    SET_MAGIC,
    VERTS_PER_POLYGON,
    WALK_FLAG,
    _bits,
)
from .tiles import _Level, _overflow, _place_links

__all__ = [
    "EXT_LINK",
    "MAX_TILE_POLYGONS",
    "SET_MAGIC",
    "WALK_FLAG",
    "check_options",
    "closed_links",
    "default_piece_size",
    "export_warnings",
    "to_detour_bytes",
    "write_detour",
]

# Tiles are at least this many cells across: smaller ones only multiply the file.
MIN_TILE_CELLS = 4
# Polygons are cut for Detour's A* at this many agent radii, and at least this many cells.
PIECE_RADII = 8.0
PIECE_CELLS = 16.0
# A piece_size cutting the level's extent into more squares than this is refused (a typo such as
# 0.001 m would take hours and give Detour millions of polygons).
MAX_PIECE_SQUARES = 1_000_000
# Tile sizes whose tiles `_Level.most_pieces` counts at more than this share of Detour's polygon
# limit are passed over without cutting (the count leaves out a few pieces, never many).
CROWDED_SLACK = 1.05


def write_detour(mesh: NavMesh, path, tile_size: float | None = None, piece_size: float | None = None) -> None:
    """Write the navmesh as a Detour .bin tile set, all or nothing (see `to_detour_bytes`)."""
    data = to_detour_bytes(mesh, tile_size, piece_size)
    with files.replacing(path) as temp:
        temp.write_bytes(data)


def default_piece_size(mesh: NavMesh) -> float:
    """The pitch polygons are cut at for Detour's A*: PIECE_RADII agent radii, at least PIECE_CELLS
    cells."""
    p = mesh.params
    return max(PIECE_RADII * float(p.agent_radius), PIECE_CELLS * float(p.cell_size))


def to_detour_bytes(mesh: NavMesh, tile_size: float | None = None, piece_size: float | None = None) -> bytes:
    """The navmesh as a Detour tile set. tile_size (meters) cuts it into square tiles of that size;
    without it the level is one tile unless it overflows Detour's per-tile limits, then it is cut
    into the largest tiles that fit.

    piece_size (meters, default `default_piece_size`; 0 keeps polygons whole) also cuts polygons
    along a grid of about that pitch inside each tile (each inner line moved up to tiles.CUT_SHIFT of the
    pitch to keep clear of polygon corners, or left out where it cannot). Detour's findPath costs a
    path by the midpoints of the polygon edges it crosses, so across the few large polygons of our navmesh it can pick a
    corridor whose path is far longer than the shortest (on random 40 m levels up to 2.8 times);
    cut into pieces, its paths stay near ours.

    NavMeshError when the tiles do not fit Detour: too many polygons or vertices for one, or an
    off-mesh link whose end lies beyond the tiles around its start's (the message names it and,
    given tile_size, the tile size that holds every link). Off-mesh links no agent of the navmesh
    fits (`closed_links`) are left out; `export_warnings` names them."""
    _check_mesh(mesh)
    _check_tile_size(mesh.params, tile_size)
    if tile_size is not None:
        tile_size = _positive_meters(tile_size, "tile_size")
    piece = default_piece_size(mesh) if piece_size is None else _positive_meters(piece_size, "piece_size", zero=True)
    level = _Level(mesh)
    if piece and level.grid_size(piece) > MAX_PIECE_SQUARES:
        raise NavMeshError(
            f"piece_size {piece:g} m cuts the level into a grid of {level.grid_size(piece)} squares; "
            f"use at least {level.span / math.sqrt(MAX_PIECE_SQUARES):.3g} m (default: "
            f"{default_piece_size(mesh):.3g} m), or 0 to keep the polygons whole"
        )
    if tile_size is not None:
        grid = level.grid_size(tile_size)
        if _bits(grid) > REFERENCE_BITS - MIN_POLYGON_BITS:
            raise NavMeshError(
                f"tile_size {tile_size:g} m does not fit Detour: a grid of {grid} tiles leaves too few "
                f"bits of its 32-bit polygon references for the polygons (larger tiles need fewer)"
            )
        size = tile_size
        tiles = level.tiles(size, piece)
        problem = _overflow(tiles, level.quant)
        if problem:
            raise NavMeshError(f"tile_size {size:g} m does not fit Detour: {problem}")
    else:
        size = level.span + level.cell
        while True:
            # Halving from one tile: a size whose tiles clearly hold too many polygons is not cut.
            crowded = size >= 8 * level.cell and level.most_pieces(size, piece) > MAX_TILE_POLYGONS * CROWDED_SLACK
            if not crowded:
                tiles = level.tiles(size, piece)
                if not _overflow(tiles, level.quant):
                    break
                if size < MIN_TILE_CELLS * level.cell:
                    raise NavMeshError(
                        f"cannot cut the level into tiles Detour can hold: {_overflow(tiles, level.quant)}"
                    )
            size /= 2
    closed = closed_links(mesh)
    placed = _place_links(tiles, level, size)
    far = [k for k in placed.far if k not in closed]
    if far:
        raise NavMeshError(_far_links(mesh, far, size, tile_size is None, closed))
    return _pack(tiles, level, size, placed, closed)


def closed_links(mesh: NavMesh) -> list[int]:
    """The off-mesh links (indices in mesh.links) no agent of this navmesh fits: their radius is
    below the bake radius, and agents are at least that wide, so our query never takes them. The
    Detour export leaves them out: a dtOffMeshConnection's rad is only how near the floor its ends
    attach, and Detour lets every agent cross it."""
    r0 = float(mesh.params.agent_radius)
    return [k for k, link in enumerate(mesh.links) if r0 > float(link.radius) + FITS_TOL]


# Links named in one export warning; more are counted.
WARNING_NAMES = 5


def export_warnings(mesh: NavMesh) -> list[str]:
    """What a game loading this navmesh's Detour file gets otherwise than our query, though the file
    is written: off-mesh links left out because no agent of the navmesh fits them (`closed_links`),
    and links whose cost factor Detour cannot price (it costs an off-mesh connection as it does a
    polygon, by its area's cost in the dtQueryFilter alone), a warning per area and factor naming
    them and the area cost that keeps their price."""
    closed = closed_links(mesh)
    warnings = []
    if closed:
        radii = sorted({float(mesh.links[k].radius) for k in closed})
        one = len(closed) == 1
        them, them_are = ("it", "it is") if one else ("them", "they are")
        warnings.append(
            f"{_link_names(mesh, closed)} {'is' if one else 'are'} for agents narrower than the bake "
            f"radius {float(mesh.params.agent_radius):g} m (link radius {', '.join(f'{r:g}' for r in radii)} m): no "
            f"agent of this navmesh fits, so our query never takes {them}, and Detour would let every agent cross "
            f"{them} (a connection's rad is only how near the floor its ends attach), so {them_are} left out of the "
            ".bin; for smaller agents bake a navmesh with their radius"
        )
    skip = set(closed)
    costs = dict(mesh.area_costs)
    groups: dict[tuple[int, float], list[int]] = {}
    for k, link in enumerate(mesh.links):
        if k not in skip and float(link.cost) != 1.0:
            groups.setdefault((int(link.area), float(link.cost)), []).append(k)
    floor_areas = set(np.unique(mesh.areas).tolist())
    for (area, factor), ks in sorted(groups.items()):
        area_cost = float(costs.get(area, 1.0))
        one = len(ks) == 1
        # The area is the links' own when no polygon and no link of another factor has it.
        own = area not in floor_areas and all(
            float(link.cost) == factor for k, link in enumerate(mesh.links) if link.area == area and k not in skip
        )
        keep = (
            f"set area {area}'s cost to {area_cost * factor:g}"
            if own
            else f"give {'it an area of its' if one else 'them an area of their'} own and set that area's cost to "
            f"{area_cost * factor:g}"
        )
        warnings.append(
            f"{_link_names(mesh, ks)} {'costs' if one else 'cost'} {factor:g} times {'its' if one else 'their'} "
            f"length, but Detour prices an off-mesh connection by its area's cost alone: in the .bin "
            f"{'it costs' if one else 'they cost'} {area_cost:g} per meter (area {area}'s cost) instead of "
            f"{area_cost * factor:g}; to keep the cost, {keep} in the game's dtQueryFilter (setAreaCost)"
        )
    return warnings


def _link_names(mesh: NavMesh, ks: list[int]) -> str:
    """'off-mesh link 'x'' or 'off-mesh links 'x', 'y' and 3 others' for these links."""
    labels = [_link_label(mesh, k) for k in ks[:WARNING_NAMES]]
    if len(ks) > WARNING_NAMES:
        labels.append(f"{len(ks) - WARNING_NAMES} other{'s' if len(ks) - WARNING_NAMES > 1 else ''}")
    listed = labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"
    return f"off-mesh link{'' if len(ks) == 1 else 's'} {listed}"


def _link_label(mesh: NavMesh, k: int) -> str:
    """A link as messages name it: its name, with its number when another link has that name too,
    or its number when it has none."""
    names = [link.name for link in mesh.links]
    if not names[k]:
        return str(k)
    return f"{names[k]!r} (link {k})" if names.count(names[k]) > 1 else repr(names[k])


def _far_links(mesh: NavMesh, far: list[int], size: float, chosen: bool, closed: list[int]) -> str:
    """Why these off-mesh links (indices in mesh.links) do not fit tiles of `size` (the tile size
    given, or `chosen` by the export to fit Detour's per-tile limits), and what to do (the links
    `closed` are not written)."""
    spans = [float(np.abs(np.subtract(link.end, link.start)[:2]).max()) for link in mesh.links]
    k = max(far, key=lambda i: spans[i])
    label = f"off-mesh link {_link_label(mesh, k)}"
    label += f" spans {spans[k]:.3g} m along x or y and ends more than a tile from its start's tile"
    if len(far) > 1:
        label += f" (as do {len(far) - 1} other link{'s' if len(far) > 2 else ''})"
    rule = "Detour attaches a link's end only in its start's tile or one of the 8 around it"
    if chosen:
        return (
            f"cannot cut the level into tiles Detour can hold: its polygons need tiles of {size:g} m, and "
            f"{label}; {rule}: shorten the link, or put fewer polygons in a tile with a larger piece_size (or 0)"
        )
    longest = max(span for i, span in enumerate(spans) if i not in closed)
    step = 10.0 ** (math.floor(math.log10(longest)) - 2)  # three significant digits, rounded up
    need = math.ceil(longest / step - 1e-9) * step
    return (
        f"tile_size {size:g} m does not fit Detour: {label}; {rule}: use tile_size >= {need:g} m (the longest "
        f"link's span)"
    )


def check_options(params: BakeParams, tile_size: float | None = None, piece_size: float | None = None) -> None:
    """NavMeshError for export options that cannot give a Detour file for a bake with these
    parameters, checked before baking: a tile size that is no size or under MIN_TILE_CELLS cells,
    a piece size that is no size, more vertices per polygon than Detour holds."""
    _check_tile_size(params, tile_size)
    if piece_size is not None:
        _positive_meters(piece_size, "piece_size", zero=True)
    if int(params.max_verts_per_poly) > VERTS_PER_POLYGON:
        raise NavMeshError(
            f"max_verts_per_poly {int(params.max_verts_per_poly)} makes polygons Detour cannot hold (at most "
            f"{VERTS_PER_POLYGON} vertices): bake with max_verts_per_poly <= {VERTS_PER_POLYGON} for a .bin"
        )


def _check_tile_size(params: BakeParams, tile_size: float | None) -> None:
    """NavMeshError for a tile size that is no size or under MIN_TILE_CELLS cells."""
    if tile_size is None:
        return
    meters, smallest = _positive_meters(tile_size, "tile_size"), MIN_TILE_CELLS * float(params.cell_size)
    if meters < smallest:
        raise NavMeshError(
            f"tile_size {meters:g} m is under {MIN_TILE_CELLS} cells ({smallest:g} m at cell_size "
            f"{float(params.cell_size):g}): every polygon is cut at every tile border, so tiles that small "
            f"multiply the file; use at least {smallest:g} m (Recast's tiles are usually 32 to 128 cells)"
        )


def _positive_meters(value, name: str, zero: bool = False) -> float:
    try:
        meters = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        meters = math.nan
    if not (math.isfinite(meters) and (meters > 0 or (zero and meters == 0))):
        kind = "a number of meters >= 0" if zero else "a positive number of meters"
        raise NavMeshError(f"{name} must be {kind}, got {value!r}")
    return meters


def _check_mesh(mesh: NavMesh) -> None:
    if mesh.is_empty:
        reason = f" ({mesh.empty_reason})" if mesh.empty_reason else ""
        raise NavMeshError(f"the navmesh is empty{reason}: there is nothing to export to Detour")
    largest = int(mesh.polygon_sizes.max())
    if largest > VERTS_PER_POLYGON:
        raise NavMeshError(
            f"the navmesh has polygons with {largest} vertices; Detour allows at most "
            f"{VERTS_PER_POLYGON}: re-bake with max_verts_per_poly <= {VERTS_PER_POLYGON}"
        )
    if mesh.areas.min() < 0 or mesh.areas.max() > MAX_AREA:
        raise NavMeshError(
            f"area ids must be 0..{MAX_AREA} for Detour, the navmesh has "
            f"{int(mesh.areas.min())}..{int(mesh.areas.max())}"
        )
