"""Detour's binary navmesh (.bin): the tile set ('MSET', version 1) RecastDemo saves and
recast-navigation-js's importNavMesh (Babylon.js, three.js), DotRecast and Detour itself load.

Detour is Y-up: Blender's (x, y, z) is written as (x, z, -y). That rotation keeps our winding, which
is Recast's poly mesh winding (counter-clockwise seen from above), so polygons are written as they are.
A level that would overflow a tile's 16-bit indices (or any level, given tile_size) is cut into a grid
of square tiles: polygons crossing a tile border are clipped there, their detail surface with them,
and the clipped edges become portals (DT_EXT_LINK | side) that Detour links across when it loads.
"""

from __future__ import annotations

import itertools
import math
import struct

import numpy as np

from . import files
from .errors import NavMeshError
from .geometry import signed_area
from .navmesh import MAX_AREA, NavMesh, to_y_up

# Detour's constants (DetourNavMesh.h, DT_NAVMESH_VERSION 7, 32-bit polygon references).
SET_MAGIC = ord("M") << 24 | ord("S") << 16 | ord("E") << 8 | ord("T")
SET_VERSION = 1
TILE_MAGIC = ord("D") << 24 | ord("N") << 16 | ord("A") << 8 | ord("V")
TILE_VERSION = 7
VERTS_PER_POLYGON = 6
EXT_LINK = 0x8000
WALK_FLAG = 1
# Per tile: vertex indices are 16-bit, and neighbour index + 1 must stay below EXT_LINK.
MAX_TILE_VERTICES = 0xFFFF
MAX_TILE_POLYGONS = EXT_LINK - 1
# Bounding-volume boxes are quantised to 16 bits in cells of 1 / cell_size.
MAX_QUANTISED = 0xFFFF
# Detail indices are bytes: polygon corners plus extra detail vertices, and triangles, per polygon.
MAX_DETAIL_INDEX = 0xFF
# A 32-bit polygon reference holds salt, tile and polygon bits; Detour wants at least 10 salt bits.
REFERENCE_BITS = 22
# A tile grid must leave at least this many reference bits for polygons (tiles of up to 4).
MIN_POLYGON_BITS = 2
# Detour links each portal edge to at most this many polygons across a tile border.
LINKS_PER_PORTAL = 4
# Tile sides (the neighbour tile's direction): +x, +z, -x, -z.
SIDE_X_MAX, SIDE_Z_MAX, SIDE_X_MIN, SIDE_Z_MIN = 0, 2, 4, 6
# Points closer than this (m) are one point; detail edges this close to a polygon edge lie on it.
WELD = 1e-6
ON_EDGE = 1e-4
# Clipped pieces with less area than this (m²) are dropped: a polygon only touching a tile.
MIN_PIECE_AREA = 1e-8
# Detail triangle fragments with less area than this (m²) are slivers of a clip: left out.
MIN_FRAGMENT_AREA = 1e-11

_HEADER = struct.Struct("<15i3f3f3ff")
_SET_HEADER = struct.Struct("<3i3fffii")
_TILE_ENTRY = struct.Struct("<Ii")
_LINK_SIZE = 12
# dtOffMeshConnection: both end points, radius, its polygon, flags, the side its end lies on, user id.
_OFFMESH = struct.Struct("<6ffHBBI")
# dtPolyTypes: an off-mesh connection's polygon (two vertices, its ends).
OFFMESH_POLY_TYPE = 1
# DT_OFFMESH_CON_BIDIR, and the side code of an end inside the link's own tile.
OFFMESH_BOTH_WAYS = 1
OFFMESH_SAME_TILE = 0xFF
_POLY = np.dtype(
    [
        ("first_link", "<u4"),
        ("verts", "<u2", 6),
        ("neis", "<u2", 6),
        ("flags", "<u2"),
        ("vert_count", "u1"),
        ("area_and_type", "u1"),
    ]
)
_POLY_DETAIL = np.dtype(
    [("vert_base", "<u4"), ("tri_base", "<u4"), ("vert_count", "u1"), ("tri_count", "u1"), ("pad", "V2")]
)
_BV_NODE = np.dtype([("bmin", "<u2", 3), ("bmax", "<u2", 3), ("i", "<i4")])


