"""One region's outline cut into convex polygons: by notch portals, else by triangulating and merging."""

from __future__ import annotations

import numpy as np

from ..geometry import NONZERO_DIVISOR, cross_vectors, ring_next, signed_area
from ..notch_portals import notch_cells
from ..progress import SILENT, Progress
from ..triangulate import NEEDLE_FATNESS, bridge_holes, delaunay_flips, ear_clip
from .merge import _fatness, _is_sliver, _merge, _regroup

# No Steiner vertex closer than this many cell sizes to an existing vertex (no tiny edges).
_STEINER_SNAP = 0.25
# Wall edges times ring points measured at once when looking for feet.
_FOOT_CHUNK = 1 << 20


def _has_area(ring: list[int], xy: np.ndarray) -> bool:
    """Does the ring enclose any area (at least three vertices, not all in line)?"""
    return len(ring) >= 3 and abs(signed_area(xy[ring])) > 0


def _without_spikes(idx: list[int]) -> list[int]:
    """Drop repeated consecutive vertices and spikes (a->b->a), until none is left."""
    ring = list(idx)
    changed = True
    while changed and len(ring) >= 3:
        changed = False
        out = [v for k, v in enumerate(ring) if v != ring[k - 1]] if len(ring) > 1 else ring
        n = len(out)
        for k in range(n):
            if n >= 3 and out[k - 1] == out[(k + 1) % n]:
                del out[k]
                del out[k - 1 if k > 0 else -1]
                changed = True
                break
        ring = out
    return ring


def _decompose(
    rings: list[list[int]], xy: np.ndarray, maxv: int, thin: float, progress: Progress = SILENT
) -> tuple[list[list[int]], np.ndarray] | None:
    """Triangulate and merge: the fewest convex polygons (slivers first avoided) over a few
    triangulations of one region; None if no triangulation succeeds."""
    ring = bridge_holes(rings, xy, progress.span(0.0, 0.4))
    best, best_key = None, None
    clipped = {}
    for k, (mode, flip) in enumerate((("fat", False), ("first", False), ("far", False), ("fat", True))):
        attempt = progress.span(0.4, 0.95).part(k, 4)
        attempt.at(0.0)
        if mode not in clipped:
            clipped[mode] = ear_clip(ring, xy, mode, attempt.span(0.0, 0.6))
        tris = clipped[mode]
        if tris is None:
            continue
        if flip:
            tris = delaunay_flips(tris, xy)
        attempt.at(0.6)
        merged = _merge(tris, xy, maxv, progress=attempt.span(0.6, 0.9))
        attempt.at(0.9)
        key = _quality_key(merged, xy, thin)
        if best_key is None or key < best_key:
            best, best_key = merged, key
    if best is None:
        return None
    return _regroup(best, xy, maxv, thin, progress=progress.span(0.95, 1.0)), np.zeros((0, 3))


def _decompose_by_portals(
    rings, points, xy, shared, maxv: int, snap: float, thin: float, progress: Progress = SILENT
) -> tuple[list[list[int]], np.ndarray] | None:
    """Notch portals (lib.notch_portals), cells over the vertex limit split, then merged across
    inessential portals; Steiner vertices a merge leaves straight and unshared are dropped."""
    found = notch_cells(rings, points, shared, snap, progress.span(0.0, 0.6))
    if found is None:
        return None
    xy_all = _extended(xy, found.steiner)
    steiner_ids = set(range(len(xy), len(xy_all)))
    merged = None
    # Cells over the vertex limit are cut by chords into as few pieces as they need, or into
    # triangles that the merge regroups with their neighbours; whichever ends with fewer.
    oversize = any(len(cell) > maxv for cell in found.cells)
    for attempt, split in enumerate((_split_convex, _triangles) if oversize else (_split_convex,)):
        step = progress.span(0.6 + 0.2 * attempt, 0.8 + 0.2 * attempt)
        pieces = []
        for cell in found.cells:
            parts = [cell] if len(cell) <= maxv else split(cell, xy_all, maxv, thin)
            if parts is None:
                break
            pieces.extend(parts)
        else:
            joined = _merge(pieces, xy_all, maxv, steiner_ids, step.span(0.0, 0.5))
            candidate = _regroup(joined, xy_all, maxv, thin, steiner_ids, step.span(0.5, 1.0))
            if merged is None or _quality_key(candidate, xy_all, thin) < _quality_key(merged, xy_all, thin):
                merged = candidate
    if merged is None:
        return None
    used = {v for poly in merged for v in poly}
    kept = [v for v in range(len(xy), len(xy_all)) if v in used]
    if len(kept) < len(found.steiner):
        renumber = {v: len(xy) + k for k, v in enumerate(kept)}
        merged = [[renumber.get(v, v) for v in poly] for poly in merged]
    return merged, found.steiner[[v - len(xy) for v in kept]]


