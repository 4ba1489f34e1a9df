"""The floor under a point near a span, followed across the floor triangles from the span's own."""

from __future__ import annotations

import numpy as np

from .ends import _leave_triangle
from .field import Heightfield

# Floor triangles a walk may cross before it gives up (the point is then not reached). A detail
# corner looks at most a few cells from a sample; a soup finer than the cells has a few triangles
# per cell.
WALK_STEPS = 64


def floor_under(
    hf: Heightfield, span: np.ndarray, xy: np.ndarray, steps: int = WALK_STEPS
) -> tuple[np.ndarray, np.ndarray]:
    """(z, reached) per span and point xy (K, 2): the height of the floor at the point, found by
    walking from the span's floor triangle in a straight line (seen from above, from the
    triangle's centroid) to the point across floor triangles that share an edge (welded by exact
    position), and taking the plane of the triangle the point lies in. reached is False (z NaN)
    where the line leaves the floor first (a wall's foot, a step's riser, the floor's edge: no
    floor triangle across), where it takes more than `steps` triangles, or where the heightfield
    records no floor triangles.

    The span's triangle's slope carried to the point is the floor there only while the point lies
    in that triangle: on a soup finer than the cells (a terrain of 0.1 m triangles baked at cells
    0.3 m) a corner a cell from the sample lies several triangles away, and the slope carried
    that far, or cut at that triangle's heights, left a corner on a plane tilted 20 degrees 3.6 cm
    off it."""
    z = np.full(len(span), np.nan)
    reached = np.zeros(len(span), dtype=bool)
    corners, heights, across = hf.floor_corners, hf.floor_heights, hf.floor_across
    if hf.floor_triangle is None or corners is None or heights is None or across is None or not len(span):
        return z, reached
    tri = hf.floor_triangle[span].astype(np.int64)
    start = corners[tri].mean(axis=1)
    step = np.asarray(xy, dtype=np.float64) - start
    entry = np.zeros(len(span))
    active = np.arange(len(span))
    for _ in range(steps):
        if not len(active):
            break
        exit_edge, t = _leave_triangle(corners[tri[active]], start[active], step[active], entry[active])
        inside = t >= 1.0
        reached[active[inside]] = True
        beyond = across[tri[active], exit_edge].astype(np.int64)
        go_on = ~inside & (beyond >= 0)
        entry[active[go_on]] = t[go_on]
        tri[active[go_on]] = beyond[go_on]
        active = active[go_on]
    if reached.any():
        row = tri[reached]
        assert hf.floor_slope is not None  # recorded with the corners
        rel = xy[reached] - corners[row, 0]
        z[reached] = heights[row, 0] + (rel * hf.floor_slope[row]).sum(axis=1)
    return z, reached