def write_detour(mesh: NavMesh, path, tile_size: float | None = None) -> None:
    """Write the navmesh as a Detour .bin tile set, all or nothing (see `to_detour_bytes`)."""
    data = to_detour_bytes(mesh, tile_size)
    with files.replacing(path) as temp:
        temp.write_bytes(data)


def to_detour_bytes(mesh: NavMesh, tile_size: float | None = None) -> bytes:
    """The navmesh as a Detour tile set. tile_size (meters) cuts it into square tiles of that size;
    without it the level is one tile unless it overflows Detour's per-tile limits, then it is cut
    into the largest tiles that fit."""
    _check_mesh(mesh)
    if tile_size is not None:
        tile_size = _positive_meters(tile_size)
    level = _Level(mesh)
    if tile_size is not None:
        grid = level.grid_size(tile_size)
        if _bits(grid) > REFERENCE_BITS - MIN_POLYGON_BITS:
            raise NavMeshError(
                f"tile_size {tile_size:g} m does not fit Detour: a grid of {grid} tiles leaves too few "
                f"bits of its 32-bit polygon references for the polygons (larger tiles need fewer)"
            )
        tiles = level.tiles(tile_size)
        problem = _overflow(tiles, level.quant)
        if problem:
            raise NavMeshError(f"tile_size {tile_size:g} m does not fit Detour: {problem}")
    else:
        size = level.span + level.cell
        while True:
            tiles = level.tiles(size)
            if not _overflow(tiles, level.quant):
                break
            if size < 4 * level.cell:
                raise NavMeshError(f"cannot cut the level into tiles Detour can hold: {_overflow(tiles, level.quant)}")
            size /= 2
    return _pack(tiles, level, size if tile_size is None else tile_size)


def _positive_meters(value) -> float:
    try:
        meters = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        meters = math.nan
    if not (math.isfinite(meters) and meters > 0):
        raise NavMeshError(f"tile_size must be a positive number of meters, got {value!r}")
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


class _Tile:
    """One tile's polygons before packing: corners (N, 6, 3) in Detour coordinates, corner counts,
    the original polygon of each, per-edge labels (see `_NO_EDGE` and below) and detail triangles as
    coordinates (T, 3, 3) with the piece each belongs to."""

    def __init__(self, tx, ty, box, corners, counts, polygons, labels, tri_coords, tri_piece):
        self.tx, self.ty, self.box = tx, ty, box
        self.corners, self.counts, self.polygons, self.labels = corners, counts, polygons, labels
        self.tri_coords, self.tri_piece = tri_coords, tri_piece
        self.vertices, self.poly_vertices = _weld(corners, counts)
        # Each edge's neighbour in Detour's terms (polygon, portal side or wall), set once every
        # tile is cut (`_link_tiles`).
        self.neis = np.zeros(0, dtype=np.int64)

    @property
    def polygon_count(self) -> int:
        return len(self.counts)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        points = np.concatenate([self.vertices, self.tri_coords.reshape(-1, 3)])
        return points.min(axis=0), points.max(axis=0)


