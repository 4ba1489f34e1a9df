"""The tile set written out: set header, per tile its header, vertices, polygons, links, detail
meshes and BV tree, as Detour reads them."""

from __future__ import annotations

import numpy as np

from ..components import run_positions
from ..errors import NavMeshError
from ..geometry import NONZERO_DIVISOR
from ..navmesh import to_y_up
from .clip import _PORTAL, ON_EDGE, WELD
from .format import (
    _BV_NODE,
    _HEADER,
    _LINK_SIZE,
    _OFFMESH,
    _POLY,
    _POLY_DETAIL,
    _SET_HEADER,
    _TILE_ENTRY,
    EXT_LINK,
    LINKS_PER_PORTAL,
    MAX_DETAIL_INDEX,
    MAX_QUANTISED,
    MIN_LINK_RADIUS,
    OFFMESH_BOTH_WAYS,
    OFFMESH_POLY_TYPE,
    OFFMESH_SAME_TILE,
    OFFMESH_SIDES,
    SET_MAGIC,
    SET_VERSION,
    TILE_MAGIC,
    TILE_VERSION,
    VERTS_PER_POLYGON,
    WALK_FLAG,
    _bits,
)
from .tiles import _Level, _LinkTiles, _Tile

# Detail triangles matched against their polygon's corners and outline at once (bounds the
# temporaries: a tile can hold hundreds of thousands).
_TRIANGLES_PER_CHUNK = 1 << 13


def _pack(tiles: list[_Tile], level: _Level, size: float, placed: _LinkTiles, left_out: list[int]) -> bytes:
    """The MSET file: set header with dtNavMeshParams, then per tile its reference, size and data.
    Each off-mesh link goes to the tile `placed` gives its start, but those `left_out` (indices in
    mesh.links)."""
    links = level.mesh.links
    written = np.ones(len(links), dtype=bool)
    written[left_out] = False
    own: list[list[int]] = [[] for _ in tiles]
    for k in np.flatnonzero(written).tolist():
        own[int(placed.start[k])].append(k)
    # Ends landing from another tile: Detour links each back to its connection in the landing tile.
    away = written & (placed.end != placed.start)
    landing = np.bincount(placed.end[away], minlength=len(tiles))
    max_polygons = max(t.polygon_count + len(k) for t, k in zip(tiles, own))
    tile_bits, poly_bits = _bits(len(tiles)), _bits(max_polygons)
    origin = level.origin
    out = [
        _SET_HEADER.pack(
            SET_MAGIC, SET_VERSION, len(tiles), origin[0], origin[1], origin[2], size, size, len(tiles), max_polygons
        )
    ]
    for index, (tile, ids) in enumerate(zip(tiles, own)):
        sides = [_side(tile, tiles[placed.end[k]]) for k in ids]
        data = _tile_bytes(tile, level, [(k, links[k], side) for k, side in zip(ids, sides)], int(landing[index]))
        # Salt 1 (a fresh navmesh's), tile slot `index`, polygon 0.
        reference = 1 << (tile_bits + poly_bits) | index << poly_bits
        out += [_TILE_ENTRY.pack(reference, len(data)), data]
    return b"".join(out)


