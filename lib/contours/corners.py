"""Fewer outline corners: a short wall edge between two reflex corners of the floor (where the
outline rounds an obstacle's corner) is dropped by extending the edges on either side until they
meet. The floor given up is the small triangle between the dropped edge and the new corner; each
corner dropped saves the polygon stage a portal, and so about a polygon. Outlines settled onto the
band's edge (lib.contours.push) round it with a corner every 20-30 degrees, and lose most: nav_test
164 -> 149 polygons for 0.8 m² of 4,110, colonnades a quarter of their polygons.

The new corner stands at most the simplification tolerance off the dropped edge and off the band's
edge (what Recast's maxSimplificationError lets a contour stray), the new edges stay out of the
band as every pushed edge does, and edges with a wall in front of them, straight ahead or at a
slant, keep their corners, as the push keeps them there: the new corner would narrow the passage,
whose width is what wider agents need whole."""

from __future__ import annotations

import numpy as np

from ..boundary import FloorBoundary
from ..geometry import cross_vectors, ring_contains, ring_next, segments_meet_matrix, signed_area
from .push import _near
from .simplify import _PASSAGE_REACH
from .trace import OFF_WALL

# Besides straight ahead, a wall edge looks for a passage in front of it this far (radians) to
# either side: a corner rounded at a passage's end faces the wall across it at a slant.
_PASSAGE_SLANT = np.pi / 4