class _Level:
    """The navmesh in Detour coordinates with what cutting it into tiles needs."""

    def __init__(self, mesh: NavMesh):
        self.mesh = mesh
        self.split_ids = itertools.count()
        self.cell = float(mesh.params.cell_size)
        self.quant = 1.0 / self.cell
        self.vertices = to_y_up(mesh.vertices)
        offsets, sizes = mesh.poly_offsets, mesh.polygon_sizes
        self.sizes = sizes
        column = np.arange(len(mesh.poly_vertices)) - np.repeat(offsets[:-1], sizes)
        self.slots = np.full((mesh.polygon_count, VERTS_PER_POLYGON), -1, dtype=np.int64)
        self.slots[mesh.edge_polygon, column] = np.arange(len(mesh.poly_vertices))
        self.corners = np.zeros((mesh.polygon_count, VERTS_PER_POLYGON, 3))
        self.corners[mesh.edge_polygon, column] = self.vertices[mesh.poly_vertices]
        self.reverse_slot = _reverse_slots(mesh)
        self.detail = _detail_triangles(mesh, self.corners, sizes)
        self.vertices[:, 1] = _corner_heights(mesh, self.vertices, self.corners, self.detail)
        self.corners[mesh.edge_polygon, column] = self.vertices[mesh.poly_vertices]
        xz = self.vertices[:, [0, 2]]
        self.origin = self.vertices.min(axis=0)
        self.span = float((xz.max(axis=0) - xz.min(axis=0)).max())
        poly_xz = self.corners[:, :, [0, 2]]
        valid = (np.arange(VERTS_PER_POLYGON) < sizes[:, None])[:, :, None]
        self.poly_lo = np.where(valid, poly_xz, np.inf).min(axis=1)
        self.poly_hi = np.where(valid, poly_xz, -np.inf).max(axis=1)

    def grid_shape(self, size: float) -> np.ndarray:
        """Tiles of `size` meters across x and z that cover the level."""
        return np.maximum(np.ceil((self.poly_hi.max(axis=0) - self.origin[[0, 2]]) / size).astype(np.int64), 1)

    def grid_size(self, size: float) -> int:
        return int(np.prod(self.grid_shape(size)))

    def tiles(self, size: float) -> list[_Tile]:
        """The level cut into square tiles of `size` meters from the origin, empty tiles left out."""
        origin = self.origin[[0, 2]]
        count = self.grid_shape(size)
        first = np.clip(np.floor((self.poly_lo - origin) / size).astype(int), 0, count - 1)
        last = np.clip(np.ceil((self.poly_hi - origin) / size).astype(int) - 1, first, count - 1)
        whole = np.all(first == last, axis=1)
        tile_of = first[:, 1] * count[0] + first[:, 0]
        pieces: dict[int, list] = {}
        for p in np.flatnonzero(~whole):
            for ty in range(first[p, 1], last[p, 1] + 1):
                for tx in range(first[p, 0], last[p, 0] + 1):
                    box = (
                        origin[0] + tx * size,
                        origin[1] + ty * size,
                        origin[0] + (tx + 1) * size,
                        origin[1] + (ty + 1) * size,
                    )
                    cut = self.clipped(p, box)
                    if cut:
                        pieces.setdefault(ty * count[0] + tx, []).extend(cut)
        tiles = []
        tri_owner = self.detail[1]
        for t in sorted(set(tile_of[whole].tolist()) | set(pieces)):
            ty, tx = divmod(t, int(count[0]))
            own = np.flatnonzero(whole & (tile_of == t))
            box = (
                origin[0] + tx * size,
                origin[1] + ty * size,
                origin[0] + (tx + 1) * size,
                origin[1] + (ty + 1) * size,
            )
            corners, counts, polygons = self.corners[own], self.sizes[own], own
            labels = np.where(self.slots[own] >= 0, self.slots[own], _NO_EDGE)
            tri_sel = np.isin(tri_owner, own)
            tri_coords = self.detail[0][tri_sel]
            tri_piece = np.searchsorted(own, tri_owner[tri_sel])
            extra = pieces.get(t, [])
            if extra:
                base = len(own)
                corners = np.concatenate([corners, [c for c, *_ in extra]])
                counts = np.concatenate([counts, [n for _, n, *_ in extra]])
                polygons = np.concatenate([polygons, [p for _, _, p, *_ in extra]])
                labels = np.concatenate([labels, [lab for _, _, _, lab, _ in extra]])
                extra_tris = [(tri, base + k) for k, (*_, tris) in enumerate(extra) for tri in tris]
                tri_coords = np.concatenate([tri_coords, np.array([tri for tri, _ in extra_tris]).reshape(-1, 3, 3)])
                tri_piece = np.concatenate([tri_piece, np.array([k for _, k in extra_tris], dtype=np.int64)])
            labels = _resolve_labels(labels)
            tiles.append(_Tile(tx, ty, box, corners, counts, polygons, labels, tri_coords, tri_piece))
        _link_tiles(tiles, self)
        return tiles

    def clipped(self, p: int, box) -> list:
        """Polygon p cut to the tile box: pieces (corners (6, 3), count, p, labels (6,), detail
        triangles) of at most six corners, their new corners on p's detail surface."""
        n = int(self.sizes[p])
        points = [self.corners[p, k] for k in range(n)]
        labels = [int(self.slots[p, k]) for k in range(n)]
        x0, z0, x1, z1 = box
        for axis, value, keep_below, side in (
            (0, x0, False, SIDE_X_MIN),
            (0, x1, True, SIDE_X_MAX),
            (2, z0, False, SIDE_Z_MIN),
            (2, z1, True, SIDE_Z_MAX),
        ):
            points, labels = _clip_to_plane(points, labels, axis, value, keep_below, _BORDER - side)
            if len(points) < 3:
                return []
        if _area_xz(np.array(points)) < MIN_PIECE_AREA:
            return []
        tris = self.detail[0][self.detail[1] == p]
        clipped = np.array(points)
        clipped[:, 1] = _surface_heights(tris, clipped)
        out = []
        for corners, edge_labels in _split_to_hexagons(clipped, labels, self.split_ids):
            piece_tris = []
            for tri in tris:
                fragment = _clip_convex(tri, corners)
                if len(fragment) >= 3 and _area_xz(fragment) > MIN_FRAGMENT_AREA:
                    piece_tris += [(fragment[0], fragment[k], fragment[k + 1]) for k in range(1, len(fragment) - 1)]
            padded = np.zeros((VERTS_PER_POLYGON, 3))
            padded[: len(corners)] = corners
            padded_labels = np.full(VERTS_PER_POLYGON, _NO_EDGE, dtype=np.int64)
            padded_labels[: len(edge_labels)] = edge_labels
            out.append((padded, len(corners), p, padded_labels, piece_tris))
        return out


