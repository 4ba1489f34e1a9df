"""Ring simplification: one-sided Ramer-Douglas-Peucker on wall runs, shared borders kept as
chords or whole, and repair of the crossings simplification makes."""

from __future__ import annotations

import numpy as np

from ..boundary import FloorBoundary
from ..components import run_positions
from ..geometry import cross_vectors, distances_to_segment, ring_next, ring_prev, segments_meet, signed_area
from .rings import _crossing_edges, _dedupe
from .swept import walls_swept

# Passes of the self-intersection repair before the unsimplified section is restored.
_REPAIR_PASSES = 8
# A ring that collapses under the simplification tolerance is retried with it halved this many times.
_TOLERANCE_HALVINGS = 6
# Simplification is lopsided: traced points may lie up to the tolerance on the walkable side of a
# simplified wall edge, but at most this fraction of it beyond, toward the wall (the push below
# then moves such an edge back off the wall, so the share trades area for corners).
_OUTSIDE_SHARE = 0.3
# Simplified wall edges are chosen so that none needs pushing by more than this fraction of the
# tolerance where a passage is in front of it (longer pushes cut corners off doorways: at 1.0, the
# widest agent through a 1.6 m door dropped from 0.77 to 0.68 m), and by more than _MAX_PUSH_OPEN
# elsewhere, where a longer push costs walkable area but no passage width: a corner turning 90
# degrees round an obstacle then takes two edges instead of three or four (on nav_test 251 -> 215
# polygons, coverage of the free space on random levels 99.2% -> 99.1%).
_MAX_PUSH = 0.5
_MAX_PUSH_OPEN = 1.0
# A wall edge faces a passage when the floor's boundary lies within agent_radius of the edge moved
# this many agent radii onto its walkable side: a gap that agents up to 3 radii wide (the span of
# the clearance view) need whole.
_PASSAGE_REACH = 4.0
# Three outline points are collinear when their cross product is at most this share of the
# coordinates' size (m² per m): rounding of points traced on one cell edge.
_COLLINEAR_CROSS = 1e-12


def _simplify(
    rings: list[tuple[np.ndarray, np.ndarray]],
    tolerance: float,
    whole: frozenset | set = frozenset(),
    boundary: FloorBoundary | None = None,
) -> list[tuple | None]:
    """Per ring (points, labels): simplified (ring points, per-edge neighbour, per-point shared
    flag), or None if the ring degenerates.

    The shared flag is True for points on borders shared with other regions (they never move).
    Shared runs keep only their end points (a ring shared whole with one region keeps its corners),
    and every shared point whose top-view position is in `whole` (the corners of borders between
    area ids, and borders that must stay whole);
    wall points next to a shared run stay; wall runs between kept points are reduced with
    Ramer-Douglas-Peucker. If that makes the ring cross itself, dropped points come back on the
    crossing edges; if that fails, or the ring lost half its area, the tolerance is halved and tried
    again, and only when every try fails is every wall point kept.
    A ring still not simple after that (zero-width pinches) is dropped.
    The rings are reduced together, each try of the rings still left in one.
    """
    prepared = []
    for points, labels in rings:
        points, labels = _dedupe(points, labels)
        prepared.append(_kept_points(points, labels, whole))
    chosen: list[np.ndarray | None] = [None] * len(rings)
    pending = [k for k, ring in enumerate(prepared) if ring is not None]
    # Rings smaller than the tolerance (a pillar's hole) collapse under it: retry finer before
    # falling back to every traced point, which would cost many polygons.
    for halvings in range(_TOLERANCE_HALVINGS):
        if not pending:
            break
        reduced = _reduce([prepared[k][:3] for k in pending], tolerance / 2**halvings, boundary)
        left = []
        for k, (idx, simple) in zip(pending, reduced):
            points, full = prepared[k][0], prepared[k][3]
            if len(idx) >= 3 and simple and abs(signed_area(points[idx])) >= 0.5 * abs(signed_area(points[full])):
                chosen[k] = idx
            else:
                left.append(k)
        pending = left
    return [
        None if ring is None else _simplified(ring[0], ring[1], ring[3] if idx is None else idx, idx is None)
        for ring, idx in zip(prepared, chosen)
    ]