def fewer_corners(
    rings: list[np.ndarray], neighbours: list[np.ndarray], boundary: FloorBoundary, tolerance: float, reach: float
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A region's rings (outer first, then holes) and per-edge neighbours, with the wall edges
    between two reflex corners dropped where that keeps the outline `reach` off the floor's
    boundary and gives up little floor (see the module's docstring); each ring stays simple and
    apart from the others."""
    rings, neighbours = list(rings), list(neighbours)
    for k in range(len(rings)):
        refused: set[bytes] = set()
        while len(rings[k]) > 3:
            done = _drop_edges(k, rings, neighbours, boundary, tolerance, reach, refused)
            if not done:
                break
    return rings, neighbours


def _drop_edges(
    k, rings, neighbours, boundary: FloorBoundary, tolerance: float, reach: float, refused: set[bytes]
) -> bool:
    """One pass over ring k: its droppable edges, least floor given up first, none next to another
    dropped in this pass. Returns whether any was dropped. `refused` holds the edges (with their
    neighbours' far ends) found not droppable in earlier passes: nothing they are measured by has
    moved."""
    ring, nb = rings[k], neighbours[k]
    edge, corner, lost = _candidates(ring, nb, tolerance)
    n = len(ring)
    keys = [ring[(e + np.arange(-1, 3)) % n].tobytes() for e in edge.tolist()]
    fresh = np.array([key not in refused for key in keys], dtype=bool)
    edge, corner, lost, keys = edge[fresh], corner[fresh], lost[fresh], [key for key, f in zip(keys, fresh) if f]
    if not len(edge):
        return False
    z = 0.5 * (ring[edge, 2] + ring[(edge + 1) % n, 2])
    ok = _droppable(ring, edge, corner, z, boundary, tolerance, reach)
    refused.update(key for key, good in zip(keys, ok) if not good)
    taken = np.zeros(n, dtype=bool)
    chosen = []
    for c in np.flatnonzero(ok)[np.argsort(lost[ok], kind="stable")]:
        span = (edge[c] + np.arange(-1, 3)) % n
        if not taken[span].any():
            taken[span] = True
            chosen.append(c)
    dropped = False
    # From the last edge back, so the edges not yet dropped keep their indices; the edge that
    # closes the ring (its end is point 0) last, as the ring's last edge then.
    for c in sorted(chosen, key=lambda c: (edge[c] == n - 1, -edge[c])):
        i = len(rings[k]) - 1 if edge[c] == n - 1 else int(edge[c])
        new = _dropped(rings, k, i, np.r_[corner[c], z[c]])
        if new is not None:
            rings[k] = new
            neighbours[k] = np.delete(neighbours[k], (i + 1) % len(neighbours[k]))
            dropped = True
    return dropped


def _droppable(ring, edge, corner, z, boundary: FloorBoundary, tolerance: float, reach: float) -> np.ndarray:
    """(C,) bool per candidate edge (_candidates): its new edges keep `reach` off the boundary, its
    new corner stands within `tolerance` of the band's edge, and no wall lies in front of it. The
    cheaper tests first, each on the candidates still in."""
    n = len(ring)
    prev, nxt = ring[(edge - 1) % n], ring[(edge + 2) % n]
    starts, ends = np.r_[prev[:, :2], corner], np.r_[corner, nxt[:, :2]]
    clear = boundary.distance(starts, ends, np.r_[prev[:, 2], z], np.r_[z, nxt[:, 2]])[0].reshape(2, -1).min(axis=0)
    # Off the boundary by OFF_WALL cells at least, as the traced points are.
    ok = clear >= max(reach, OFF_WALL * boundary.cs)
    limit = boundary.radius + tolerance
    ok[ok] = boundary.point_distance(corner[ok], z[ok], 2.0 * limit) <= limit
    a, b = ring[edge[ok]], ring[(edge[ok] + 1) % n]
    ok[ok] = ~boundary.faces_passage(a[:, :2], b[:, :2], a[:, 2], b[:, 2], _PASSAGE_REACH, _PASSAGE_SLANT)
    return ok


def _candidates(ring: np.ndarray, nb: np.ndarray, tolerance: float):
    """(edge index, new corner (C, 2), floor given up (C,)) for each wall edge i -> i+1 whose two
    ends are reflex corners of the floor (on its left) between wall edges, and whose neighbouring
    edges, extended, meet within `tolerance` of it."""
    n = len(ring)
    xy = ring[:, :2]
    i = np.arange(n)
    prev, a, b, nxt = xy[(i - 1) % n], xy, xy[(i + 1) % n], xy[(i + 2) % n]
    walls = (nb[(i - 1) % n] < 0) & (nb < 0) & (nb[(i + 1) % n] < 0)
    into, along, out = a - prev, b - a, nxt - b
    # Right turns at both ends, which together turn less than half a circle: the extended edges
    # meet on the floor's side.
    den = cross_vectors(into, out)
    maybe = walls & (cross_vectors(into, along) < 0) & (cross_vectors(along, out) < 0) & (den < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = cross_vectors(along, out) / den
        corner = a + s[:, None] * into
        length = np.hypot(*along.T)
        height = np.abs(cross_vectors(along, corner - a)) / length
    maybe &= (s > 0) & np.isfinite(height) & (height <= tolerance)
    edge = np.flatnonzero(maybe)
    return edge, corner[edge], 0.5 * height[edge] * length[edge]


def _dropped(rings: list[np.ndarray], k: int, i: int, corner: np.ndarray) -> np.ndarray | None:
    """Ring k with edge i -> i+1 replaced by the corner (x, y, z), or None if the new edges would
    meet the ring's other edges or another ring's, or the floor given up holds another ring."""
    ring = rings[k]
    n = len(ring)
    new = np.delete(ring, (i + 1) % n, axis=0)
    at = i if (i + 1) % n else i - 1  # the corner's index in the new ring
    new[at] = corner
    m = len(new)
    if signed_area(new) * signed_area(ring) <= 0:
        return None
    starts = new[[(at - 1) % m, at], :2]
    ends = new[[at, (at + 1) % m], :2]
    others = np.setdiff1d(np.arange(m), (at + np.arange(-2, 2)) % m)
    xy = new[:, :2]
    if segments_meet_matrix(starts, ends, xy[others], ring_next(xy)[others]).any():
        return None
    triangle = np.array([ring[i, :2], corner[:2], ring[(i + 1) % n, :2]])
    for other in _near(np.asarray(new), [r for j, r in enumerate(rings) if j != k]):
        oxy = other[:, :2]
        if segments_meet_matrix(starts, ends, oxy, ring_next(oxy)).any() or ring_contains(triangle, oxy[0]):
            return None
    return new
