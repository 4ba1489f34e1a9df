"""Hole outlines: a wall-only hole (a pillar, a crate) enclosed by as few corners as the
simplification tolerance allows."""

from __future__ import annotations

import numpy as np

from ..geometry import NONZERO_DIVISOR, convex_hull, point_segment_distance_matrix, ring_next, signed_area
from .push import _fits_among

# Rings farther than this many tolerances from a traced hole cannot meet its fewer-corner outline.
_HOLE_REACH = 2.0
# Directions of the first side tried for a fewer-corner hole outline: this many evenly spaced,
# and the hull's longest edges (their sides lie flush with the traced outline).
_HOLE_START_ANGLES = 12
_HOLE_START_EDGES = 8
# The most corners such an outline may have (more saves no notch over the simplified ring).
_HOLE_MAX_CORNERS = 8
# A tangent direction this close (radians) to the last one runs along it (collinear hull points).
_SAME_TURN = 1e-12
# Capsules this close (m) along a ray join into one run (float noise where they abut).
_RUN_SLACK = 1e-12
# Corners are wrapped this much (m) inside the tolerance, so float noise keeps them within it.
_CORNER_SLACK = 1e-9


def _enclosing_hole(traced: np.ndarray, corners: int, tolerance: float, others: list[np.ndarray]) -> np.ndarray | None:
    """A wall-only hole (clockwise, traced points (n, 3)) as a convex outline with fewer than
    `corners` vertices that encloses every traced point, stays within `tolerance` of the traced
    outline both ways and keeps clear of the region's other rings; None if there is none.

    Every hole corner is a notch of the region around it and costs polygons, so a pillar is better
    a triangle than a square when the tolerance allows. Enclosing keeps the obstacle out of the
    navmesh. The outline is wrapped greedily around the hull of the traced points (`_wraps`): each
    side touches the hull and runs on while it is within `tolerance` of the traced outline, then
    turns to touch the hull again; from a few first sides, the fewest corners win (the greedy wrap
    needs at most one corner more than the fewest possible from any start), then the least area.
    """
    xy = traced[:, :2]
    hull = xy[convex_hull(xy)]
    if len(hull) < 3 or corners <= 3:
        return None
    # A traced point deeper than tolerance inside the hull is as deep inside any outline enclosing it.
    if point_segment_distance_matrix(xy, hull, ring_next(hull)).min(axis=1).max() > tolerance:
        return None
    most = min(corners - 1, _HOLE_MAX_CORNERS)
    side = ring_next(hull) - hull
    longest = np.argsort(-np.hypot(side[:, 0], side[:, 1]))[:_HOLE_START_EDGES]
    # Outward normals of the first sides: the hull runs counter-clockwise, so outward is right.
    angles = np.concatenate(
        [
            np.linspace(0.0, 2.0 * np.pi, _HOLE_START_ANGLES, endpoint=False),
            np.arctan2(-side[longest, 0], side[longest, 1]),
        ]
    )
    a, b = xy, ring_next(xy)
    for wraps in _wraps(hull, xy, tolerance - _CORNER_SLACK, angles, most):
        for corner in sorted(wraps, key=signed_area):
            # Within tolerance both ways: every corner of the traced outline (the wrap keeps within
            # it of the outline's capsules, up to float noise), and every traced point of the wrap.
            if point_segment_distance_matrix(corner, a, b).min(axis=1).max() > tolerance:
                continue
            if point_segment_distance_matrix(xy, corner, ring_next(corner)).min(axis=1).max() > tolerance:
                continue
            nearest = point_segment_distance_matrix(corner, xy, xy).argmin(axis=1)
            ring = np.column_stack([corner, traced[nearest, 2]])[::-1]
            if _fits_among(ring, others):
                return ring
    return None


