"""Walls a shortcut would sweep over. Where a chain of outline points is replaced by the chord
between its ends (Ramer-Douglas-Peucker, pruning), the floor gains the area between the two where
the chain runs left of the chord (the floor lies left of every outline edge). A wall lying wholly
there crosses neither the new edge nor the traced outline, and farther from the edge than the
agent radius (at radius 0, anywhere) no distance to the edge sees it. A wall of zero thickness (one
plane) lies inside a hole that is a sliver of outline round it, within the simplification
tolerance of a chord across its tip: the shortcut put metres of the wall inside the floor, and
paths crossed it (below a quarter cell of radius, where the sliver fits within the tolerance)."""

from __future__ import annotations

import numpy as np

from ..boundary import FloorBoundary
from ..components import run_positions
from ..geometry import point_segment_distance, segment_distance

# A wall reaching no farther than this (m, float noise) from a chord into the floor it adds lies on
# the chord.
_DEPTH = 1e-9


def walls_swept(
    points: np.ndarray, first: np.ndarray, last: np.ndarray, boundary: FloorBoundary, across_chord: bool
) -> np.ndarray:
    """(C,) bool: per chain points[first[c]..last[c]] (inclusive, at least 3 points, in outline
    order), would the chord first -> last add floor that a boundary segment of its storey lies in?

    The loop of the chain and the chord back winds clockwise round the floor the chord adds. Each
    segment near the chord is cut where it crosses the chord; a piece whose midpoint the loop winds
    clockwise round, reaching farther than _DEPTH from the chord, is swept over. Segments that cross
    the chain are left out: the traced outline itself crosses them (a ledge between two cells'
    centres placed at the block fraction, or the end of a thin wall cut by a traced edge), and the
    push moves the edges off them (push._wall_gap); keeping the chain's points there would keep
    the traced points beyond the wall and leave the push a harder ring. So are segments that cross
    the chord unless `across_chord`: before the push, which moves the chord past them (the
    lopsided simplification lays chords up to the tolerance beyond a wall's face for it to do so),
    not after it."""
    swept = np.zeros(len(first), dtype=bool)
    if len(first) == 0 or len(boundary.seg) == 0:
        return swept
    p, z = points[:, :2], points[:, 2]
    first, last = np.asarray(first), np.asarray(last)
    count = last - first + 1
    a, b = p[first], p[last]
    # The floor added lies within the distance of the chain's farthest point from the chord.
    chain = np.repeat(np.arange(len(first)), count)
    at = np.repeat(first, count) + run_positions(count)
    dev = point_segment_distance(p[at], a[chain], b[chain])[0]
    reach = np.maximum.reduceat(dev, np.cumsum(count) - count)
    pair, seg = boundary.segments_near(a, b, float(reach.max()))
    if len(pair) == 0:
        return swept
    s = boundary.seg[seg]
    s0, s1 = s[:, :2], s[:, 2:4]
    near, t = segment_distance(a[pair], b[pair], s0, s1)
    za, zb = z[first[pair]], z[last[pair]]
    same = np.abs(za + t * (zb - za) - s[:, 4]) < boundary.storey
    # Distance to a segment is convex along a line: a segment whose ends both lie within _DEPTH of
    # the chord lies within it all along.
    deep = np.maximum(point_segment_distance(s0, a[pair], b[pair])[0], point_segment_distance(s1, a[pair], b[pair])[0])
    keep = same & (near <= reach[pair] + _DEPTH) & (deep > _DEPTH)
    pair, s0, s1 = pair[keep], s0[keep], s1[keep]
    if len(pair) == 0:
        return swept
    # Each pair's loop edges: the chain's, then the chord back to its start.
    edges = count[pair]
    pe = np.repeat(np.arange(len(pair)), edges)
    k = run_positions(edges)
    start = first[pair][pe] + k
    end = np.where(k < edges[pe] - 1, start + 1, first[pair][pe])
    on_chord = k == edges[pe] - 1
    # Where each segment crosses each loop edge (its parameter along the segment).
    d_s, d_e, w = s1[pe] - s0[pe], p[end] - p[start], p[start] - s0[pe]
    den = d_s[:, 0] * d_e[:, 1] - d_s[:, 1] * d_e[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_s = (w[:, 0] * d_e[:, 1] - w[:, 1] * d_e[:, 0]) / den
        t_e = (w[:, 0] * d_s[:, 1] - w[:, 1] * d_s[:, 0]) / den
    cut = (den != 0) & (t_s > 0) & (t_s < 1) & (t_e >= 0) & (t_e <= 1)
    left_out = cut & (~on_chord | (not across_chord))
    free = np.bincount(pe[left_out], minlength=len(pair)) == 0
    # Per pair left in, its pieces: the segment, or its two parts either side of the chord.
    crossing = cut & on_chord & free[pe]
    splits = np.zeros(len(pair))
    splits[pe[crossing]] = t_s[crossing]
    split = np.bincount(pe[crossing], minlength=len(pair)) > 0
    whole, halves = np.flatnonzero(free & ~split), np.flatnonzero(split)
    of = np.r_[whole, halves, halves]
    lo = np.r_[np.zeros(len(whole)), np.zeros(len(halves)), splits[halves]]
    hi = np.r_[np.ones(len(whole)), splits[halves], np.ones(len(halves))]
    mid = s0[of] + (0.5 * (lo + hi))[:, None] * (s1[of] - s0[of])
    added = _winding(mid, of, pair, edges, first, p) < 0
    of, lo, hi = of[added], lo[added], hi[added]
    c = pair[of]
    ends = [s0[of] + f[:, None] * (s1[of] - s0[of]) for f in (lo, hi)]
    reached = np.maximum(*(point_segment_distance(e, a[c], b[c])[0] for e in ends))
    swept[c[reached > _DEPTH]] = True
    return swept


def _winding(
    x: np.ndarray, of: np.ndarray, pair: np.ndarray, edges: np.ndarray, first: np.ndarray, p: np.ndarray
) -> np.ndarray:
    """Winding number of each point x (N, 2) about the loop of its pair `of` (the pair's chain,
    then the chord back), counter-clockwise positive."""
    n = edges[of]
    xe = np.repeat(np.arange(len(x)), n)
    k = run_positions(n)
    f = first[pair[of]][xe]
    start = f + k
    end = np.where(k < n[xe] - 1, start + 1, f)
    u, v, q = p[start], p[end], x[xe]
    side = (v[:, 0] - u[:, 0]) * (q[:, 1] - u[:, 1]) - (v[:, 1] - u[:, 1]) * (q[:, 0] - u[:, 0])
    up = (u[:, 1] <= q[:, 1]) & (v[:, 1] > q[:, 1]) & (side > 0)
    down = (u[:, 1] > q[:, 1]) & (v[:, 1] <= q[:, 1]) & (side < 0)
    return np.bincount(xe, weights=up.astype(np.float64) - down, minlength=len(x))
