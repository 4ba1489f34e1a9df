"""Slits zipped shut: where two wall edges of a region's outline leave a corner back to back,
closer than a crack's width, the corner goes and the shorter edge's far end moves onto the longer
edge, wherever the edge that moves stays out of the agent's band.

Each wall edge is pushed off the walls on its own, so where the floor bends round the end of a
wall (fuzz case 58822: the floor beside a ramp's foot, both eroded round the end of the ramp's
side), two edges of one ring can run into a corner and back out of it 8 mm apart over 20 cm. The
floor between them is floor no polygon holds: a crack no path crosses. The polygon stage drops
such corners only where the floor gained is far thinner (it does not know where the band is).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..boundary import FloorBoundary
from ..geometry import cross_vectors, in_triangle, ring_next, segments_meet_matrix
from .rings import _keys
from .trace import OFF_WALL

if TYPE_CHECKING:
    from . import RegionOutline


def closed_slits(
    outlines: list[RegionOutline], boundary: FloorBoundary, reach: float, width: float, max_edge_len: float
) -> list[RegionOutline]:
    """The outlines with every slit zipped shut: at a corner between two wall edges that leave it
    the same way (an acute reflex corner), the shorter's far end within `width` of the longer's
    line, the corner goes and that far end moves onto the longer edge, at its foot there. Only
    where the edge that moves keeps `reach` off the floor's boundary (and OFF_WALL cells, as traced
    points do), is no longer than max_edge_len (0: no limit) and meets no other edge of the region,
    the floor changed holds no other point of the region, no other ring passes through the points
    removed and moved, and the edge that moves is a wall."""
    held = Counter(key for outline in outlines for ring in outline.rings for key in _keys(ring))
    clear = max(reach, OFF_WALL * boundary.cs)
    out = []
    for outline in outlines:
        rings, neighbours = list(outline.rings), list(outline.ring_neighbors)
        for k in range(len(rings)):
            refused: set[bytes] = set()
            while (tip := _slit_tip(rings[k], neighbours[k], held, refused, width)) is not None:
                zipped = _zipped(k, rings, neighbours[k], held, tip, boundary, clear, max_edge_len)
                if zipped is None:
                    refused.add(rings[k][tip].tobytes())
                    continue
                # The three edges at the corner and the far end, all walls, become two.
                rings[k], neighbours[k] = zipped, np.delete(neighbours[k], tip)
        edited = any(len(a) != len(b) for a, b in zip(rings, outline.rings))
        out.append(replace(outline, rings=rings, ring_neighbors=neighbours) if edited else outline)
    return out


def _slit_tip(ring: np.ndarray, nb: np.ndarray, held: Counter, refused: set, width: float) -> int | None:
    """The ring's thinnest slit tip (see closed_slits) not refused yet, or None."""
    if len(ring) <= 3:
        return None
    xy = ring[:, :2]
    back, ahead = np.roll(xy, 1, axis=0) - xy, ring_next(xy) - xy
    longer = np.maximum(np.hypot(*back.T), np.hypot(*ahead.T))
    # Turning right (a reflex corner of the floor, on the left) by more than a right angle.
    reflex = (cross_vectors(back, ahead) > 0) & (np.einsum("ij,ij->i", back, ahead) > 0)
    gap = np.abs(cross_vectors(back, ahead)) / np.where(longer > 0, longer, 1.0)
    walls = (nb < 0) & (np.roll(nb, 1) < 0)
    keys = _keys(ring)
    tips = np.flatnonzero(reflex & walls & (gap < width))
    tips = tips[np.argsort(gap[tips], kind="stable")].tolist()
    return next((t for t in tips if held[keys[t]] == 1 and ring[t].tobytes() not in refused), None)


def _zipped(
    k: int,
    rings: list[np.ndarray],
    nb: np.ndarray,
    held: Counter,
    tip: int,
    boundary: FloorBoundary,
    clear: float,
    max_edge_len: float,
) -> np.ndarray | None:
    """Ring k with the slit at `tip` zipped shut (see closed_slits), or None where it may not be."""
    ring = rings[k]
    n = len(ring)
    v = ring[tip]
    ahead = float(np.hypot(*(ring[(tip + 1) % n, :2] - v[:2]))) <= float(np.hypot(*(ring[tip - 1, :2] - v[:2])))
    # s: the shorter edge's far end; l: the longer's; c: s's other neighbour.
    s_at, l_at, c_at = ((tip + 1) % n, tip - 1, (tip + 2) % n) if ahead else (tip - 1, (tip + 1) % n, tip - 2)
    s, far, c = ring[s_at], ring[l_at], ring[c_at]
    if held[_keys(s[None])[0]] != 1 or nb[(tip + 1) % n if ahead else tip - 2] >= 0:
        return None
    along = far - v
    t = float(np.dot(s[:2] - v[:2], along[:2]) / np.dot(along[:2], along[:2]))
    foot = v + t * along
    if 0 < max_edge_len < float(np.hypot(*(c[:2] - foot[:2]))):
        return None
    # Every other point of the region in the floor changed: the slit's part up to the foot, and
    # what the edge from s to c sweeps over as s moves to its foot.
    others = np.vstack([r[:, :2] for r in rings])
    for corner in (v, s, foot, c):
        others = others[~np.all(others == corner[:2], axis=1)]
    if in_triangle(foot[:2], v[:2], s[:2], others).any() or in_triangle(foot[:2], s[:2], c[:2], others).any():
        return None
    # The moved edge against every edge of the region but those at its ends and the two that go.
    gone_or_met = tip + (np.arange(-1, 3) if ahead else np.arange(-3, 1))
    for j, other in enumerate(rings):
        start, end = other[:, :2], ring_next(other[:, :2])
        keep = np.ones(len(other), dtype=bool)
        if j == k:
            keep[gone_or_met % n] = False
        if segments_meet_matrix(foot[None, :2], c[None, :2], start[keep], end[keep]).any():
            return None
    if boundary.distance(foot[None, :2], c[None, :2], foot[None, 2], c[None, 2])[0][0] < clear:
        return None
    zipped = ring.copy()
    zipped[s_at] = foot
    return np.delete(zipped, tip, axis=0)
