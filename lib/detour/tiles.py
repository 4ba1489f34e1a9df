"""The level in Detour's frame cut into tiles: polygons and their detail clipped at the borders,
vertices welded, and the portals across borders labelled for Detour to link."""

from __future__ import annotations

import itertools

import numpy as np

from ..components import twin_edges
from ..navmesh import NavMesh, to_y_up
from .clip import (
    _BORDER,
    _NO_EDGE,
    _PORTAL,
    _SPLIT,
    _WALL,
    MIN_FRAGMENT_AREA,
    MIN_PIECE_AREA,
    ON_EDGE,
    WELD,
    _area_xz,
    _clip_convex,
    _clip_to_plane,
    _split_to_hexagons,
    _surface_heights,
)
from .format import (
    MAX_QUANTISED,
    MAX_TILE_POLYGONS,
    MAX_TILE_VERTICES,
    REFERENCE_BITS,
    SIDE_X_MAX,
    SIDE_X_MIN,
    SIDE_Z_MAX,
    SIDE_Z_MIN,
    VERTS_PER_POLYGON,
    _bits,
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


def _reverse_slots(mesh: NavMesh) -> np.ndarray:
    """(E,) the edge slot of the neighbour that runs the other way along each edge (-1 on walls)."""
    return np.where(mesh.neighbors >= 0, twin_edges(mesh.poly_vertices, mesh.edge_next_vertex), -1)


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