def _wraps(hull: np.ndarray, outline: np.ndarray, tolerance: float, angles: np.ndarray, most: int):
    """Convex outlines (k, 2), counter-clockwise, of at most `most` corners around a convex hull
    (counter-clockwise), each corner within `tolerance` of the outline (the traced points, a ring):
    one per first side direction (its outward normal's angle) that closes in time, yielded as
    lists of the outlines that close with 3 corners, then 4, and so on. All starts step together.

    A side touches the hull at a contact point and runs counter-clockwise for as long as it stays
    within tolerance of the outline (`_exit`): a corner. The next side is the tangent from that
    corner to the hull. The outline closes once a side meets the first side's line behind its
    contact point, within that reach."""
    normal = np.column_stack([np.cos(angles), np.sin(angles)])
    contact0 = hull[np.argmax(normal @ hull.T, axis=1)]
    along0 = np.column_stack([-normal[:, 1], normal[:, 0]])
    contact, along = contact0.copy(), along0.copy()
    corners = np.zeros((len(angles), 0, 2))
    edge = ring_next(outline) - outline
    length = np.hypot(edge[:, 0], edge[:, 1])
    segments = (outline, length, edge / np.maximum(length, NONZERO_DIVISOR)[:, None])
    for step in range(most):
        reach = _exit(contact, along, segments, tolerance)
        if step >= 2:
            # Where this side's line meets the first side's: contact + s along = contact0 - u along0.
            det = along[:, 0] * along0[:, 1] - along[:, 1] * along0[:, 0]
            rel = contact0 - contact
            with np.errstate(divide="ignore", invalid="ignore"):
                s = (rel[:, 0] * along0[:, 1] - rel[:, 1] * along0[:, 0]) / det
                u = (along[:, 0] * rel[:, 1] - along[:, 1] * rel[:, 0]) / det
            closes = (np.abs(det) > 0) & (s >= 0) & (s <= reach) & (u >= 0)
            if closes.any():
                last = contact[closes] + s[closes, None] * along[closes]
                yield list(np.concatenate([corners[closes], last[:, None, :]], axis=1))
                keep = ~closes
                contact0, along0, contact, along = contact0[keep], along0[keep], contact[keep], along[keep]
                corners, reach = corners[keep], reach[keep]
                if not keep.any():
                    return
        corner = contact + reach[:, None] * along
        corners = np.concatenate([corners, corner[:, None, :]], axis=1)
        # The tangent from the corner: the hull point at the least counter-clockwise turn from the
        # side's direction (the farthest of points in line with it).
        rel = hull[None, :, :] - corner[:, None, :]
        turn = np.mod(np.arctan2(rel[..., 1], rel[..., 0]) - np.arctan2(along[:, 1], along[:, 0])[:, None], 2.0 * np.pi)
        dist = np.hypot(rel[..., 0], rel[..., 1])
        turn = np.where(dist > 0, turn, 2.0 * np.pi)
        least = turn.min(axis=1, keepdims=True)
        pick = np.argmax(np.where(turn <= least + _SAME_TURN, dist, -1.0), axis=1)
        contact = hull[pick]
        along = (contact - corner) / np.maximum(np.hypot(*(contact - corner).T), NONZERO_DIVISOR)[:, None]


def _exit(p: np.ndarray, d: np.ndarray, segments: tuple, tolerance: float) -> np.ndarray:
    """(S,) how far each ray p + l d (unit d) runs from l = 0 while it stays within `tolerance` of
    the segments (starts, lengths, unit directions: the traced outline, which p lies on): the run
    of the capsules about the segments that the ray is in from its start, each capsule meeting
    the ray in one interval."""
    a, length, unit = segments
    rel = p[:, None, :] - a[None, :, :]  # (S, m, 2)
    # The strip of each segment: along in [0, length], across in [-tolerance, tolerance].
    pos_u, rate_u = (rel * unit).sum(axis=2), d @ unit.T
    pos_v = rel[..., 1] * unit[:, 0] - rel[..., 0] * unit[:, 1]
    rate_v = d[:, None, 1] * unit[None, :, 0] - d[:, None, 0] * unit[None, :, 1]
    lo_u, hi_u = _slab(pos_u, rate_u, 0.0, length)
    lo_v, hi_v = _slab(pos_v, rate_v, -tolerance, tolerance)
    lo, hi = np.maximum(lo_u, lo_v), np.minimum(hi_u, hi_v)
    meets = (lo <= hi) & (length > 0)  # a repeated point's segment is its disc alone
    lo, hi = np.where(meets, lo, np.inf), np.where(meets, hi, -np.inf)
    # The discs at the segments' ends (each segment's start; the ring's next segment starts at its end).
    half = (rel * d[:, None, :]).sum(axis=2)
    disc = half**2 - ((rel**2).sum(axis=2) - tolerance**2)
    root = np.sqrt(np.maximum(disc, 0.0))
    lo = np.minimum(lo, np.where(disc >= 0, -half - root, np.inf))
    hi = np.maximum(hi, np.where(disc >= 0, -half + root, -np.inf))
    # The run from 0: intervals in order of their starts, up to the first gap after the farthest
    # end so far (those wholly behind the start left out; the contact point's own disc holds 0).
    behind = hi < 0
    lo, hi = np.where(behind, np.inf, lo), np.where(behind, -np.inf, hi)
    order = np.argsort(lo, axis=1)
    lo, hi = np.take_along_axis(lo, order, axis=1), np.take_along_axis(hi, order, axis=1)
    farthest = np.maximum.accumulate(hi, axis=1)
    gap = lo[:, 1:] > farthest[:, :-1] + _RUN_SLACK
    last = np.where(gap.any(axis=1), np.argmax(gap, axis=1), lo.shape[1] - 1)
    return np.maximum(farthest[np.arange(len(p)), last], 0.0)


def _slab(pos: np.ndarray, rate: np.ndarray, low, high) -> tuple[np.ndarray, np.ndarray]:
    """The interval of l where pos + l rate lies in [low, high] (empty: lo > hi)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t0, t1 = (low - pos) / rate, (high - pos) / rate
    still = rate == 0
    inside = (pos >= low) & (pos <= high)
    lo = np.where(still, np.where(inside, -np.inf, np.inf), np.minimum(t0, t1))
    hi = np.where(still, np.where(inside, np.inf, -np.inf), np.maximum(t0, t1))
    return lo, hi