def _kept_points(points: np.ndarray, labels: np.ndarray, whole: frozenset | set):
    """(points, labels, keep, full) for _simplify, or None if the ring has under 3 points: keep marks
    the points every simplification keeps, full the indices of every traced point but shared
    points that may go."""
    n = len(points)
    if n < 3:
        return None
    prev_l, next_l = ring_prev(labels), ring_next(labels)
    shared = labels >= 0
    if shared.all() and (labels == labels[0]).all():
        keep = ~_collinear(points)
        traced = keep.copy()
    else:
        # Shared run ends, and the wall points next to them so the wall keeps its place up to the border.
        keep = (shared & ((labels != prev_l) | (labels != next_l))) | (~shared & ((prev_l >= 0) | (next_l >= 0)))
        if not keep.any():
            # Anchor a wall-only ring at two extreme points, which every simplification keeps:
            # the farthest from its centroid, then the farthest from that.
            first = int(np.argmax(np.hypot(*(points[:, :2] - points[:, :2].mean(axis=0)).T)))
            keep[first] = True
            keep[int(np.argmax(np.hypot(*(points[:, :2] - points[first, :2]).T)))] = True
        traced = keep | ~shared
    if whole:
        forced = shared & np.array([key in whole for key in map(tuple, points[:, :2].tolist())], dtype=bool)
        keep |= forced
        traced |= forced
    return points, labels, keep, np.flatnonzero(traced)


def _simplified(points: np.ndarray, labels: np.ndarray, idx: np.ndarray, fallback: bool):
    """(points, per-edge neighbour, per-point shared flag) of the ring kept at indices idx, or None
    when the fallback to every traced point is not a simple ring."""
    n = len(points)
    if fallback and (len(idx) < 3 or _crossing_edges(points[idx, :2]).size):
        return None  # only rings that pinch to zero width stay non-simple; they hold no area
    nb = np.full(len(idx), -1, dtype=np.int64)
    for k, (a, b) in enumerate(zip(idx, ring_next(idx))):
        span = _section(a, b, n)
        if _is_shared_run(labels, span):
            nb[k] = labels[a]
    return points[idx], nb, labels[idx] >= 0


def _reduce(
    rings: list[tuple[np.ndarray, np.ndarray, np.ndarray]], tolerance: float, boundary: FloorBoundary | None = None
) -> list[tuple[np.ndarray, bool]]:
    """Per ring (points, labels, keep): RDP over the wall runs between the kept points (of all the
    rings at once), then repair crossings: (kept indices, simple)."""
    keeps = [keep.copy() for _, _, keep in rings]
    runs = []
    for k, (points, labels, keep) in enumerate(rings):
        kept = np.flatnonzero(keep)
        for a, b in zip(kept, ring_next(kept)):
            span = _section(a, b, len(points))
            if not _is_shared_run(labels, span):
                runs.append((k, span))
    for (k, span), run_kept in zip(runs, _rdp([rings[k][0][span] for k, span in runs], tolerance, boundary)):
        keeps[k][span[run_kept]] = True
    return [_repair_crossings(points, labels, keep) for (points, labels, _), keep in zip(rings, keeps)]


def _repair_crossings(points: np.ndarray, labels: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, bool]:
    """(kept indices, simple): where edges between kept points cross, the traced point farthest
    from each crossing edge comes back, for up to _REPAIR_PASSES passes."""
    n = len(points)
    simple = False
    for _ in range(_REPAIR_PASSES):
        idx = np.flatnonzero(keep)
        bad = _crossing_edges(points[idx, :2])
        simple = not bad.size
        if simple:
            break
        for k in bad:
            a, b = idx[k], idx[(k + 1) % len(idx)]
            span = _section(a, b, n)
            if len(span) > 2 and not _is_shared_run(labels, span):
                inner = span[1:-1]
                dev = distances_to_segment(points[inner, :2], points[a, :2], points[b, :2])
                keep[inner[int(np.argmax(dev))]] = True
    return np.flatnonzero(keep), simple


def _section(a: int, b: int, n: int) -> np.ndarray:
    """Ring indices from a to b inclusive, going forward (the whole ring and back to a if a == b)."""
    return np.arange(a, a + (b - a - 1) % n + 2) % n


def _is_shared_run(labels: np.ndarray, span: np.ndarray) -> bool:
    """The whole section a..b (inclusive) borders one other region."""
    lab = labels[span]
    return bool(lab[0] >= 0 and (lab == lab[0]).all())


