"""The level in Detour's frame cut into tiles: polygons and their detail clipped at the borders,
vertices welded, the portals across borders labelled for Detour to link, and each off-mesh link
given the tile it is written in and the tile Detour attaches its end in."""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np

from ..components import box_cells, run_positions, twin_edges
from ..geometry import NONZERO_DIVISOR
from ..navmesh import NavMesh, to_y_up
from .clip import (
    _BORDER,
    _NO_EDGE,
    _PORTAL,
    _SPLIT,
    _WALL,
    MIN_PIECE_AREA,
    ON_EDGE,
    WELD,
    _area_xz,
    _split_at_flat_corners,
    _split_to_hexagons,
    _surface_heights,
    clip_to_boxes,
    clip_to_pieces,
    cuts_along_own_edges,
    flat_corners,
    ring_edges,
)
from .format import (
    MAX_QUANTISED,
    MAX_TILE_POLYGONS,
    MAX_TILE_VERTICES,
    MIN_LINK_RADIUS,
    MIN_PORTAL,
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

    def header_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """dtMeshHeader's bmin and bmax: across, the tile's square (Detour's builder writes the box
        the tile was built in, and its bounding-volume tree and queries are quantised from it); up,
        its polygons' and detail surface's heights."""
        low, high = self.bounds()
        x0, z0, x1, z1 = self.box
        return np.array([x0, low[1], z0]), np.array([x1, high[1], z1])


class _Grid(NamedTuple):
    """The lines tiles are cut along: per axis (x, z) their positions (ascending) and which are
    tile borders, the tile each cell between two lines lies in, tiles across x, and per polygon the
    first and last cell (x, z) its box meets."""

    lines: list[np.ndarray]
    border: list[np.ndarray]
    tile_of: list[np.ndarray]
    tiles_across: int
    first: np.ndarray
    last: np.ndarray


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
        # Polygon p's detail triangles are detail[0][detail_start[p]:detail_start[p + 1]].
        self.detail_start = np.searchsorted(self.detail[1], np.arange(mesh.polygon_count + 1))
        self.vertices[:, 1] = _corner_heights(mesh, self.vertices, self.corners, self.detail)
        self.corners[mesh.edge_polygon, column] = self.vertices[mesh.poly_vertices]
        xz = self.vertices[:, [0, 2]]
        self.origin = self.vertices.min(axis=0)
        self.span = float((xz.max(axis=0) - xz.min(axis=0)).max())
        poly_xz = self.corners[:, :, [0, 2]]
        valid = (np.arange(VERTS_PER_POLYGON) < sizes[:, None])[:, :, None]
        self.poly_lo = np.where(valid, poly_xz, np.inf).min(axis=1)
        self.poly_hi = np.where(valid, poly_xz, -np.inf).max(axis=1)
        # Each polygon's flat corners, split at when it is cut into pieces (`_split_at_flat_corners`).
        self.flat_corners = flat_corners(poly_xz, sizes)
        self.flat = self.flat_corners.any(axis=1)
        self.widths = _least_widths(poly_xz, sizes)
        self.grids: dict[tuple[float, float | None], _Grid] = {}

    def grid_shape(self, size: float) -> np.ndarray:
        """Tiles of `size` meters across x and z that cover the level."""
        return np.maximum(np.ceil((self.poly_hi.max(axis=0) - self.origin[[0, 2]]) / size).astype(np.int64), 1)

    def grid_size(self, size: float) -> int:
        return int(np.prod(self.grid_shape(size)))

    def _cells(self, size: float, piece: float | None) -> _Grid:
        """The grid tiles of `size` are cut along (pieces of at most `piece` meters, or whole tiles),
        its inner lines placed clear of the polygons (`_clear_lines`); kept for `most_pieces` and
        `tiles` to share."""
        if (size, piece) not in self.grids:
            self.grids[(size, piece)] = self._grid(size, piece)
        return self.grids[(size, piece)]

    def _grid(self, size: float, piece: float | None) -> _Grid:
        """`_cells`, worked out."""
        per_tile = max(1, math.ceil(size / piece - _PITCH_SLACK)) if piece else 1
        cell = size / per_tile
        origin = self.origin[[0, 2]]
        count = self.grid_shape(size) * per_tile
        lines = [origin[a] + np.arange(count[a] + 1) * cell for a in range(2)]
        border = [np.arange(count[a] + 1) % per_tile == 0 for a in range(2)]
        if per_tile > 1:
            reach, clearance = CUT_SHIFT * cell, MIN_CUT_CELLS * self.cell
            lines[0], border[0] = self._clear_lines(0, lines[0], border[0], lines[1][border[1]], reach, clearance)
            lines[1], border[1] = self._clear_lines(1, lines[1], border[1], lines[0], reach, clearance)
        first = np.column_stack([np.searchsorted(lines[a], self.poly_lo[:, a], "right") - 1 for a in range(2)])
        last = np.column_stack([np.searchsorted(lines[a], self.poly_hi[:, a], "left") - 1 for a in range(2)])
        cells = np.array([len(lines[0]) - 1, len(lines[1]) - 1])
        first = np.clip(first, 0, cells - 1)
        last = np.clip(last, first, cells - 1)
        tile_of = [np.cumsum(border[a][:-1]) - 1 for a in range(2)]
        return _Grid(lines, border, tile_of, int(tile_of[0][-1]) + 1, first, last)

    def _clear_lines(
        self, axis: int, lines: np.ndarray, border: np.ndarray, across: np.ndarray, reach: float, clearance: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The inner cut lines along `axis` (coordinate axis of x, z is constant on each), each moved
        up to `reach` from its place to the nearest spot `_clear_of` the polygons (the lines
        `across` it fixed), or left out where there is none; tile borders stay. (lines, border)."""
        steps = np.arange(1, int(reach / (clearance / 2)) + 1)
        offsets = np.concatenate([[0.0], np.stack([steps, -steps], axis=1).reshape(-1)]) * (clearance / 2)
        keep = np.ones(len(lines), dtype=bool)
        placed = lines.copy()
        for i in np.flatnonzero(~border).tolist():
            near = np.flatnonzero(
                (self.poly_hi[:, axis] > lines[i] - reach - clearance)
                & (self.poly_lo[:, axis] < lines[i] + reach + clearance)
            )
            rings = self.corners[near][:, :, [0, 2]]
            keep[i] = False
            # The nearest places first, a few at a time: most lines are clear at one of the first.
            for lo in range(0, len(offsets), _PLACES_PER_TRY):
                candidates = lines[i] + offsets[lo : lo + _PLACES_PER_TRY]
                clear = _clear_of(rings, self.sizes[near], self.widths[near], axis, candidates, across, clearance)
                if clear.any():
                    placed[i], keep[i] = candidates[np.argmax(clear)], True
                    break
        return placed[keep], border[keep]

    def most_pieces(self, size: float, piece: float | None = None) -> int:
        """About the most polygons a tile of `size` holds once cut (`tiles`), without cutting: a
        polygon within one cell is one piece, one across cells a piece per cell it overlaps by more
        than OVERLAP_DEPTH (separating axes: the cell's and the polygon's edges). Pieces of more than
        six corners, split in two, are not counted; a piece split at its flat corners counts one more
        per two of them (a split may end at a second). Cutting a large level takes seconds, so sizes
        whose tiles would clearly hold too many polygons are passed over on this count."""
        grid = self._cells(size, piece)
        poly, cx, cz = _cell_pairs(np.arange(len(grid.first)), grid.first, grid.last)
        low = np.column_stack([grid.lines[0][cx], grid.lines[1][cz]])
        high = np.column_stack([grid.lines[0][cx + 1], grid.lines[1][cz + 1]])
        box = np.stack(
            [low, np.column_stack([high[:, 0], low[:, 1]]), high, np.column_stack([low[:, 0], high[:, 1]])], axis=1
        )
        ring = self.corners[poly][:, :, [0, 2]]
        used, edge, twice = ring_edges(ring, self.sizes[poly])
        sign = np.sign(twice)
        rel = box[:, None, :, :] - ring[:, :, None, :]  # (pairs, edges, 4 box corners, 2)
        depth = sign[:, None, None] * (edge[:, :, None, 0] * rel[..., 1] - edge[:, :, None, 1] * rel[..., 0])
        reach = OVERLAP_DEPTH * np.hypot(edge[..., 0], edge[..., 1])
        overlaps = np.all((depth.max(axis=2) > reach) | ~used, axis=1)
        overlaps &= np.all(
            np.minimum(self.poly_hi[poly], high) - np.maximum(self.poly_lo[poly], low) > OVERLAP_DEPTH, axis=1
        )
        tile = grid.tile_of[1][cz] * grid.tiles_across + grid.tile_of[0][cx]
        counts = np.bincount(tile[overlaps], minlength=grid.tiles_across * len(grid.tile_of[1]))
        if piece:
            flat_poly, k = np.nonzero(self.flat_corners)
            at = self.corners[flat_poly, k][:, [0, 2]]
            cells = [
                np.clip(np.searchsorted(grid.lines[a], at[:, a], "right") - 1, 0, len(grid.tile_of[a]) - 1)
                for a in range(2)
            ]
            keys, per_piece = np.unique(np.column_stack([flat_poly, *cells]), axis=0, return_counts=True)
            flat_tile = grid.tile_of[1][keys[:, 2]] * grid.tiles_across + grid.tile_of[0][keys[:, 1]]
            counts += np.bincount(flat_tile, weights=(per_piece + 1) // 2, minlength=len(counts)).astype(np.int64)
        return int(counts.max(initial=0))

    def tiles(self, size: float, piece: float | None = None) -> list[_Tile]:
        """The level cut into square tiles of `size` meters from the origin, empty tiles left out.
        piece (meters): each tile's polygons are also cut along a grid of about that pitch (its inner
        lines moved clear of polygon corners, `_clear_lines`), the two sides of a cut inside a tile
        each other's neighbours (see `to_detour_bytes`)."""
        grid = self._cells(size, piece)
        first, last, (xs, zs), (x_border, z_border) = grid.first, grid.last, grid.lines, grid.border
        origin = self.origin[[0, 2]]
        across = len(xs) - 1
        # Cut, pieces are split at flat corners, and so are polygons with flat corners.
        whole = np.all(first == last, axis=1) & ~(self.flat & bool(piece))
        cell_of = first[:, 1] * across + first[:, 0]
        pieces: dict[int, list[tuple]] = {}
        cuts: dict[tuple, int] = {}

        def cut_label(p: int, axis: int, line: int, across: int, on_tile_border: bool, side: int) -> int:
            """A tile border's portal label, or the label both sides of an inner cut share."""
            if on_tile_border:
                return _BORDER - side
            key = (p, axis, line, across)
            if key not in cuts:
                cuts[key] = _SPLIT - next(self.split_ids)
            return cuts[key]

        # Every (polygon, cell) its box meets, polygon by polygon, row by row.
        poly, pair_x, pair_z = _cell_pairs(np.flatnonzero(~whole), first, last)
        boxes = np.column_stack([xs[pair_x], zs[pair_z], xs[pair_x + 1], zs[pair_z + 1]])
        sides = np.array(
            [
                (
                    cut_label(p, 0, x, y, bool(x_border[x]), SIDE_X_MIN),
                    cut_label(p, 0, x + 1, y, bool(x_border[x + 1]), SIDE_X_MAX),
                    cut_label(p, 2, y, x, bool(z_border[y]), SIDE_Z_MIN),
                    cut_label(p, 2, y + 1, x, bool(z_border[y + 1]), SIDE_Z_MAX),
                )
                for p, x, y in zip(poly.tolist(), pair_x.tolist(), pair_z.tolist())
            ],
            dtype=np.int64,
        ).reshape(-1, 4)
        for c, clipped in zip((pair_z * across + pair_x).tolist(), self.clipped(poly, boxes, sides, bool(piece))):
            for one in clipped:
                pieces.setdefault(c, []).append(one)
        cells = [c for c, cuts_here in pieces.items() for _ in cuts_here]
        flat = [cut for cuts_here in pieces.values() for cut in cuts_here]
        detailed: dict[int, list[tuple]] = {}
        for c, cut, tris in zip(cells, flat, self.piece_detail(flat)):
            detailed.setdefault(c, []).append((*cut, tris))
        by_tile: dict[int, list[int]] = {}
        for c in set(cell_of[whole].tolist()) | set(detailed):
            cy, cx = divmod(c, across)
            by_tile.setdefault(int(grid.tile_of[1][cy]) * grid.tiles_across + int(grid.tile_of[0][cx]), []).append(c)
        tiles = []
        tri_owner = self.detail[1]
        for t in sorted(by_tile):
            ty, tx = divmod(t, grid.tiles_across)
            own = np.flatnonzero(whole & np.isin(cell_of, by_tile[t]))
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
            extra = [cut for c in sorted(by_tile[t]) for cut in detailed.get(c, [])]
            if extra:
                base = len(own)
                corners = np.concatenate([corners, [c for c, *_ in extra]])
                counts = np.concatenate([counts, [n for _, n, *_ in extra]])
                polygons = np.concatenate([polygons, [p for _, _, p, *_ in extra]])
                labels = np.concatenate([labels, [lab for _, _, _, lab, _ in extra]])
                tri_coords = np.concatenate([tri_coords, *[tris for *_, tris in extra]])
                sizes = [len(tris) for *_, tris in extra]
                tri_piece = np.concatenate([tri_piece, np.repeat(base + np.arange(len(extra)), sizes)])
            labels = _resolve_labels(labels)
            tiles.append(_Tile(tx, ty, box, corners, counts, polygons, labels, tri_coords, tri_piece))
        _link_tiles(tiles, self)
        return tiles

    def clipped(self, polys: np.ndarray, boxes: np.ndarray, sides: np.ndarray, split_flat: bool) -> list[list[tuple]]:
        """Each polygon polys[k] cut to boxes[k] (x0, z0, x1, z1): its pieces (corners (6, 3), count,
        polygon, labels (6,)) of at most six corners, their corners on its detail surface
        (`piece_detail` gives their detail triangles); sides[k]: the labels of the edges cut along
        the box's x0, x1, z0 and z1 sides, but where a side runs along the polygon's own edge (to
        rounding), which keeps its label (`cuts_along_own_edges`: a wall stays a wall, a shared edge
        finds its neighbour). split_flat: pieces are also split at their flat corners
        (`_split_at_flat_corners`). All at once (`clip_to_boxes`), then the heights of the pieces of
        each polygon together."""
        labels = np.where(self.slots[polys] >= 0, self.slots[polys], _NO_EDGE)
        cut = clip_to_boxes(self.corners[polys], self.sizes[polys], labels, boxes, sides)
        cuts_along_own_edges(self.corners[polys], self.sizes[polys], labels, cut)
        kept = [(k, one) for k, one in enumerate(cut) if one is not None and _area_xz(one[0]) >= MIN_PIECE_AREA]
        flat = _any_flat_corner([corners for _, (corners, _) in kept]) & split_flat
        kept_flat = dict(zip((k for k, _ in kept), flat.tolist()))
        out: list[list[tuple]] = [[] for _ in range(len(polys))]
        for p, same_polygon in itertools.groupby(kept, key=lambda item: int(polys[item[0]])):
            group = list(same_polygon)
            points = np.concatenate([corners for _, (corners, _) in group])
            tris = self.detail[0][self.detail_start[p] : self.detail_start[p + 1]]
            points[:, 1] = _surface_heights(tris, points)
            bounds = np.cumsum([0] + [len(corners) for _, (corners, _) in group]).tolist()
            for (k, (_, edge_labels)), lo, hi in zip(group, bounds[:-1], bounds[1:]):
                parts = (
                    _split_at_flat_corners(points[lo:hi], edge_labels, self.split_ids)
                    if kept_flat[k]
                    else [(points[lo:hi], edge_labels)]
                )
                for corners, piece_labels in (
                    hexagon
                    for part_corners, part_labels in parts
                    for hexagon in _split_to_hexagons(part_corners, part_labels, self.split_ids)
                ):
                    padded = np.zeros((VERTS_PER_POLYGON, 3))
                    padded[: len(corners)] = corners
                    padded_labels = np.full(VERTS_PER_POLYGON, _NO_EDGE, dtype=np.int64)
                    padded_labels[: len(piece_labels)] = piece_labels
                    out[k].append((padded, len(corners), p, padded_labels))
        return out

    def piece_detail(self, pieces: list) -> list[np.ndarray]:
        """Each clipped piece's detail triangles (k, 3, 3): its polygon's triangles wholly inside it
        first, then the parts of those it cuts, each in the polygon's order. Only triangles whose
        boxes meet the piece's (to WELD) are tried; all pieces at once (`clip_to_pieces`)."""
        if not pieces:
            return []
        corners = np.array([c for c, *_ in pieces]).reshape(-1, VERTS_PER_POLYGON, 3)
        counts = np.array([n for _, n, *_ in pieces], dtype=np.int64)
        poly = np.array([p for _, _, p, *_ in pieces], dtype=np.int64)
        used = (np.arange(VERTS_PER_POLYGON) < counts[:, None])[:, :, None]
        xz = corners[:, :, [0, 2]]
        lo = np.where(used, xz, np.inf).min(axis=1) - WELD
        hi = np.where(used, xz, -np.inf).max(axis=1) + WELD
        first, stop = self.detail_start[poly], self.detail_start[poly + 1]
        size = stop - first
        piece = np.repeat(np.arange(len(pieces)), size)
        tri = np.repeat(first, size) + run_positions(size)
        tri_xz = self.detail[0][:, :, [0, 2]]
        near = np.all(tri_xz.max(axis=1)[tri] >= lo[piece], axis=1) & np.all(
            tri_xz.min(axis=1)[tri] <= hi[piece], axis=1
        )
        tri, piece = tri[near], piece[near]
        fan, pair, whole = clip_to_pieces(self.detail[0], corners, counts, (tri, piece))
        order = np.lexsort((pair, ~whole, piece[pair]))
        fan, owner = fan[order], piece[pair[order]]
        cuts = np.searchsorted(owner, np.arange(len(pieces) + 1))
        return [fan[cuts[k] : cuts[k + 1]] for k in range(len(pieces))]


def _clear_of(
    rings: np.ndarray,
    counts: np.ndarray,
    widths: np.ndarray,
    axis: int,
    candidates: np.ndarray,
    across: np.ndarray,
    clearance: float,
) -> np.ndarray:
    """Which candidate places (C,) of a cut line (coordinate `axis` equal to the place, seen from
    above) keep `clearance` from the polygons rings[k][: counts[k]] ((K, 6, 2) x, z): the line
    passes no corner closer (a piece's edge would end that near it), cuts no polygon along a chord
    shorter than half of it (it would cut off a sliver of a sharp corner; but a polygon whose least
    width, widths[k], is under the clearance is as thin wherever it is cut), and meets none of the
    lines `across` (places along the other axis) closer to an edge (a grid corner that near an edge
    leaves a sliver in the cell beyond it; only where that line cuts the polygon, by more than
    ON_EDGE)."""
    other = 1 - axis
    used, edge, _ = ring_edges(rings, counts)
    start = rings[..., axis][None]
    place = candidates[:, None, None]
    blocked = np.any((np.abs(place - start) < clearance) & used, axis=(1, 2))
    run = edge[..., axis][None]
    spans = used & (run != 0)
    t = (place - start) / np.where(spans, run, 1.0)
    meets = spans & (t >= 0) & (t <= 1)
    along = rings[..., other][None] + t * edge[..., other][None]
    chord = np.where(meets, along, -np.inf).max(axis=2) - np.where(meets, along, np.inf).min(axis=2)
    blocked |= np.any(meets.any(axis=2) & (chord < clearance / 2) & (widths >= clearance), axis=1)
    # Each polygon with each line across that cuts it (by more than ON_EDGE).
    low = np.where(used, rings[..., other], np.inf).min(axis=1)
    high = np.where(used, rings[..., other], -np.inf).max(axis=1)
    first = np.searchsorted(across, low + ON_EDGE, "right")
    count = np.maximum(np.searchsorted(across, high - ON_EDGE, "left") - first, 0)
    poly = np.repeat(np.arange(len(counts)), count)
    corner = np.zeros((len(candidates), len(poly), 2))
    corner[..., axis] = candidates[:, None]
    corner[..., other] = across[np.repeat(first, count) + run_positions(count)][None]
    rel = corner[:, :, None, :] - rings[poly][None]  # (C, pairs, 6, 2)
    pair_edge = edge[poly][None]
    share = np.clip((rel * pair_edge).sum(axis=-1) / np.maximum((pair_edge**2).sum(axis=-1), NONZERO_DIVISOR), 0.0, 1.0)
    gap = np.hypot(*(rel - share[..., None] * pair_edge).transpose(3, 0, 1, 2))
    blocked |= np.any((gap < clearance) & used[poly][None], axis=(1, 2))
    return ~blocked


def _any_flat_corner(rings: list[np.ndarray]) -> np.ndarray:
    """Per polygon (corners (n, 3)), whether it has a flat corner (`flat_corners`), all at once."""
    counts = np.array([len(ring) for ring in rings], dtype=np.int64)
    padded = np.zeros((len(rings), int(counts.max(initial=1)), 2))
    padded[np.arange(padded.shape[1]) < counts[:, None]] = np.concatenate([np.zeros((0, 3)), *rings])[:, [0, 2]]
    return flat_corners(padded, counts).any(axis=1)


def _least_widths(rings: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(K,) each convex polygon's least width seen from above (rings[k][: counts[k]], (K, M, 2)):
    the least, over its edges, of its farthest corner from the edge's line."""
    used, edge, _ = ring_edges(rings, counts)
    rel = rings[:, None, :, :] - rings[:, :, None, :]  # (K, edge, corner, 2)
    across = np.abs(edge[:, :, None, 0] * rel[..., 1] - edge[:, :, None, 1] * rel[..., 0])
    farthest = np.where(used[:, None, :], across, 0.0).max(axis=2) / np.maximum(
        np.hypot(edge[..., 0], edge[..., 1]), NONZERO_DIVISOR
    )
    return np.where(used, farthest, np.inf).min(axis=1)


def _cell_pairs(polys: np.ndarray, first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(polygon, cell x, cell z) of every cell in the box of cells first[p]..last[p] of each of
    `polys`, polygon by polygon, row by row."""
    box, x, z = box_cells(first[polys], last[polys])
    return polys[box], x, z


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
        fan_k = run_positions(sizes[bare] - 2) + 1
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
    """Border cuts become portals, split diagonals and inner cuts internal neighbours (a cut whose
    other side was too small to keep is a wall); original edges stay slots (linked by
    `_link_tiles`, once every tile's pieces are known)."""
    out = labels.copy()
    cut = (labels <= _BORDER) & (labels > _SPLIT)
    out[cut] = _PORTAL - (_BORDER - labels[cut])
    piece, edge = np.nonzero((labels <= _SPLIT) & (labels != _NO_EDGE))
    order = np.argsort(labels[piece, edge], kind="stable")
    piece, edge = piece[order], edge[order]
    shared = labels[piece, edge]
    paired = np.zeros(len(shared), dtype=bool)
    paired[:-1] = shared[:-1] == shared[1:]
    first = np.flatnonzero(paired)
    out[piece[first], edge[first]] = _SPLIT_PARTNER_BASE + piece[first + 1]
    out[piece[first + 1], edge[first + 1]] = _SPLIT_PARTNER_BASE + piece[first]
    paired[first + 1] = True
    out[piece[~paired], edge[~paired]] = _NO_EDGE
    return out


# Inner cut lines keep this many cells (at least) from polygon corners and from where polygon edges
# pass grid corners, and cut no chord under half of it (`_clear_of`), so no cut leaves an edge under
# half of it or a piece under a quarter of it across: Detour's raycast, in float32, stopped short on
# the slivers (down to 1e-6 m²) and sub-millimetre edges lines grazing corners left.
MIN_CUT_CELLS = 0.25
# How far (a share of the pitch) an inner cut line may move from its place to keep clear; a line
# with no clear place within it is left out (its two rows of pieces are one).
CUT_SHIFT = 0.4
# Places of a cut line `_clear_lines` tries at once.
_PLACES_PER_TRY = 8
# A polygon overlapping a cell by less than this (m) may leave no piece there (`most_pieces`).
OVERLAP_DEPTH = 1e-3
# A tile holds ceil(size / piece - this) cuts across: a pitch that divides the tile up to rounding
# gives that many.
_PITCH_SLACK = 1e-9
# Split diagonals resolved to their partner piece: _SPLIT_PARTNER_BASE + piece, kept apart from slots.
_SPLIT_PARTNER_BASE = 1 << 50


def _link_tiles(tiles: list[_Tile], level: _Level) -> None:
    """Final neighbour per edge: the piece of the other polygon in the same tile along the shared
    edge (where cuts inside the tile split a shared edge, both polygons' pieces along it end at
    the same cut points: the first piece whose edge has this edge's midpoint, to ON_EDGE), a portal
    when that piece lies in the next tile (the edge is on the border), else a wall. Portals no
    longer than MIN_PORTAL are walls. Every edge of a tile at once."""
    mesh = level.mesh
    for tile in tiles:
        labels = tile.labels
        k = np.arange(labels.shape[1])
        ahead = np.where(k + 1 < tile.counts[:, None], k + 1, 0)
        a = tile.corners
        b = np.take_along_axis(tile.corners, ahead[:, :, None], axis=1)
        middle = 0.5 * (a[..., [0, 2]] + b[..., [0, 2]])
        neis = np.full(labels.shape, _WALL, dtype=np.int64)
        split = labels >= _SPLIT_PARTNER_BASE
        neis[split] = labels[split] - _SPLIT_PARTNER_BASE
        portal = (labels <= _PORTAL) & (labels != _NO_EDGE)
        neis[portal] = labels[portal]
        slot = (labels >= 0) & ~split
        shared = slot & (mesh.neighbors[np.where(slot, labels, 0)] >= 0)
        # Each shared edge against the slot edges of its reverse, in the tile's order.
        own_piece, own_k = np.nonzero(slot)
        by_label = np.argsort(labels[own_piece, own_k], kind="stable")
        sorted_labels = labels[own_piece, own_k][by_label]
        piece, edge = np.nonzero(shared)
        target = level.reverse_slot[labels[piece, edge]]
        lo, hi = np.searchsorted(sorted_labels, target, "left"), np.searchsorted(sorted_labels, target, "right")
        count = hi - lo
        query = np.repeat(np.arange(len(piece)), count)
        cand = by_label[np.repeat(lo, count) + run_positions(count)]
        gap = np.abs(middle[own_piece[cand], own_k[cand]] - middle[piece[query], edge[query]]).max(axis=1)
        hit = np.flatnonzero(gap < ON_EDGE)
        hit = hit[np.concatenate([[True], query[hit][1:] != query[hit][:-1]])] if len(hit) else hit
        neis[piece[query[hit]], edge[query[hit]]] = own_piece[cand[hit]]
        matched = np.zeros(len(piece), dtype=bool)
        matched[query[hit]] = True
        # Unmatched shared edges along a tile side are portals (the first side they lie along).
        x0, z0, x1, z1 = tile.box
        side = np.full(labels.shape, -1, dtype=np.int64)
        for axis, value, name in reversed(
            ((0, x1, SIDE_X_MAX), (2, z1, SIDE_Z_MAX), (0, x0, SIDE_X_MIN), (2, z0, SIDE_Z_MIN))
        ):
            side[(np.abs(a[..., axis] - value) < ON_EDGE) & (np.abs(b[..., axis] - value) < ON_EDGE)] = name
        rest = np.zeros(labels.shape, dtype=bool)
        rest[piece[~matched], edge[~matched]] = True
        border = rest & (side >= 0)
        neis[border] = _PORTAL - side[border]
        neis[(neis <= _PORTAL) & (np.hypot(*(b - a)[..., [0, 2]].transpose(2, 0, 1)) <= MIN_PORTAL)] = _WALL
        tile.neis = neis


def _overflow(tiles: list[_Tile], quant: float) -> str:
    """Why these tiles do not fit Detour's limits, or '' when they do."""
    for tile in tiles:
        if len(tile.vertices) > MAX_TILE_VERTICES:
            return f"a tile has {len(tile.vertices)} vertices, Detour's 16-bit indices allow {MAX_TILE_VERTICES}"
        if tile.polygon_count > MAX_TILE_POLYGONS:
            return f"a tile has {tile.polygon_count} polygons, Detour allows {MAX_TILE_POLYGONS}"
        # queryPolygonsInTile quantises a box up to bmax, plus one, to 16 bits.
        low, high = tile.header_bounds()
        if np.any((high - low) * quant >= MAX_QUANTISED):
            return (
                f"a tile spans {MAX_QUANTISED} cells or more, more than Detour's bounding-volume tree quantises "
                f"(16 bits)"
            )
    bits = _bits(len(tiles)) + _bits(max(t.polygon_count for t in tiles))
    if bits > REFERENCE_BITS:
        return (
            f"{len(tiles)} tiles of up to {max(t.polygon_count for t in tiles)} polygons need {bits} bits of "
            f"Detour's 32-bit polygon references, at most {REFERENCE_BITS} are free (larger tiles need fewer)"
        )
    return ""


# A link's end is on a tile's piece of its polygon when within this (m) of it across: half the
# least radius Detour attaches an end within (MIN_LINK_RADIUS), so float32 rounding keeps it there.
LINK_END_SLACK = MIN_LINK_RADIUS / 2


class _LinkTiles(NamedTuple):
    """Per off-mesh link (mesh.links order) the tile (index in the tile list) its start is written
    in and the tile Detour attaches its end in; `far`: the links whose end lies in no tile next
    to their start's (Detour cannot attach it)."""

    start: np.ndarray
    end: np.ndarray
    far: list[int]


def _place_links(tiles: list[_Tile], level: _Level, size: float) -> _LinkTiles:
    """Where each off-mesh link goes (see `_LinkTiles`). Detour's builder writes a link into the
    tile whose box (its header's bmin and bmax) holds its start, and gives its end the side of that
    box it lies beyond (classifyOffMeshPoint: x or z at or past bmax, or below bmin); on loading it
    attaches the end only in the tile on that side, so the end must lie in the start's tile or one
    of the 8 around it. That rule is followed but for a point on a tile border (to LINK_END_SLACK),
    which goes to a tile holding a piece of its own polygon there (by the rule among such tiles):
    the rule alone gives it to the tile beyond, which has no floor there when a navmesh edge (a
    ledge jumps start from) runs along the border, or only a floor below."""
    links = level.mesh.links
    start = np.zeros(len(links), dtype=np.int64)
    end = np.zeros(len(links), dtype=np.int64)
    far: list[int] = []
    if not links:
        return _LinkTiles(start, end, far)
    at = {(tile.tx, tile.ty): i for i, tile in enumerate(tiles)}
    by_polygon: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # per tile, its pieces in polygon order
    points = to_y_up(np.array([[link.start, link.end] for link in links]).reshape(-1, 3))[:, [0, 2]]
    origin = level.origin[[0, 2]]

    def options(point: np.ndarray, polygon: int) -> list[tuple[int, tuple]]:
        """(tile, preference) of each tile whose box holds the point to LINK_END_SLACK; preference
        (lowest first): off the polygon's pieces there, outside the box by Detour's rule, distance."""
        low = np.floor((point - LINK_END_SLACK - origin) / size).astype(int)
        high = np.floor((point + LINK_END_SLACK - origin) / size).astype(int)
        found = []
        for key in itertools.product(range(low[0], high[0] + 1), range(low[1], high[1] + 1)):
            t = at.get(key)
            if t is None:
                continue
            tile = tiles[t]
            if t not in by_polygon:
                order = np.argsort(tile.polygons)
                by_polygon[t] = order, tile.polygons[order]
            order, sorted_polygons = by_polygon[t]
            first, stop = np.searchsorted(sorted_polygons, [polygon, polygon + 1])
            pieces = order[first:stop]
            gap = _distance_xz(point, tile.corners[pieces], tile.counts[pieces])
            x0, z0, x1, z1 = tile.box
            inside = x0 <= point[0] < x1 and z0 <= point[1] < z1
            found.append((t, (gap > LINK_END_SLACK, not inside, gap)))
        return found

    for k, link in enumerate(links):
        pairs = [
            (tuple(map(sum, zip(a, b))), s, e)
            for (s, a), (e, b) in itertools.product(
                options(points[2 * k], link.start_polygon), options(points[2 * k + 1], link.end_polygon)
            )
            if max(abs(tiles[s].tx - tiles[e].tx), abs(tiles[s].ty - tiles[e].ty)) <= 1
        ]
        if not pairs:
            far.append(k)
            continue
        _, start[k], end[k] = min(pairs)
    return _LinkTiles(start, end, far)


def _distance_xz(point: np.ndarray, corners: np.ndarray, counts: np.ndarray) -> float:
    """How far the point (x, z) lies from the nearest of these convex polygons seen from above (0
    inside one; inf without any)."""
    if not len(counts):
        return math.inf
    ring = corners[:, :, [0, 2]]
    used, edge, twice = ring_edges(ring, counts)
    rel = point - ring
    along = np.clip((rel * edge).sum(axis=-1) / np.maximum((edge**2).sum(axis=-1), NONZERO_DIVISOR), 0.0, 1.0)
    gap = np.where(used, np.hypot(*(rel - along[..., None] * edge).transpose(2, 0, 1)), np.inf).min(axis=1)
    side = np.sign(twice)[:, None] * (edge[..., 0] * rel[..., 1] - edge[..., 1] * rel[..., 0])
    inside = np.all((side >= 0) | ~used, axis=1)
    return float(np.where(inside, 0.0, gap).min())