def _feet_on_walls(
    rings: list[list[int]], points, shared: set, snap: float, ratio: float
) -> tuple[list[list[int]], np.ndarray] | None:
    """The rings with new points on their wall edges (not the shared ones: the region across sees
    them as they are) where a ring point lies across a thin strip of floor from a long wall edge
    (`ratio` times nearer the edge than the edge's nearer end, seen along it): its foot there, so
    the strip can be cut straight across rather than into spikes to the edge's far ends. Feet
    nearer than `snap` to an end or to each other are not made.
    (rings, feet (F, 3) numbered after `points`), or None if no foot is made."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    ids = np.unique(np.concatenate([np.asarray(ring, dtype=np.int64) for ring in rings]))
    c = pts[ids, :2]
    chunk = max(1, _FOOT_CHUNK // len(ids))
    feet: list[np.ndarray] = []
    out: list[list[int]] = []
    for ring in rings:
        a_ids = np.asarray(ring, dtype=np.int64)
        b_ids = ring_next(a_ids)
        wall = np.array([(a, b) not in shared for a, b in zip(ring, b_ids.tolist())], dtype=bool)
        hits: dict[int, np.ndarray] = {}
        for start in range(0, len(ring), chunk):
            a, b = pts[a_ids[start : start + chunk], :2], pts[b_ids[start : start + chunk], :2]
            ab = b - a
            length = np.hypot(*ab.T)[:, None]
            rel = c[None, :, :] - a[:, None, :]
            along = (rel * ab[:, None, :]).sum(axis=2) / np.maximum(length, NONZERO_DIVISOR)
            # Floor lies left of every ring edge.
            across = cross_vectors(ab[:, None, :], rel) / np.maximum(length, NONZERO_DIVISOR)
            near_end = np.minimum(along, length - along)
            keep = (
                wall[start : start + chunk, None]
                & (ids[None] != a_ids[start : start + chunk, None])
                & (ids[None] != b_ids[start : start + chunk, None])
                & (across > 0)
                & (near_end >= snap)
                & (across * ratio < near_end)
            )
            for e in np.flatnonzero(keep.any(axis=1)).tolist():
                hits[start + e] = np.sort(along[e, keep[e]]) / length[e, 0]
        new_ring: list[int] = []
        for k, a_id in enumerate(ring):
            new_ring.append(a_id)
            last, length_k = 0.0, float(np.hypot(*(pts[b_ids[k], :2] - pts[a_id, :2])))
            for t in hits.get(k, np.zeros(0)).tolist():
                if (t - last) * length_k < snap or (1 - t) * length_k < snap:
                    continue
                new_ring.append(len(pts) + len(feet))
                feet.append(pts[a_id] + t * (pts[b_ids[k]] - pts[a_id]))
                last = t
        out.append(new_ring)
    if not feet:
        return None
    return out, np.array(feet, dtype=np.float64).reshape(-1, 3)


def _split_convex(ring: list[int], xy: np.ndarray, maxv: int, thin: float) -> list[list[int]] | None:
    """A convex polygon over maxv vertices cut by chords into the fewest pieces, ceil((n - 2) / (maxv - 2)):
    each cut takes maxv consecutive vertices, where the piece is fattest and neither side is a
    sliver (straight runs of vertices can make one); None if no cut qualifies."""
    pieces = []
    while len(ring) > maxv:
        n = len(ring)
        cuts = []
        for i in range(n):
            piece = [ring[(i + k) % n] for k in range(maxv)]
            rest = [ring[(i + maxv - 1 + k) % n] for k in range(n - maxv + 2)]
            if not (_is_sliver(xy[piece], thin) or _is_sliver(xy[rest], thin)):
                cuts.append((_fatness(xy[piece]), piece, rest))
        if not cuts:
            return None
        _, piece, ring = max(cuts, key=lambda c: c[0])
        pieces.append(piece)
    return pieces + [ring]


def _triangles(ring: list[int], xy: np.ndarray, maxv: int, thin: float) -> list[list[int]] | None:
    """A convex polygon as triangles (fattest ears first); the vertex limit is for the merge."""
    return ear_clip(ring, xy, "fat")


def _extended(xy: np.ndarray, steiner: np.ndarray) -> np.ndarray:
    return np.vstack([xy, steiner[:, :2]]) if len(steiner) else xy


def _quality_key(polys: list[list[int]], xy: np.ndarray, thin: float) -> tuple[int, int, int]:
    """Decompositions compare by slivers (needles or thin) first, then needles (a thin polygon may
    still be widened, a needle's length stays), then polygon count."""
    bad = [p for p in polys if _is_sliver(xy[p], thin)]
    return len(bad), sum(_fatness(xy[p]) <= NEEDLE_FATNESS for p in bad), len(polys)