def _tile_bytes(tile: _Tile, level: _Level, links: list[tuple], landing: int) -> bytes:
    """One tile's data as dtCreateNavMeshData lays it out: header, vertices, polygons, links (room
    only: Detour builds them on load), detail meshes, detail vertices, detail triangles, BV tree,
    off-mesh connections. `links`: (index in mesh.links, link, side code of its end) of the
    off-mesh links that start in this tile, each written as a two-vertex polygon after the ground
    polygons and a dtOffMeshConnection whose userId is that index; `landing`: how many links from
    other tiles end here."""
    params = level.mesh.params
    count = tile.polygon_count
    used = np.arange(VERTS_PER_POLYGON) < tile.counts[:, None]
    polys = np.zeros(count, dtype=_POLY)
    polys["verts"] = np.where(used, tile.poly_vertices, 0)
    neis = tile.neis
    portal = used & (neis <= _PORTAL)
    polys["neis"] = np.where(neis >= 0, neis + 1, 0) + np.where(portal, EXT_LINK | (_PORTAL - neis), 0)
    polys["flags"] = WALK_FLAG
    polys["vert_count"] = tile.counts
    polys["area_and_type"] = level.mesh.areas[tile.polygons]
    # Room for Detour's links: one per edge, LINKS_PER_PORTAL per portal, and per off-mesh end two
    # (Detour's builder allows as many: the end's link and its polygon's link back), for both ends
    # of the links starting here and the ends landing here.
    link_count = int(used.sum()) + LINKS_PER_PORTAL * int(portal.sum()) + 2 * (2 * len(links) + landing)
    details, detail_vertices, detail_tris = _detail_meshes(tile)
    low, high = tile.header_bounds()
    tree = _bv_tree(tile, low, level.quant)
    ends = to_y_up(np.array([[link.start, link.end] for _, link, _ in links]).reshape(-1, 3))
    vertices = np.concatenate([tile.vertices, ends])
    connection_polys = np.zeros(len(links), dtype=_POLY)
    connection_polys["verts"][:, :2] = len(tile.vertices) + np.arange(2 * len(links)).reshape(-1, 2)
    connection_polys["flags"] = WALK_FLAG
    connection_polys["vert_count"] = 2
    connection_polys["area_and_type"] = [link.area | OFFMESH_POLY_TYPE << 6 for _, link, _ in links]
    connections = b"".join(
        _OFFMESH.pack(
            *ends[2 * i],
            *ends[2 * i + 1],
            max(float(link.radius), MIN_LINK_RADIUS),
            count + i,
            OFFMESH_BOTH_WAYS if link.bidirectional else 0,
            side,
            k,
        )
        for i, (k, link, side) in enumerate(links)
    )
    header = _HEADER.pack(
        TILE_MAGIC,
        TILE_VERSION,
        tile.tx,
        tile.ty,
        0,
        0,
        count + len(links),
        len(vertices),
        link_count,
        count,
        len(detail_vertices),
        len(detail_tris),
        len(tree),
        len(links),
        count,
        float(params.agent_height),
        float(params.agent_radius),
        float(params.agent_max_climb),
        *low,
        *high,
        level.quant,
    )
    sections = [
        header,
        vertices.astype("<f4").tobytes(),
        polys.tobytes() + connection_polys.tobytes(),
        bytes(_LINK_SIZE * link_count),
        details.tobytes(),
        detail_vertices.astype("<f4").tobytes(),
        detail_tris.tobytes(),
        tree.tobytes(),
        connections,
    ]
    return b"".join(s + bytes(-len(s) % 4) for s in sections)  # dtAlign4 after every section


def _side(tile: _Tile, other: _Tile) -> int:
    """The side code of an off-mesh link's end attached in `other` for a link written in `tile`."""
    return OFFMESH_SIDES.get((other.tx - tile.tx, other.ty - tile.ty), OFFMESH_SAME_TILE)


def _detail_meshes(tile: _Tile) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Detour's detail data: per polygon (dtPolyDetail) its extra vertices and triangles; a triangle
    corner is the polygon's corner k (index k) where it is that corner, else an extra vertex
    (index corner count + j). The fourth byte flags triangle edges on the polygon outline."""
    order = np.argsort(tile.tri_piece, kind="stable")
    tris, owner = tile.tri_coords[order], tile.tri_piece[order]
    corners, counts = tile.corners[owner], tile.counts[owner]
    is_corner, index = np.zeros((len(tris), 3), dtype=bool), np.zeros((len(tris), 3), dtype=np.int64)
    outline = np.zeros(len(tris), dtype=np.uint8)
    # A chunk of triangles at a time: their (corner, polygon corner) tables stay small.
    for lo in range(0, len(tris), _TRIANGLES_PER_CHUNK):
        part = slice(lo, lo + _TRIANGLES_PER_CHUNK)
        gap = tris[part, :, None, :] - corners[part, None, :, :]
        same = (
            (np.hypot(gap[..., 0], gap[..., 2]) < WELD)
            & (np.abs(gap[..., 1]) < WELD)
            & (np.arange(VERTS_PER_POLYGON) < counts[part, None, None])
        )
        is_corner[part] = same.any(axis=2)
        index[part] = np.argmax(same, axis=2)
        outline[part] = _outline_flags(tris[part], corners[part], counts[part])
    extra_keys = np.column_stack(
        [np.repeat(owner, 3)[~is_corner.reshape(-1)], np.round(tris[~is_corner] / WELD).astype(np.int64)]
    )
    unique, first, inverse = np.unique(extra_keys, axis=0, return_index=True, return_inverse=True)
    extra_owner = unique[:, 0]
    piece_first = np.searchsorted(extra_owner, np.arange(tile.polygon_count))
    extra_count = np.bincount(extra_owner, minlength=tile.polygon_count)
    inverse = inverse.reshape(-1)
    index[~is_corner] = tile.counts[extra_owner[inverse]] + inverse - piece_first[extra_owner[inverse]]
    tri_count = np.bincount(owner, minlength=tile.polygon_count)
    too_many = np.flatnonzero((tile.counts + extra_count > MAX_DETAIL_INDEX + 1) | (tri_count > MAX_DETAIL_INDEX))
    if len(too_many):
        p = int(tile.polygons[too_many[0]])
        raise NavMeshError(
            f"polygon {p}'s detail surface has more vertices or triangles than Detour's byte indices "
            f"hold ({MAX_DETAIL_INDEX}); re-bake with a larger max_height_error"
        )
    details = np.zeros(tile.polygon_count, dtype=_POLY_DETAIL)
    details["vert_base"] = piece_first
    details["tri_base"] = np.concatenate([[0], np.cumsum(tri_count)[:-1]])
    details["vert_count"] = extra_count
    details["tri_count"] = tri_count
    encoded = np.zeros((len(tris), 4), dtype=np.uint8)
    encoded[:, :3] = index
    encoded[:, 3] = outline
    extra_points = tris[~is_corner][first]
    return details, extra_points, encoded


def _outline_flags(tris: np.ndarray, corners: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per triangle, bit 2k set when its edge k (corner k to k+1) lies on its polygon's outline
    (Detour's DT_DETAIL_EDGE_BOUNDARY, which closestPointOnPoly needs to find the nearest edge)."""
    a = corners[:, :, [0, 2]]
    b = np.roll(corners, -1, axis=1)[:, :, [0, 2]]
    last = counts - 1
    rows = np.arange(len(corners))
    b[rows, last] = a[rows, 0]
    d = b - a
    length2 = np.maximum((d**2).sum(axis=-1), NONZERO_DIVISOR)
    points = tris[:, :, [0, 2]]
    rel = points[:, :, None, :] - a[:, None, :, :]
    t = np.clip((rel * d[:, None]).sum(axis=-1) / length2[:, None], 0.0, 1.0)
    dist = np.linalg.norm(rel - t[..., None] * d[:, None], axis=-1)
    on = (dist < ON_EDGE) & (np.arange(VERTS_PER_POLYGON) < counts[:, None, None])
    flags = np.zeros(len(tris), dtype=np.uint8)
    for k in range(3):
        flags |= np.any(on[:, k] & on[:, (k + 1) % 3], axis=1).astype(np.uint8) << (2 * k)
    return flags


