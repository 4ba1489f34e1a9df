"""Convex cells of one region by notch portals (NEOGEN-2D, Oliva 2016 Ch. 3).

A notch is a reflex corner of the region. A portal (a cut) from a notch into its area of interest,
the cone where the cut leaves both sides of the corner convex, resolves it. Portals that resolve
two notches at once are laid first, short and fat ones first; every notch left then gets the best
single portal: to a vertex, or through a new Steiner vertex to a wall edge or an earlier portal.
Once no notch is left, every cell the portals enclose is convex. Steiner vertices never go on a
border shared with another region, where the neighbour would see a T-junction.

Cells may exceed the polygon vertex limit and some portals turn out inessential; the polygon stage
splits and merges them (lib.polygons).

The package: graph (the planar graph, casts and visibility), search (scoring and laying portals).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..progress import SILENT, Progress
from .search import PortalSearch


@dataclass
class Cells:
    """The convex cells of one region.

    cells: vertex id lists, counter-clockwise; ids below the caller's point count are its own.
    steiner: (K, 3) new points, numbered from the caller's point count on.
    """

    cells: list[list[int]]
    steiner: np.ndarray


def notch_cells(
    rings: list[list[int]], points, fixed: set[tuple[int, int]], snap: float, progress: Progress = SILENT
) -> Cells | None:
    """Cut a region (outer ring counter-clockwise, holes clockwise, ids into `points`, N (x, y, z)
    rows: an array or a list, only the region's own rows are read) into convex cells; None when the
    outline defeats the construction (the caller falls back).

    fixed: directed ring edges shared with another region (never split).
    snap: a Steiner vertex closer than this to an existing vertex is not made (no tiny edges).
    """
    graph = PortalSearch(points, rings, fixed, snap)
    if graph.broken:
        return None
    graph.lay_two_notch_portals(progress.span(0.0, 0.5))
    if not graph.lay_single_portals(progress.span(0.5, 1.0)):
        return None
    cells = graph.faces()
    if cells is None:
        return None
    steiner = np.array([graph.xyz[v] for v in range(len(points), graph.next_id)], dtype=np.float64).reshape(-1, 3)
    return Cells(cells, steiner)
