"""Contour stage: regions -> simplified outlines with holes (Recast: rcBuildContours)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RegionOutline:
    """One region's outline in the soup's local frame.

    rings[0] is the outer boundary, counter-clockwise seen from +Z; rings[1:] are holes, clockwise.
    Each ring is (n, 3) float64, not closed (the last point does not repeat the first).
    ring_neighbors[k][i] is the region across edge i -> i+1 of ring k, or -1 for a wall/ledge.
    Where two regions meet, both outlines hold bitwise-identical vertices along the shared border,
    in opposite order, so polygons built from them weld without T-junctions.
    """

    region: int
    area: int
    rings: list[np.ndarray]
    ring_neighbors: list[np.ndarray]
