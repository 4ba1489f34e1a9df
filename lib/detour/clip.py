"""Polygons and detail triangles clipped at tile borders, in Detour's Y-up frame (x, z), and the
labels their edges carry while the tiles are built."""

from __future__ import annotations

import math

import numpy as np

from ..geometry import signed_area
from .format import VERTS_PER_POLYGON

# Points closer than this (m) are one point; detail edges this close to a polygon edge lie on it.
WELD = 1e-6


ON_EDGE = 1e-4


# Clipped pieces with less area than this (m²) are dropped: a polygon only touching a tile.
MIN_PIECE_AREA = 1e-8


# Detail triangle fragments with less area than this (m²) are slivers of a clip: left out.
MIN_FRAGMENT_AREA = 1e-11
# A detail triangle whose top-view determinant is below this (m²) stands upright: it gives no
# height at a point seen from above.
_UPRIGHT_DET = 1e-15


# Edge labels while tiles are built: >= 0 an original edge slot, _BORDER - side an edge cut along a
# tile border, _SPLIT - k the diagonal that split clipped piece k in two, _NO_EDGE padding.
_NO_EDGE = -(1 << 40)


_BORDER = -1


_SPLIT = -100


# After resolving: >= 0 a neighbour (index in the tile), _WALL, or _PORTAL - side.
_WALL = -1


_PORTAL = -10


def _clip_to_plane(points: list, labels: list, axis: int, value: float, keep_below: bool, cut_label: int):
    """Sutherland-Hodgman: the convex polygon's part on one side of the plane coordinate[axis] = value.
    Points are (x, y, z) tuples; edge k runs from point k with labels[k]; the new edge along the plane
    gets cut_label."""

    def inside(q):
        return q[axis] <= value if keep_below else q[axis] >= value

    out_points: list = []
    out_labels: list = []
    n = len(points)
    for k in range(n):
        a, b = points[k], points[(k + 1) % n]
        a_in, b_in = inside(a), inside(b)
        if a_in:
            _append(out_points, out_labels, a, labels[k])
        if a_in != b_in:
            _append(out_points, out_labels, _crossing(a, b, axis, value), cut_label if a_in else labels[k])
    if len(out_points) > 1 and math.dist(out_points[-1], out_points[0]) < WELD:
        out_points.pop()
        out_labels.pop()
    return out_points, out_labels


def _append(points: list, labels: list, point: tuple, label: int) -> None:
    """Add a corner; one that repeats the previous corner replaces that corner's outgoing edge label."""
    if points and math.dist(points[-1], point) < WELD:
        labels[-1] = label
        return
    points.append(point)
    labels.append(label)


def _crossing(a: tuple, b: tuple, axis: int, value: float) -> tuple:
    """Where segment a-b meets the plane, computed from its ends in a fixed order so the two polygons
    sharing the edge get the same point."""
    if b < a:
        a, b = b, a
    t = (value - a[axis]) / (b[axis] - a[axis])
    point = [a[i] + t * (b[i] - a[i]) for i in range(3)]
    point[axis] = value
    return tuple(point)


def _split_to_hexagons(points: np.ndarray, labels: list, split_ids) -> list:
    """A convex polygon as convex pieces of at most six corners (split along diagonals; a clip can
    add up to four corners), each with its edge labels; the two sides of a diagonal share a label."""
    if len(points) <= VERTS_PER_POLYGON:
        return [(points, list(labels))]
    k = len(points) // 2
    diagonal = _SPLIT - next(split_ids)
    first = _split_to_hexagons(points[: k + 1], list(labels[:k]) + [diagonal], split_ids)
    second = _split_to_hexagons(np.concatenate([points[k:], points[:1]]), list(labels[k:]) + [diagonal], split_ids)
    return first + second


def _clip_convex(triangle: list, ring: list, sign: float, edges: list[int]) -> list[tuple]:
    """The part of a 3D triangle inside a convex polygon seen from above (ring: its corners, wound
    as the sign of its area; edges: those of its edges the triangle crosses), heights on the
    triangle's plane; [] when less than MIN_FRAGMENT_AREA is left."""
    points = [tuple(q) for q in triangle]
    n = len(ring)
    for k in edges:
        ax, _, az = ring[k]
        bx, _, bz = ring[(k + 1) % n]
        dx, dz = bx - ax, bz - az
        sides = [sign * (dx * (q[2] - az) - dz * (q[0] - ax)) for q in points]
        out = []
        for i, (p, sp) in enumerate(zip(points, sides)):
            q, sq = points[(i + 1) % len(points)], sides[(i + 1) % len(points)]
            if sp >= 0:
                out.append(p)
            if (sp >= 0) != (sq >= 0):
                t = sp / (sp - sq)
                out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2])))
        points = [q for i, q in enumerate(out) if i == 0 or math.dist(q, out[i - 1]) >= WELD]
        if len(points) > 1 and math.dist(points[-1], points[0]) < WELD:
            points.pop()
        if len(points) < 3:
            return []
    twice_area = sum(a[0] * b[2] - b[0] * a[2] for a, b in zip(points, points[1:] + points[:1]))
    return points if abs(twice_area) > 2.0 * MIN_FRAGMENT_AREA else []


def _against_convex(tris: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(inside, outside, crossed) of triangles (T, 3, 3) against a convex polygon seen from above:
    (T,) all three corners inside it (clipping gives the triangle itself), (T,) all beyond one of its
    edges (clipping gives nothing), and (T, E) the edges a triangle does not lie wholly inside of,
    the only ones clipping needs (its part inside the rest is all of it); to WELD."""
    xz, points = corners[:, [0, 2]], tris[:, :, [0, 2]]
    edge = np.roll(xz, -1, axis=0) - xz
    sign = np.sign(_signed_area_xz(corners))
    rel = points[:, :, None, :] - xz[None, None]
    margin = WELD * np.hypot(edge[:, 0], edge[:, 1])
    # (T, 3 corners, E edges): how far inside each edge, times its length.
    depth = sign * (edge[:, 0] * rel[..., 1] - edge[:, 1] * rel[..., 0])
    within = np.all(depth >= margin, axis=1)
    return np.all(within, axis=1), np.any(np.all(depth <= -margin, axis=1), axis=1), ~within


def _signed_area_xz(points: np.ndarray) -> float:
    """Signed area seen from above in Detour's Y-up frame (its ground plane is x, z)."""
    return signed_area(points[:, [0, 2]])


def _area_xz(points) -> float:
    return abs(_signed_area_xz(np.asarray(points)))


def _surface_heights(tris: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Heights of a polygon's detail surface (its triangles, (T, 3, 3)) at points seen from above:
    from the triangle each point lies in, or the one it is nearest to inside of."""
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    e1, e2 = b - a, c - a
    det = e1[:, 0] * e2[:, 2] - e1[:, 2] * e2[:, 0]
    det = np.where(np.abs(det) < _UPRIGHT_DET, np.nan, det)
    rel = points[:, None, :] - a[None]
    u = (rel[..., 0] * e2[:, 2] - rel[..., 2] * e2[:, 0]) / det
    v = (e1[:, 0] * rel[..., 2] - e1[:, 2] * rel[..., 0]) / det
    worst = np.nan_to_num(np.minimum(np.minimum(u, v), 1 - u - v), nan=-np.inf)
    best = np.argmax(worst, axis=1)
    rows = np.arange(len(points))
    u, v = u[rows, best], v[rows, best]
    return a[best, 1] + u * e1[best, 1] + v * e2[best, 1]
