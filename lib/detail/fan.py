"""Fan triangulations of the polygons: the best corner to fan from, and how far a fan is from the samples."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..geometry import NONZERO_DIVISOR, cross_vectors
from ..navmesh import PolyMesh
from ..progress import SILENT, Progress

# Samples measured against their polygon's fan at a time (bounds _fan_fits' temporaries).
_SAMPLES_PER_CHUNK = 1 << 16
# A fan fits when every sample is this much (m) within max_error: a sample exactly at the bound is
# refined, as the refinement's own test would insert it.
_FIT_MARGIN = 1e-9
# A sample whose smallest barycentric weight in a fan triangle is above this is inside it and
# outside every other (the fan's triangles do not overlap): no later one holds it better.
_INSIDE = 1e-9


def _fan(n: int, apex: int) -> list[list[int]]:
    """The fan triangulation of an n-gon from corner `apex`."""
    return [[apex, (apex + k) % n, (apex + k + 1) % n] for k in range(1, n - 1)]


def fan_apexes(mesh: PolyMesh) -> np.ndarray:
    """Per polygon, the corner whose fan has the fattest thinnest triangle (2·area / longest side²):
    a fan from a corner next to a nearly straight one would start with a sliver along the polygon's
    edge, and a point on that edge would take its height across the sliver. All polygons at once."""
    offs, sizes = mesh.poly_offsets, mesh.polygon_sizes
    xy = mesh.vertices[mesh.poly_vertices, :2]
    best, apex = np.full(mesh.polygon_count, -np.inf), np.zeros(mesh.polygon_count, dtype=np.int64)
    for j in range(int(sizes.max(initial=3))):
        has = np.flatnonzero(sizes > j)
        worst = np.full(len(has), np.inf)
        n = sizes[has]
        a = xy[offs[has] + j]
        for k in range(1, int(n.max(initial=3)) - 1):
            fan = np.flatnonzero(n > k + 1)
            b, c = xy[offs[has[fan]] + (j + k) % n[fan]], xy[offs[has[fan]] + (j + k + 1) % n[fan]]
            u, v, w = b - a[fan], c - a[fan], c - b
            area2 = np.abs(cross_vectors(u, v))
            longest = np.maximum(np.maximum((u**2).sum(1), (v**2).sum(1)), (w**2).sum(1))
            worst[fan] = np.minimum(worst[fan], area2 / np.maximum(longest, NONZERO_DIVISOR))
        better = worst > best[has]
        best[has[better]], apex[has[better]] = worst[better], j
    return apex


def _fan_fits(
    mesh: PolyMesh,
    apex: np.ndarray,
    sample_poly: np.ndarray,
    points: Callable[[slice], np.ndarray],
    max_error: float,
    progress: Progress = SILENT,
) -> np.ndarray:
    """Bool per polygon: its fan triangulation (from `apex`) is already within max_error of every
    sample (with a hair to spare), so refinement would insert nothing. All polygons at once, the
    samples _SAMPLES_PER_CHUNK at a time (each sample is measured on its own). points(rows): the
    (K, 3) points of those rows of the samples (found per chunk: all at once they are as large as
    the heightfield's heights)."""
    corner = mesh.vertices[mesh.poly_vertices]
    worst = np.zeros(mesh.polygon_count)
    for start in range(0, len(sample_poly), _SAMPLES_PER_CHUNK):
        progress.at(start / len(sample_poly))
        part = slice(start, start + _SAMPLES_PER_CHUNK)
        samples = points(part)
        z = _fan_heights(mesh, corner, apex, sample_poly[part], samples)
        np.maximum.at(worst, sample_poly[part], np.abs(z - samples[:, 2]))
    return worst <= max_error - _FIT_MARGIN


def _fan_heights(
    mesh: PolyMesh, corner: np.ndarray, apex: np.ndarray, sample_poly: np.ndarray, samples: np.ndarray
) -> np.ndarray:
    """(N,) height of each sample on its polygon's fan from `apex`: in the fan triangle that holds
    it, or the one it lies least outside of. Each fan triangle's edges and determinant are found
    once per polygon and looked up per sample (one gather), not rebuilt from the corners per sample;
    a sample is measured against the triangles after the one found inside by more than _INSIDE no
    more."""
    offs, sizes = mesh.poly_offsets, mesh.polygon_sizes
    a = corner[offs[:-1] + apex]
    n = sizes[sample_poly]
    rx, ry = samples[:, 0] - a[sample_poly, 0], samples[:, 1] - a[sample_poly, 1]
    az = a[sample_poly, 2]
    best = np.full(len(samples), -np.inf)
    z = np.zeros(len(samples))
    table = np.zeros((7, mesh.polygon_count))  # per polygon: ux, uy, vx, vy, det, b's z, c's z
    for k in range(1, int(sizes.max(initial=2)) - 1):
        tri = np.flatnonzero(sizes > k + 1)
        b = corner[offs[tri] + (apex[tri] + k) % sizes[tri]]
        c = corner[offs[tri] + (apex[tri] + k + 1) % sizes[tri]]
        ux, uy = b[:, 0] - a[tri, 0], b[:, 1] - a[tri, 1]
        vx, vy = c[:, 0] - a[tri, 0], c[:, 1] - a[tri, 1]
        det = ux * vy - uy * vx
        table[:, tri] = ux, uy, vx, vy, np.where(det != 0.0, det, NONZERO_DIVISOR), b[:, 2], c[:, 2]
        # A sample inside an earlier triangle by more than _INSIDE lies outside this one: skipped.
        inside = (n > k + 1) & (best <= _INSIDE)
        has = slice(None) if inside.all() else np.flatnonzero(inside)
        ux, uy, vx, vy, det, bz, cz = np.take(table, sample_poly[has], axis=1)
        px, py = rx[has], ry[has]
        w1, w2 = (px * vy - py * vx) / det, (ux * py - uy * px) / det
        w0 = 1.0 - w1 - w2
        score = np.minimum(np.minimum(w0, w1), w2)
        better = np.flatnonzero(score > best[has])
        rows = better if isinstance(has, slice) else has[better]
        best[rows] = score[better]
        z[rows] = w0[better] * az[rows] + w1[better] * bz[better] + w2[better] * cz[better]
    return z


def _barycentric(tri: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(T, N, 3) barycentric coordinates (top view) of points q (N, 2) in triangles tri (T, 3, >=2)."""
    a, b, c = tri[:, 0, :2], tri[:, 1, :2], tri[:, 2, :2]
    v0, v1 = b - a, c - a
    det = cross_vectors(v0, v1)
    det = np.where(np.abs(det) > 0, det, NONZERO_DIVISOR)
    r = q[None, :, :] - a[:, None, :]
    w1 = (r[..., 0] * v1[:, None, 1] - r[..., 1] * v1[:, None, 0]) / det[:, None]
    w2 = (v0[:, None, 0] * r[..., 1] - v0[:, None, 1] * r[..., 0]) / det[:, None]
    return np.stack([1.0 - w1 - w2, w1, w2], axis=-1)
