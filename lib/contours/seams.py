"""Wall edges of two regions that leave one point back to back, a crack's width apart, joined into
the regions' shared border once every region's outline is final."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..geometry import cross_vectors
from .rings import _keys

if TYPE_CHECKING:
    from . import RegionOutline


def joined_back_to_back(outlines: list[RegionOutline], reach: float, climb: float) -> list[RegionOutline]:
    """The outlines with each pair of wall edges of two regions that leave a common point P back to
    back (one ring's edge P->A, floor on its left, the other's B->P, floor on its left too) and stay
    within `reach` of each other made their shared border as far as the shorter reaches: the
    shorter's far end is inserted into the longer edge (or replaces its far end, when the two ends
    are within `reach` and that end is free), and both edges up to it become a border.

    Each region pushes its own walls off the agent's band, and two regions whose border ends at P
    can push walls that leave P along nearly the same line by different amounts (fuzz case 972:
    5 mm apart over 13 cm). The floor between them belongs to neither: a crack no path crosses."""
    leaving: dict[tuple, list[tuple[int, int, int]]] = {}
    arriving: dict[tuple, list[tuple[int, int, int]]] = {}
    for o, outline in enumerate(outlines):
        for r, (ring, nb) in enumerate(zip(outline.rings, outline.ring_neighbors)):
            keys = _keys(ring)
            for k in np.flatnonzero(nb < 0).tolist():
                leaving.setdefault(keys[k], []).append((o, r, k))
                arriving.setdefault(keys[(k + 1) % len(ring)], []).append((o, r, k))
    # Per ring: edge k -> (region across it, inserted point, border at its start, moved point).
    edits: dict[tuple[int, int], dict[int, tuple]] = {}
    for key in leaving.keys() & arriving.keys():
        for ox, rx, k in leaving[key]:
            for oy, ry, e in arriving[key]:
                if outlines[ox].region == outlines[oy].region:
                    continue
                if k in edits.get((ox, rx), {}) or e in edits.get((oy, ry), {}):
                    continue
                joint = _joint(outlines, (ox, rx, k), (oy, ry, e), reach, climb)
                if joint is not None:
                    edits.setdefault((ox, rx), {})[k] = (outlines[oy].region, *joint[0])
                    edits.setdefault((oy, ry), {})[e] = (outlines[ox].region, *joint[1])
    if not edits:
        return outlines
    out = list(outlines)
    for o in sorted({o for o, _ in edits}):
        rings, neighbours = list(out[o].rings), list(out[o].ring_neighbors)
        for r in [r for oo, r in edits if oo == o]:
            rings[r], neighbours[r] = _edited_ring(rings[r], neighbours[r], edits[(o, r)])
        out[o] = replace(out[o], rings=rings, ring_neighbors=neighbours)
    return out


def _joint(outlines: list[RegionOutline], x: tuple, y: tuple, reach: float, climb: float):
    """(edit of ring x's edge, edit of ring y's edge), or None when the edges are not back to back
    within reach: x's edge leaves P for A, y's arrives at P from B. An edit is (point inserted or
    None, is the border the part at the edge's start, (index, point) of a point moved or None)."""
    ox, rx, k = x
    oy, ry, e = y
    ring_x, ring_y = outlines[ox].rings[rx], outlines[oy].rings[ry]
    nb_x, nb_y = outlines[ox].ring_neighbors[rx], outlines[oy].ring_neighbors[ry]
    p, a, b = ring_x[k], ring_x[(k + 1) % len(ring_x)], ring_y[e]
    along_a, along_b = a[:2] - p[:2], b[:2] - p[:2]
    length_a, length_b = float(np.hypot(*along_a)), float(np.hypot(*along_b))
    if length_a == 0 or length_b == 0 or np.dot(along_a, along_b) <= 0:
        return None
    x_longer = length_b <= length_a
    # The shorter edge's far end q lies within reach of the longer edge, on its floorless side
    # (right of x's edge, whose floor is on its left; left of y's edge seen from P), and farther
    # along it than reach: two edges that short meet at any angle, and their floor is a corner,
    # not a crack (fuzz case 5860: a border 4 mm long and two slivers).
    near, q, u, length = (a, b, along_a / length_a, length_a) if x_longer else (b, a, along_b / length_b, length_b)
    side, t = float(cross_vectors(u, q[:2] - p[:2])), float(np.dot(u, q[:2] - p[:2]))
    if not (reach < t <= length and 0 < (-side if x_longer else side) < reach):
        return None
    if abs(q[2] - (p[2] + t / length * (near[2] - p[2]))) > climb:
        return None
    # The longer edge's far end moves onto q when they are that close and it is free (a wall on
    # its other side too); else q is inserted into the longer edge.
    if x_longer:
        if np.hypot(*(a[:2] - b[:2])) <= reach and nb_x[(k + 1) % len(nb_x)] < 0:
            return (None, True, ((k + 1) % len(ring_x), b)), (None, False, None)
        return (b, True, None), (None, False, None)
    if np.hypot(*(a[:2] - b[:2])) <= reach and nb_y[(e - 1) % len(nb_y)] < 0:
        return (None, True, None), (None, False, (e, a))
    return (None, True, None), (a, False, None)


def _edited_ring(ring: np.ndarray, nb: np.ndarray, edits: dict[int, tuple]) -> tuple[np.ndarray, np.ndarray]:
    """The ring with each edited edge k made a border with `region` (edits[k] = (region, inserted,
    at_start, moved)): the whole edge, or when a point is inserted into it, the part at its start or
    at its end, the other part left a wall."""
    points, neighbours = list(ring), list(nb)
    for k in sorted(edits, reverse=True):
        region, inserted, at_start, moved = edits[k]
        if moved is not None:
            points[moved[0]] = moved[1]
        if inserted is None:
            neighbours[k] = region
        else:
            points.insert(k + 1, inserted)
            neighbours[k : k + 1] = [region, -1] if at_start else [-1, region]
    return np.array(points), np.array(neighbours, dtype=nb.dtype)