# Edge labels while tiles are built: >= 0 an original edge slot, _BORDER - side an edge cut along a
# tile border, _SPLIT - k the diagonal that split clipped piece k in two, _NO_EDGE padding.
_NO_EDGE = -(1 << 40)
_BORDER = -1
_SPLIT = -100
# After resolving: >= 0 a neighbour (index in the tile), _WALL, or _PORTAL - side.
_WALL = -1
_PORTAL = -10


def _reverse_slots(mesh: NavMesh) -> np.ndarray:
    """(E,) the edge slot of the neighbour that runs the other way along each edge (-1 on walls)."""
    count = len(mesh.vertices)
    a, b = mesh.poly_vertices, mesh.edge_next_vertex
    keys = a * count + b
    order = np.argsort(keys)
    wanted = b * count + a
    at = np.clip(np.searchsorted(keys[order], wanted), 0, len(keys) - 1)
    found = (keys[order][at] == wanted) & (mesh.neighbors >= 0)
    return np.where(found, order[at], -1)


def _detail_triangles(mesh: NavMesh, corners: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every detail triangle as Detour coordinates (T, 3, 3) and its polygon; a polygon without detail
    triangles gets a fan over its corners (Detour takes heights from detail triangles only)."""
    coords = to_y_up(mesh.detail_vertices)[mesh.detail_triangles] if len(mesh.detail_triangles) else np.zeros((0, 3, 3))
    owners = mesh.detail_polygons
    bare = np.setdiff1d(np.arange(mesh.polygon_count), owners)
    if len(bare):
        fan_poly = np.repeat(bare, sizes[bare] - 2)
        fan_k = (
            np.arange(len(fan_poly)) - np.repeat(np.cumsum(sizes[bare] - 2) - (sizes[bare] - 2), sizes[bare] - 2) + 1
        )
        fans = np.stack([corners[fan_poly, 0], corners[fan_poly, fan_k], corners[fan_poly, fan_k + 1]], axis=1)
        coords, owners = np.concatenate([coords, fans]), np.concatenate([owners, fan_poly])
    order = np.argsort(owners, kind="stable")
    return coords[order], owners[order]


def _corner_heights(mesh: NavMesh, vertices: np.ndarray, corners: np.ndarray, detail) -> np.ndarray:
    """Each vertex's height on the detail surface (the mean over the polygons around it whose detail
    has a vertex there; its own height where none has). Detour's path corners are polygon vertices,
    so they then lie on our surface even where the detail moved a corner up or down."""
    tri_coords, owner = detail
    points = tri_coords.reshape(-1, 3)
    poly = np.repeat(owner, 3)
    gap = points[:, None, [0, 2]] - corners[poly][:, :, [0, 2]]
    hit = (np.abs(gap).max(axis=2) < WELD) & (np.arange(VERTS_PER_POLYGON) < mesh.polygon_sizes[poly][:, None])
    which, k = np.nonzero(hit)
    vertex = mesh.poly_vertices[mesh.poly_offsets[poly[which]] + k]
    count = np.bincount(vertex, minlength=len(vertices))
    total = np.bincount(vertex, weights=points[which, 1], minlength=len(vertices))
    return np.where(count > 0, total / np.maximum(count, 1), vertices[:, 1])


def _clip_to_plane(points: list, labels: list, axis: int, value: float, keep_below: bool, cut_label: int):
    """Sutherland-Hodgman: the convex polygon's part on one side of the plane coordinate[axis] = value.
    Edge k runs from point k with labels[k]; the new edge along the plane gets cut_label."""

    def inside(q):
        return q[axis] <= value if keep_below else q[axis] >= value

    out_points: list = []
    out_labels: list = []
    n = len(points)
    for k in range(n):
        a, b = points[k], points[(k + 1) % n]
        a_in, b_in = inside(a), inside(b)
        if a_in:
            _append(out_points, out_labels, a, labels[k])
        if a_in != b_in:
            _append(out_points, out_labels, _crossing(a, b, axis, value), cut_label if a_in else labels[k])
    if len(out_points) > 1 and np.linalg.norm(out_points[-1] - out_points[0]) < WELD:
        out_points.pop()
        out_labels.pop()
    return out_points, out_labels


def _append(points: list, labels: list, point, label: int) -> None:
    """Add a corner; one that repeats the previous corner replaces that corner's outgoing edge label."""
    if points and np.linalg.norm(points[-1] - point) < WELD:
        labels[-1] = label
        return
    points.append(np.asarray(point, dtype=np.float64))
    labels.append(label)


