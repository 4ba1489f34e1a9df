"""The Heightfield value: walkable floor spans, their links and where the floor ends."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..components import find_sorted

# Neighbour directions, indexed 0..3: (+x, +y, -x, -y).
DIR_DX = np.array([1, 0, -1, 0])
DIR_DY = np.array([0, 1, 0, -1])


@dataclass(frozen=True)
class LinkEnds:
    """Where the floor ends on each missing link (Heightfield.links < 0), listed for those links
    only: a tenth of the links on open ground, where a table over all would be the heightfield's
    largest array.

    key: (M,) int64 span * 4 + direction of every missing link, ascending.
    fraction: (M,) float64 where the floor ends, as a fraction of the centre-to-centre step. For
    drops and ledges, where the floor's triangles end along the step, else 0.5 (the cell edge: the
    true edge lies between the two centre samples). For walls and low ceilings, where the step
    first meets the blocking triangles, else 1.0 (the neighbour's centre: they were rasterised
    conservatively, so they lie somewhere inside the neighbour column), or where the floor's
    triangles end if that comes first.
    found: (M,) bool whether the fraction was found on the step (the floor's end is a line across
    it there) or is only the expected place.
    """

    key: np.ndarray
    fraction: np.ndarray
    found: np.ndarray

    @classmethod
    def from_table(cls, links: np.ndarray, fraction: np.ndarray, found: np.ndarray | None = None) -> LinkEnds:
        """From (S, 4) tables, keeping the missing links' entries; found defaults to fraction < 1."""
        key = np.flatnonzero(links.ravel() < 0)
        kept = fraction.ravel()[key]
        return cls(key, kept, kept < 1.0 if found is None else found.ravel()[key])

    def at(self, span: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fraction, found) of each (span, direction); (0.5, True) where the link exists."""
        at = find_sorted(self.key, np.asarray(span, dtype=np.int64) * 4 + d)
        listed = at >= 0
        return np.where(listed, self.fraction[at], 0.5), np.where(listed, self.found[at], True)


@dataclass
class Heightfield:
    """Walkable floor samples, one per (column, floor), in the soup's local frame.

    Column (i, j) covers x in [bmin_x + i*cs, bmin_x + (i+1)*cs), likewise y; its centre is
    at +0.5 cell. Spans are sorted by (j, i, z).
    cell_size: cs. bmin: (2,) float64 xy of cell (0, 0)'s corner. width, height: grid size.
    x, y: (S,) int32 column of each span. z: (S,) float64 floor height at the column centre.
    ceiling: (S,) float64 bottom of the next solid above (inf if none).
    area: (S,) int32 area id. links: (S, 4) int32 (int64 past 2³¹ spans): index of the connected neighbour span in each
    direction (DIR_DX/DIR_DY), or -1 where the floor ends there (wall, ledge, drop, low ceiling).
    link_ends: LinkEnds or None: where each missing link's floor ends (see link_end). None means
    0.5 of the step everywhere, found.
    boundary: (G, 5) float64 or None: where the floor ends, as top-view segments (x0, y0, x1, y1, z)
    with the floor height z of the span that sees them. At walls, exactly: the outline of the part
    of every triangle that blocks inside the agent's band seen from a missing link's span (in the
    neighbour column, the span's own column or an outer corner's), clipped to the square of that
    column and the eight round it; a steep triangle rising above a climb blocks from the floor's
    plane up (its foot), a floor triangle from a climb up. At ledges, the floor triangles' edges
    where the floor ends, or a cell-wide segment across the step at its link end. None when not recorded
    (hand-built heightfields).
    floor_triangle: (S,) int32 or None: the floor triangle each span was sampled from, as a row of
    floor_slope and floor_range (per triangle, not per span: a triangle holds many spans).
    floor_slope: (F, 2) float64: that triangle's slope (dz/dx, dz/dy); see gradient_at.
    floor_range: (F, 2) float64: its lowest and highest point, which bound the floor carried along
    the slope away from the column centre; see surface_range_at.
    floor_corners: (F, 3, 2) float64: its corners seen from above; see triangle_at.
    The rows are every floor triangle of the soup (walkable, facing up), not only those a span was
    sampled from, so that the floor can be followed from a span's triangle to any point near it:
    floor_heights: (F, 3) float64 the heights of the corners; floor_across: (F, 3) the row of the
    floor triangle across each edge (corner k to k + 1, welded by exact position) or -1. See
    lib.heightfield.walk.floor_under.
    """

    cell_size: float
    bmin: np.ndarray
    width: int
    height: int
    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    ceiling: np.ndarray
    area: np.ndarray
    links: np.ndarray
    link_ends: LinkEnds | None = None
    boundary: np.ndarray | None = None
    floor_triangle: np.ndarray | None = None
    floor_slope: np.ndarray | None = None
    floor_range: np.ndarray | None = None
    floor_corners: np.ndarray | None = None
    floor_heights: np.ndarray | None = None
    floor_across: np.ndarray | None = None

    @property
    def span_count(self) -> int:
        return len(self.z)

    def centers_xy(self, spans: np.ndarray | None = None) -> np.ndarray:
        """(S, 2) xy of each span's column centre, or (K, 2) of the given spans'."""
        x, y = (self.x, self.y) if spans is None else (self.x[spans], self.y[spans])
        return np.stack([self.bmin[0] + (x + 0.5) * self.cell_size, self.bmin[1] + (y + 0.5) * self.cell_size], axis=1)

    def gradient_at(self, span: np.ndarray) -> np.ndarray:
        """(K, 2) the floor's slope (dz/dx, dz/dy) at the spans; zero (flat) when not recorded."""
        if self.floor_triangle is None or self.floor_slope is None:
            return np.zeros((len(span), 2))
        return self.floor_slope[self.floor_triangle[span]]

    def surface_range_at(self, span: np.ndarray) -> np.ndarray | None:
        """(K, 2) the lowest and highest point of the spans' floor triangles; None (unbounded) when
        not recorded."""
        if self.floor_triangle is None or self.floor_range is None:
            return None
        return self.floor_range[self.floor_triangle[span]]

    def triangle_at(self, span: np.ndarray) -> np.ndarray | None:
        """(K, 3, 2) the corners of the spans' floor triangles seen from above; None when not recorded."""
        if self.floor_triangle is None or self.floor_corners is None:
            return None
        return self.floor_corners[self.floor_triangle[span]]

    def floors_only(self) -> Heightfield:
        """This heightfield without the ceilings, area ids and boundary segments, which the region
        and contour stages read and the detail stage does not (it follows the floors: heights,
        links, triangles): a large level's heightfield need not hold them through that stage (a
        quarter of undulating_6x6's). The ceilings and area ids are left empty, so that reading
        them fails, and the boundary not recorded."""
        nothing = np.zeros(0)
        return replace(self, ceiling=nothing, area=nothing.astype(self.area.dtype), boundary=None)

    def link_end(self, span: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fraction, found) of the links (span, d) that are missing: LinkEnds.at, or (0.5, True)
        when not recorded."""
        if self.link_ends is None:
            return np.full(len(span), 0.5), np.ones(len(span), dtype=bool)
        return self.link_ends.at(span, d)