def _collinear(points: np.ndarray) -> np.ndarray:
    p, q, r = ring_prev(points[:, :2]), points[:, :2], ring_next(points[:, :2])
    cross = cross_vectors(q - p, r - q)
    return np.abs(cross) <= _COLLINEAR_CROSS * (1.0 + np.abs(points[:, :2]).max())


def _rdp(
    runs: list[np.ndarray],
    tolerance: float,
    boundary: FloorBoundary | None = None,
    outside_share: float = _OUTSIDE_SHARE,
) -> list[np.ndarray]:
    """Per run of points (n, 3), the indices kept by one-sided Ramer-Douglas-Peucker (the two ends
    always): points may lie `tolerance` left of a chord (the walkable side of a ring edge),
    `outside_share` of it right of it (1: symmetric, for borders between regions). With a boundary,
    a chord that comes closer to it than agent_radius by more than _MAX_PUSH_OPEN * tolerance (a
    chord across an arc of the eroded boundary), or by more than _MAX_PUSH * tolerance in front of
    a passage, is split as well, so the later push onto the walkable side stays short; and so is a
    chord that would add floor a wall lies in wholly, crossing neither the chord nor the traced
    points (swept.walls_swept), which the distance to the chord misses beyond the agent radius (at
    radius 0, everywhere): the tip of a sliver of hole round a wall of no thickness, or a chord laid
    beyond a wall's face and crossing it at neither end.
    Chords of all the runs are split a generation at a time, so the boundary is measured for a
    whole generation in one vectorised call, not once per run."""
    if not runs:
        return []
    points = np.concatenate(runs)
    p = points[:, :2]
    ends = np.cumsum([len(run) for run in runs])
    starts = ends - np.array([len(run) for run in runs])
    keep = np.zeros(len(p), dtype=bool)
    keep[starts] = keep[ends - 1] = True
    chords = [(a, b - 1) for a, b in zip(starts.tolist(), ends.tolist()) if b - a > 2]
    while chords:
        chord_a, chord_b = np.array(chords).T
        count = chord_b - chord_a - 1
        inner = np.repeat(chord_a + 1, count) + run_positions(count)
        a, b = np.repeat(chord_a, count), np.repeat(chord_b, count)
        ab = p[b] - p[a]
        right = ab[:, 0] * (p[inner, 1] - p[a, 1]) - ab[:, 1] * (p[inner, 0] - p[a, 0]) < 0
        dev = _chord_distances(p, chords, inner, a, ab, count)
        dev = np.where(right, dev / outside_share, dev)
        # Per chord its farthest point, the first of those that tie.
        most = np.maximum.reduceat(dev, np.cumsum(count) - count)
        at_most = np.flatnonzero(dev == np.repeat(most, count))
        chord = np.repeat(np.arange(len(chords)), count)[at_most]
        farthest = inner[at_most[np.concatenate(([True], chord[1:] != chord[:-1]))]].tolist()
        close = (most <= tolerance).tolist()
        split = ~np.array(close)
        if boundary is not None and any(close):
            chord_ends = np.array(chords)[close]
            a, b = p[chord_ends[:, 0]], p[chord_ends[:, 1]]
            za, zb = points[chord_ends[:, 0], 2], points[chord_ends[:, 1], 2]
            push = boundary.radius - boundary.distance(a, b, za, zb)[0]
            cut = push > _MAX_PUSH_OPEN * tolerance
            doubt = np.flatnonzero(~cut & (push > _MAX_PUSH * tolerance))
            if doubt.size:
                cut[doubt] = boundary.faces_passage(a[doubt], b[doubt], za[doubt], zb[doubt], _PASSAGE_REACH)
            # Walls the chord crosses are left to the push, which moves the edge past them.
            rest = np.flatnonzero(~cut)
            cut[rest] = walls_swept(points, chord_ends[rest, 0], chord_ends[rest, 1], boundary, across_chord=False)
            split[np.flatnonzero(close)] = cut
        next_chords = []
        for (a, b), m, cut in zip(chords, farthest, split.tolist()):
            if cut:
                keep[m] = True
                next_chords += [(c, d) for c, d in ((a, m), (m, b)) if d - c >= 2]
        chords = next_chords
    return [np.flatnonzero(keep[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]


def _chord_distances(p: np.ndarray, chords: list, inner: np.ndarray, a: np.ndarray, ab: np.ndarray, count: np.ndarray):
    """Top-view distances of the inner points of chords (a, b) of points p to their chord, as
    geometry.distances_to_segment measures them: its two dot products chord by chord (a matrix
    product, whose rounding depends on the batch), the rest for every chord's points at once.
    inner, a, ab: per inner point its index, its chord's start and the chord (b - a); count: the
    inner points per chord."""
    den = np.zeros(len(chords))
    along = []
    for k, (c, d) in enumerate(chords):
        chord = p[d] - p[c]
        den[k] = float(chord @ chord)
        along.append((p[c + 1 : d] - p[c]) @ chord)
    den = np.repeat(den, count)
    t = np.zeros(len(inner))
    np.divide(np.concatenate(along), den, out=t, where=den > 0)
    t = np.clip(t, 0.0, 1.0)
    return np.hypot(*(p[inner] - (p[a] + t[:, None] * ab)).T)


def borders_in_the_way(rings: list[tuple], tolerance: float, kept: frozenset | set) -> set[tuple[float, float]]:
    """Top-view positions of shared points to keep, so that no region's simplified ring has a chord
    of a shared border that another ring of the region crosses or lies beyond: `rings` are one
    region's (traced points, traced labels, simplified option). A shared border keeps only its ends
    (Recast keeps region portals as chords), and between two ends an L-shaped border's chord cuts a
    corner of one region off and gives it to the other, with any hole in the corner: the hole then
    crosses the outline, and the region could not be decomposed (steep hills at radius 0: 55 m² of
    floor dropped). Such a border keeps the points symmetric Ramer-Douglas-Peucker keeps of it,
    walked from its lexicographically smaller end as both regions walk it (_area_border_corners),
    or, if those are kept already, all its points."""
    options = [option for _, _, option in rings]
    if not options:
        return set()
    starts = np.concatenate([option[0][:, :2] for option in options])
    ends = np.concatenate([ring_next(option[0][:, :2]) for option in options])
    out: set[tuple[float, float]] = set()
    for traced, labels, (points, nb, _) in rings:
        if not (nb >= 0).any():
            continue
        traced, labels = _dedupe(traced, labels)
        at: dict[tuple, int] = {}
        for k, key in enumerate(map(tuple, traced[:, :2].tolist())):
            at.setdefault(key, k)
        for k in np.flatnonzero(nb >= 0).tolist():
            a, b = points[k, :2], points[(k + 1) % len(points), :2]
            ia, ib = at.get(tuple(a.tolist())), at.get(tuple(b.tolist()))
            if ia is None or ib is None:
                continue
            span = _section(ia, ib, len(traced))
            if len(span) <= 2 or not _in_the_way(traced[span, :2], starts, ends):
                continue
            run = span if tuple(traced[span[0], :2]) <= tuple(traced[span[-1], :2]) else span[::-1]
            corners = run[_rdp([traced[run]], tolerance, outside_share=1.0)[0]]
            keys = set(map(tuple, traced[corners, :2].tolist()))
            if keys <= kept:
                keys = set(map(tuple, traced[run, :2].tolist()))
            out |= keys - kept
    return out


def _in_the_way(run: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> bool:
    """Does an edge starts[i] -> ends[i] of a region's rings meet the chord between the run's ends
    (other than at them), or start strictly between the chord and the run (even-odd test)?"""
    a, b = run[0], run[-1]
    low, high = run.min(axis=0), run.max(axis=0)
    near = np.flatnonzero(
        (np.maximum(starts, ends) >= low).all(axis=1) & (np.minimum(starts, ends) <= high).all(axis=1)
    )
    if not near.size:
        return False
    s, e = starts[near], ends[near]
    at_end = (s == a).all(axis=1) | (s == b).all(axis=1) | (e == a).all(axis=1) | (e == b).all(axis=1)
    if segments_meet(a, b, s[~at_end], e[~at_end]).any():
        return True
    inside = s[~((s == a).all(axis=1) | (s == b).all(axis=1))]
    if not len(inside):
        return False
    p, q = run, ring_next(run)
    x, y = inside[:, 0:1], inside[:, 1:2]
    straddles = (p[None, :, 1] > y) != (q[None, :, 1] > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        cross_x = p[None, :, 0] + (y - p[None, :, 1]) * ((q - p)[None, :, 0] / (q - p)[None, :, 1])
    return bool((np.count_nonzero(straddles & (x < cross_x), axis=1) % 2).any())
