"""Walkable heightfield stage: triangle soup -> compact walkable spans with neighbour links.

(Recast: rcRasterizeTriangles + filters + rcBuildCompactHeightfield.)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .params import BakeParams
from .soup import TriangleSoup

# Neighbour directions, indexed 0..3: (+x, +y, -x, -y).
DIR_DX = np.array([1, 0, -1, 0])
DIR_DY = np.array([0, 1, 0, -1])


@dataclass
class Heightfield:
    """Walkable floor samples, one per (column, floor), in the soup's local frame.

    Column (i, j) covers x in [bmin_x + i*cs, bmin_x + (i+1)*cs), likewise y; its centre is
    at +0.5 cell. Spans are sorted by (j, i, z).
    cell_size: cs. bmin: (2,) float64 xy of cell (0, 0)'s corner. width, height: grid size.
    x, y: (S,) int32 column of each span. z: (S,) float64 floor height at the column centre.
    ceiling: (S,) float64 bottom of the next solid above (inf if none).
    area: (S,) int32 area id. links: (S, 4) int64: index of the connected neighbour span in each
    direction (DIR_DX/DIR_DY), or -1 where the floor ends there (wall, ledge, drop, low ceiling).
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

    @property
    def span_count(self) -> int:
        return len(self.z)

    def centers_xy(self) -> np.ndarray:
        """(S, 2) xy of each span's column centre."""
        return np.stack(
            [self.bmin[0] + (self.x + 0.5) * self.cell_size, self.bmin[1] + (self.y + 0.5) * self.cell_size], axis=1
        )


def build_heightfield(soup: TriangleSoup, params: BakeParams) -> Heightfield:
    """Rasterise the soup and keep the walkable floor spans with their links."""
    raise NotImplementedError  # written by the heightfield work item