def _crossing(a, b, axis: int, value: float) -> np.ndarray:
    """Where segment a-b meets the plane, computed from its ends in a fixed order so the two polygons
    sharing the edge get the same point."""
    if tuple(b) < tuple(a):
        a, b = b, a
    t = (value - a[axis]) / (b[axis] - a[axis])
    point = a + t * (b - a)
    point[axis] = value
    return point


def _split_to_hexagons(points: np.ndarray, labels: list, split_ids) -> list:
    """A convex polygon as convex pieces of at most six corners (split along diagonals; a clip can
    add up to four corners), each with its edge labels; the two sides of a diagonal share a label."""
    if len(points) <= VERTS_PER_POLYGON:
        return [(points, list(labels))]
    k = len(points) // 2
    diagonal = _SPLIT - next(split_ids)
    first = _split_to_hexagons(points[: k + 1], list(labels[:k]) + [diagonal], split_ids)
    second = _split_to_hexagons(np.concatenate([points[k:], points[:1]]), list(labels[k:]) + [diagonal], split_ids)
    return first + second


def _clip_convex(triangle: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """The part of a 3D triangle inside a convex polygon (seen from above), heights on the triangle's plane."""
    points = list(triangle)
    sign = np.sign(_signed_area_xz(polygon))
    n = len(polygon)
    for k in range(n):
        a, b = polygon[k], polygon[(k + 1) % n]
        d = b - a

        def side(q, a=a, d=d):
            return sign * (d[0] * (q[2] - a[2]) - d[2] * (q[0] - a[0]))

        out = []
        for i in range(len(points)):
            p, q = points[i], points[(i + 1) % len(points)]
            sp, sq = side(p), side(q)
            if sp >= 0:
                out.append(p)
            if (sp >= 0) != (sq >= 0):
                out.append(p + (sp / (sp - sq)) * (q - p))
        points = [q for i, q in enumerate(out) if i == 0 or np.linalg.norm(q - out[i - 1]) >= WELD]
        if len(points) > 1 and np.linalg.norm(points[-1] - points[0]) < WELD:
            points.pop()
        if len(points) < 3:
            return np.zeros((0, 3))
    return np.array(points)


def _signed_area_xz(points: np.ndarray) -> float:
    """Signed area seen from above in Detour's Y-up frame (its ground plane is x, z)."""
    return signed_area(points[:, [0, 2]])


def _area_xz(points) -> float:
    return abs(_signed_area_xz(np.asarray(points)))


def _surface_heights(tris: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Heights of a polygon's detail surface (its triangles, (T, 3, 3)) at points seen from above:
    from the triangle each point lies in, or the one it is nearest to inside of."""
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    e1, e2 = b - a, c - a
    det = e1[:, 0] * e2[:, 2] - e1[:, 2] * e2[:, 0]
    det = np.where(np.abs(det) < 1e-15, np.nan, det)
    rel = points[:, None, :] - a[None]
    u = (rel[..., 0] * e2[:, 2] - rel[..., 2] * e2[:, 0]) / det
    v = (e1[:, 0] * rel[..., 2] - e1[:, 2] * rel[..., 0]) / det
    worst = np.nan_to_num(np.minimum(np.minimum(u, v), 1 - u - v), nan=-np.inf)
    best = np.argmax(worst, axis=1)
    rows = np.arange(len(points))
    u, v = u[rows, best], v[rows, best]
    return a[best, 1] + u * e1[best, 1] + v * e2[best, 1]


def _weld(corners: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A tile's vertex table (corners equal to within WELD are one vertex) and each polygon's indices."""
    used = np.arange(VERTS_PER_POLYGON) < counts[:, None]
    keys = np.round(corners[used] / WELD).astype(np.int64)
    unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    indices = np.zeros(corners.shape[:2], dtype=np.int64)
    indices[used] = inverse.reshape(-1)
    return corners[used][first], indices


def _resolve_labels(labels: np.ndarray) -> np.ndarray:
    """Border cuts become portals, split diagonals internal neighbours; original edges stay slots
    (linked by `_link_tiles`, once every tile's pieces are known)."""
    out = labels.copy()
    cut = (labels <= _BORDER) & (labels > _SPLIT)
    out[cut] = _PORTAL - (_BORDER - labels[cut])
    for label in np.unique(labels[(labels <= _SPLIT) & (labels != _NO_EDGE)]):
        (pa, ea), (pb, eb) = np.argwhere(labels == label)
        out[pa, ea], out[pb, eb] = _SPLIT_PARTNER_BASE + pb, _SPLIT_PARTNER_BASE + pa
    return out


# Split diagonals resolved to their partner piece: _SPLIT_PARTNER_BASE + piece, kept apart from slots.
_SPLIT_PARTNER_BASE = 1 << 50


def _link_tiles(tiles: list[_Tile], level: _Level) -> None:
    """Final neighbour per edge: the piece of the other polygon in the same tile along the shared
    edge, a portal when that piece lies in the next tile (the edge is on the border), else a wall."""
    mesh = level.mesh
    for tile in tiles:
        labels = tile.labels
        is_slot = (labels >= 0) & (labels < _SPLIT_PARTNER_BASE)
        owner = {int(labels[i, k]): int(i) for i, k in zip(*np.nonzero(is_slot))}
        neis = np.full(labels.shape, _WALL, dtype=np.int64)
        for i, k in zip(*np.nonzero(labels != _NO_EDGE)):
            label = int(labels[i, k])
            if label >= _SPLIT_PARTNER_BASE:
                neis[i, k] = label - _SPLIT_PARTNER_BASE
            elif label <= _PORTAL:
                neis[i, k] = label
            elif mesh.neighbors[label] >= 0:
                partner = owner.get(int(level.reverse_slot[label]))
                if partner is not None:
                    neis[i, k] = partner
                else:
                    side = _border_side(tile, i, k)
                    if side is not None:
                        neis[i, k] = _PORTAL - side
        tile.neis = neis


def _border_side(tile: _Tile, piece: int, k: int) -> int | None:
    """The tile side an edge lies along (its neighbour is in the next tile), or None."""
    a = tile.corners[piece, k]
    b = tile.corners[piece, (k + 1) % tile.counts[piece]]
    x0, z0 = tile.box[0], tile.box[1]
    x1, z1 = tile.box[2], tile.box[3]
    for axis, value, side in ((0, x1, SIDE_X_MAX), (2, z1, SIDE_Z_MAX), (0, x0, SIDE_X_MIN), (2, z0, SIDE_Z_MIN)):
        if abs(a[axis] - value) < ON_EDGE and abs(b[axis] - value) < ON_EDGE:
            return side
    return None


def _overflow(tiles: list[_Tile], quant: float) -> str:
    """Why these tiles do not fit Detour's limits, or '' when they do."""
    for tile in tiles:
        if len(tile.vertices) > MAX_TILE_VERTICES:
            return f"a tile has {len(tile.vertices)} vertices, Detour's 16-bit indices allow {MAX_TILE_VERTICES}"
        if tile.polygon_count > MAX_TILE_POLYGONS:
            return f"a tile has {tile.polygon_count} polygons, Detour allows {MAX_TILE_POLYGONS}"
        low, high = tile.bounds()
        if np.any(np.ceil((high - low) * quant) > MAX_QUANTISED):
            return f"a tile spans more than {MAX_QUANTISED} cells, the most Detour's bounding-volume tree quantises"
    bits = _bits(len(tiles)) + _bits(max(t.polygon_count for t in tiles))
    if bits > REFERENCE_BITS:
        return (
            f"{len(tiles)} tiles of up to {max(t.polygon_count for t in tiles)} polygons need {bits} bits of "
            f"Detour's 32-bit polygon references, at most {REFERENCE_BITS} are free (larger tiles need fewer)"
        )
    return ""


def _bits(count: int) -> int:
    """Bits Detour gives a count in a polygon reference: log2 of the next power of two."""
    return max(int(count) - 1, 0).bit_length()


def _pack(tiles: list[_Tile], level: _Level, size: float) -> bytes:
    """The MSET file: set header with dtNavMeshParams, then per tile its reference, size and data.
    Each off-mesh link goes to the tile its start lies in."""
    starts = to_y_up(np.array([link.start for link in level.mesh.links]).reshape(-1, 3))
    placed = np.zeros(len(starts), dtype=bool)
    tile_links = []
    for tile in tiles:
        x0, z0, x1, z1 = tile.box
        inside = ~placed & (starts[:, 0] >= x0) & (starts[:, 0] <= x1) & (starts[:, 2] >= z0) & (starts[:, 2] <= z1)
        placed |= inside
        tile_links.append([level.mesh.links[k] for k in np.flatnonzero(inside)])
    max_polygons = max(t.polygon_count + len(links) for t, links in zip(tiles, tile_links))
    tile_bits, poly_bits = _bits(len(tiles)), _bits(max_polygons)
    origin = level.origin
    out = [
        _SET_HEADER.pack(
            SET_MAGIC, SET_VERSION, len(tiles), origin[0], origin[1], origin[2], size, size, len(tiles), max_polygons
        )
    ]
    for index, (tile, links) in enumerate(zip(tiles, tile_links)):
        data = _tile_bytes(tile, level, links)
        # Salt 1 (a fresh navmesh's), tile slot `index`, polygon 0.
        reference = 1 << (tile_bits + poly_bits) | index << poly_bits
        out += [_TILE_ENTRY.pack(reference, len(data)), data]
    return b"".join(out)


def _tile_bytes(tile: _Tile, level: _Level, links: list) -> bytes:
    """One tile's data as dtCreateNavMeshData lays it out: header, vertices, polygons, links (room
    only: Detour builds them on load), detail meshes, detail vertices, detail triangles, BV tree,
    off-mesh connections. `links`: the off-mesh links that start in this tile, each written as a
    two-vertex polygon after the ground polygons and a dtOffMeshConnection."""
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
    link_count = int(used.sum()) + LINKS_PER_PORTAL * int(portal.sum()) + LINKS_PER_PORTAL * len(links)
    details, detail_vertices, detail_tris = _detail_meshes(tile)
    low, high = tile.bounds()
    tree = _bv_tree(tile, low, level.quant)
    ends = to_y_up(np.array([[link.start, link.end] for link in links]).reshape(-1, 3))
    vertices = np.concatenate([tile.vertices, ends])
    connection_polys = np.zeros(len(links), dtype=_POLY)
    connection_polys["verts"][:, :2] = len(tile.vertices) + np.arange(2 * len(links)).reshape(-1, 2)
    connection_polys["flags"] = WALK_FLAG
    connection_polys["vert_count"] = 2
    connection_polys["area_and_type"] = [link.area | OFFMESH_POLY_TYPE << 6 for link in links]
    connections = b"".join(
        _OFFMESH.pack(
            *ends[2 * i],
            *ends[2 * i + 1],
            link.radius,
            count + i,
            OFFMESH_BOTH_WAYS if link.bidirectional else 0,
            _outside_side(ends[2 * i + 1], low, high),
            i,
        )
        for i, link in enumerate(links)
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


def _outside_side(point: np.ndarray, low: np.ndarray, high: np.ndarray) -> int:
    """Which neighbour tile an off-mesh link's end lies toward (Detour's side codes: 0 = +x, then
    counter-clockwise in steps of 45 degrees to 7 = +x -z), OFFMESH_SAME_TILE when inside this one."""
    east, north = point[0] >= high[0], point[2] >= high[2]
    west, south = point[0] < low[0], point[2] < low[2]
    code = {
        (True, False, False, False): 0,
        (True, True, False, False): 1,
        (False, True, False, False): 2,
        (False, True, True, False): 3,
        (False, False, True, False): 4,
        (False, False, True, True): 5,
        (False, False, False, True): 6,
        (True, False, False, True): 7,
    }
    return code.get((bool(east), bool(north), bool(west), bool(south)), OFFMESH_SAME_TILE)


def _detail_meshes(tile: _Tile) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Detour's detail data: per polygon (dtPolyDetail) its extra vertices and triangles; a triangle
    corner is the polygon's corner k (index k) where it is that corner, else an extra vertex
    (index corner count + j). The fourth byte flags triangle edges on the polygon outline."""
    order = np.argsort(tile.tri_piece, kind="stable")
    tris, owner = tile.tri_coords[order], tile.tri_piece[order]
    corners, counts = tile.corners[owner], tile.counts[owner]
    gap = tris[:, :, None, :] - corners[:, None, :, :]
    same = (
        (np.hypot(gap[..., 0], gap[..., 2]) < WELD)
        & (np.abs(gap[..., 1]) < WELD)
        & (np.arange(VERTS_PER_POLYGON) < counts[:, None, None])
    )
    is_corner = same.any(axis=2)
    index = np.argmax(same, axis=2)
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
    encoded[:, 3] = _outline_flags(tris, corners, counts)
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
    length2 = np.maximum((d**2).sum(axis=-1), 1e-30)
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
    cursor = 0

    def build(items: np.ndarray) -> None:
        nonlocal cursor
        here = cursor
        cursor += 1
        lo, hi = q_low[items].min(axis=0), q_high[items].max(axis=0)
        nodes[here]["bmin"], nodes[here]["bmax"] = lo, hi
        if len(items) == 1:
            nodes[here]["i"] = items[0]
            return
        axis = int(np.argmax(hi - lo))
        items = items[np.argsort(q_low[items, axis], kind="stable")]
        build(items[: len(items) // 2])
        build(items[len(items) // 2 :])
        nodes[here]["i"] = -(cursor - here)

    build(np.arange(tile.polygon_count))
    return nodes