def _bv_tree(tile: _Tile, low: np.ndarray, quant: float) -> np.ndarray:
    """Detour's bounding-volume tree over the tile's polygons (with their detail surface), boxes in
    cells of 1 / quant from the tile's low corner; nodes in depth-first order, a leaf's i its polygon,
    an inner node's i minus the size of its subtree (where the search skips to)."""
    used = np.arange(VERTS_PER_POLYGON) < tile.counts[:, None]
    points = tile.corners
    box_low = np.where(used[..., None], points, np.inf).min(axis=1)
    box_high = np.where(used[..., None], points, -np.inf).max(axis=1)
    np.minimum.at(box_low, tile.tri_piece, tile.tri_coords.min(axis=1))
    np.maximum.at(box_high, tile.tri_piece, tile.tri_coords.max(axis=1))
    q_low = np.clip(np.floor((box_low - low) * quant), 0, MAX_QUANTISED).astype(np.int64)
    q_high = np.clip(np.ceil((box_high - low) * quant), 0, MAX_QUANTISED).astype(np.int64)
    nodes = np.zeros(2 * tile.polygon_count - 1, dtype=_BV_NODE)
    # The tree a level at a time: `items` holds the polygons in the order the splits leave them,
    # each node a run of it (first, size) at its depth-first place `at`; a run of n items is a
    # subtree of 2n - 1 nodes, its left child next to it and its right child 2 * left size after.
    items = np.arange(tile.polygon_count)
    first, size, at = np.zeros(1, dtype=np.int64), np.array([tile.polygon_count]), np.zeros(1, dtype=np.int64)
    while len(first):
        starts = np.cumsum(size) - size
        rows = np.repeat(first, size) + run_positions(size)
        lo = np.minimum.reduceat(q_low[items[rows]], starts)
        hi = np.maximum.reduceat(q_high[items[rows]], starts)
        nodes["bmin"][at], nodes["bmax"][at] = lo, hi
        leaf = size == 1
        nodes["i"][at[leaf]] = items[first[leaf]]
        nodes["i"][at[~leaf]] = -(2 * size[~leaf] - 1)
        # Each inner run sorted by its polygons' low corner along its box's longest axis (the
        # first of equals), ties kept in the order the run had, then cut in half.
        inner = np.repeat(~leaf, size)
        run, rows = np.repeat(np.arange(len(first)), size)[inner], rows[inner]
        axis = np.argmax(hi - lo, axis=1)
        order = np.lexsort((q_low[items[rows], axis[run]], run))
        items[rows] = items[rows[order]]
        first, size, at = first[~leaf], size[~leaf], at[~leaf]
        half = size // 2
        first, size, at = (
            np.concatenate([first, first + half]),
            np.concatenate([half, size - half]),
            np.concatenate([at + 1, at + 2 * half]),
        )
    return nodes
