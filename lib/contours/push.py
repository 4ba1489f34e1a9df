"""Wall edges pushed off the floor's boundary (a conservative outline: never in the agent's band),
and the choice, per ring of a region, of the first outline that clears without crossing another."""

from __future__ import annotations

import numpy as np

from ..boundary import FloorBoundary
from ..geometry import (
    cross_vectors,
    point_line_distance,
    point_segment_distance,
    point_segment_distance_matrix,
    ring_contains,
    ring_next,
    ring_prev,
    segments_meet_matrix,
    signed_area,
)
from ..progress import SILENT, Progress
from .rings import _box, _crossing_edges, _crossing_pairs, _crossing_rings, _merge_rings, _split_at_crossings
from .swept import walls_swept
from .trace import OFF_WALL

# Wall edges closer than agent_radius less this (m, float noise) to the floor's boundary are pushed
# off it, by the shortfall and this much more, so noise does not leave them a hair inside the band.
_PUSH_MARGIN = 1e-7
# Rounds of pushing wall edges off the boundary (each moves vertices; the next one re-measures).
_PUSH_PASSES = 8
# Ring points pushed together at most (push_first_options: bounds the pushes' working arrays).
_PUSH_BATCH_POINTS = 20_000
# Two consecutive edges whose turn has a sine below this are pushed by the same amount (pushed
# apart, their nearly parallel lines would meet far away).
_PUSH_STRAIGHT = 0.5
# An edge with one end on a shared border turns about that end; its closest approach counts as at
# least this fraction of its length from the fixed end, bounding how far the free end moves.
_PUSH_MIN_LEVER = 0.25
# A spike of floor whose tip is short of the radius retreats by at most this many cells (the tip
# moves back along a narrow wedge several times as far as its edges move).
_SPIKE_RETREAT = 0.5
# An outline kept unpushed that stays within agent_radius less this many cells of the boundary is
# close enough (float noise and chords a hair inside the band).
_BAND_SLACK = 0.05
# A ring no push clears is settled onto the band's edge: wall edges deeper than this many cells
# (also the most a pruned shortcut may dip into the band) are split, for at most _SETTLE_ROUNDS
# rounds, at their closest approach (kept this fraction of the edge from its ends), and points
# moved off the walls at most _SETTLE_MOVES times, along the distance's gradient measured
# _GRADIENT_STEP (m) either side.
_SETTLE_DEPTH = 0.04
_SETTLE_ROUNDS = 6
_SETTLE_SPLIT_END = 0.1
_SETTLE_MOVES = 4
_GRADIENT_STEP = 1e-5
# Settling and pruning drop a point whose neighbours' shortcut passes within this many cells of it.
_PRUNE_OFFSET = 0.25
# A ring too close to others to be pushed off the walls alone is merged with at most this many.
_MERGE_ROUNDS = 3
# A merged ring's push may move its edges this many cells on average (more gives up floor).
_MERGE_MAX_SHIFT = 0.5
# A ring settled alone, instead of merged with the rings beside it, keeps at least this many cells
# of floor from each: the free floor of a passage half a cell wider than the agent, not a strip
# millimetres wide between two holes (which would leave a hole no bridge can reach).
_KEPT_GAP = 0.25
# A ring settled earlier and moved back to make room for another is moved this many cells from it
# (twice _KEPT_GAP: settling it again can bring its edges back towards the other ring).
_ROOM = 0.5


class _RingBoxes:
    """A region's rings with their bounding boxes, kept as rings are replaced, so finding the rings
    near one costs a comparison per ring instead of measuring every ring again."""

    def __init__(self, rings: list[np.ndarray]):
        self.rings = list(rings)
        self.boxes = np.array([_box(ring) for ring in rings]).reshape(-1, 4)

    def replace(self, k: int, ring: np.ndarray) -> None:
        self.rings[k], self.boxes[k] = ring, _box(ring)

    def absorb(self, slot: int, ring: np.ndarray, absorbed: set) -> None:
        """Ring `slot` becomes a ring merged from the rings in `absorbed` (slot among them)."""
        for j in absorbed:
            self.remove(j)
        self.replace(slot, ring)

    def remove(self, k: int) -> None:
        """Ring k is gone (merged into another): it touches nothing and is left out of the result."""
        self.rings[k], self.boxes[k] = self.rings[k][:0], (np.inf, np.inf, -np.inf, -np.inf)

    def touching(self, ring: np.ndarray, margin: float = 0.0) -> list[int]:
        """The numbers of the rings whose boxes touch the ring's, widened by margin."""
        box = _box(ring)
        touch = np.all(self.boxes[:, :2] <= box[2:] + margin, axis=1) & np.all(
            self.boxes[:, 2:] >= box[:2] - margin, axis=1
        )
        return np.flatnonzero(touch).tolist()

    def near(self, ring: np.ndarray, skip: int, margin: float = 0.0) -> list[np.ndarray]:
        """The rings but number `skip` whose boxes touch the ring's, widened by margin."""
        return [self.rings[k] for k in self.touching(ring, margin) if k != skip]


def _near(ring: np.ndarray, others: list[np.ndarray]) -> list[np.ndarray]:
    """The other rings whose top-view bounding boxes touch the ring's (all at once)."""
    if not others:
        return []
    boxes = np.array([np.concatenate([o[:, :2].min(axis=0), o[:, :2].max(axis=0)]) for o in others])
    lo, hi = ring[:, :2].min(axis=0), ring[:, :2].max(axis=0)
    touch = np.all(boxes[:, :2] <= hi, axis=1) & np.all(boxes[:, 2:] >= lo, axis=1)
    return [others[k] for k in np.flatnonzero(touch)]


def _fits_among(ring: np.ndarray, others: list[np.ndarray]) -> bool:
    """The ring neither meets any other ring's edges nor encloses another ring."""
    a, b = ring[:, :2], ring_next(ring[:, :2])
    for other in _near(ring, others):  # rings whose boxes are apart neither meet nor enclose
        c, d = other[:, :2], ring_next(other[:, :2])
        if segments_meet_matrix(a, b, c, d).any() or ring_contains(ring, other[0]):
            return False
    return True


def _push_rings(options: list[list[tuple]], standing: list, boundary: FloorBoundary, progress: Progress = SILENT):
    """A region's (rings, neighbours, unpushed): per ring the first of its options (points,
    neighbours, shared flags, or a callable giving them or None) whose wall edges, pushed off the
    boundary (_push_off_walls), clear the boundary and cross neither the ring itself (after
    _untangle) nor the other rings. If none does: for a wall-only ring, its finest option settled
    alone onto the band's edge if that keeps _KEPT_GAP cells from the rings placed so far, or if
    moving the wall-only rings placed so far back from it makes that room (_make_room); else
    the ring merged with those it crosses (_merged); else the finest option (or the first, when
    even that crosses) settled onto the band's edge (_settled), or unpushed where that crosses
    another ring. Each ring left reaching into the agent's band is listed in unpushed.
    standing: per ring, the (points, neighbours, shared flags) it counts as until it is placed (its
    simplified traced outline): a hole's fewer-corner outline sticks out past its traced one, and
    the rings before it would otherwise be simplified finer to keep clear of an outline it may
    not keep."""
    out = _RingBoxes([ring for ring, _, _ in standing])
    out_nb = [nb for _, nb, _ in standing]
    out_fixed = [fixed for _, _, fixed in standing]
    unpushed = []
    for k, ring_options in enumerate(options):
        progress.at(k / len(options))
        if not len(out.rings[k]):
            continue  # merged into another ring
        finest, first = None, None
        for option in ring_options:
            option = option() if callable(option) else option
            if option is None:
                continue
            ring, nb, fixed = option
            finest = option
            pushed, pushed_nb, cleared = _push_off_walls(ring, nb, fixed, boundary)
            first = first or option
            # Each outline judged once (_fits measures the ring against itself and the others).
            fits = cleared and _fits(pushed, k, out)
            if cleared and not fits:
                pushed, pushed_nb = _untangle(pushed, pushed_nb)
                fits = len(pushed) > 0 and _fits(pushed, k, out)
            if fits:
                out.replace(k, pushed)
                out_nb[k] = pushed_nb
                _prune_in_place(k, out, out_nb, _still_fixed(pushed, ring, fixed), boundary)
                break
        else:
            # A wall-only ring that no push clears beside the others would be merged with them,
            # across what may be a passage just wider than the agent: its finest outline settled
            # onto the band's edge keeps the passage, where that leaves floor between the rings.
            # The rings not placed yet do not count: they still have their first outline, unpushed
            # (a hole's outline with fewer corners encloses its traced one), and find theirs beside it.
            later = frozenset(range(k + 1, len(options)))
            if finest is not None and (finest[1] < 0).all():
                alone, alone_nb = _settle(finest[0], finest[1], finest[2], boundary)
                gap = _KEPT_GAP * boundary.cs
                room = (
                    {k: (alone, alone_nb)}
                    if _fits_apart(alone, k, out, gap, later)
                    else _make_room(k, alone, alone_nb, out, out_nb, gap, later, boundary)
                )
                # A tiny hole can flip.
                if room is not None and signed_area(room[k][0]) * signed_area(finest[0]) > 0:
                    for j, (ring, nb) in room.items():
                        out.replace(j, ring)
                        out_nb[j] = nb
                        if _in_band(ring, nb, boundary):
                            unpushed.append(ring)
                    continue
            merged = _merged(k, first, out, out_nb, boundary)
            if merged is not None:
                ring, slot, absorbed = merged
                out.absorb(slot, ring, absorbed)
                out_nb[slot] = np.full(len(ring), -1, dtype=np.int64)
                _prune_in_place(slot, out, out_nb, np.zeros(len(ring), dtype=bool), boundary)
            # Nothing pushes clear (the ring pinches against another): the finest outline, which
            # follows the eroded boundary closest, settled onto the band's edge if it reaches in.
            else:
                if finest is not None and _fits(finest[0], k, out):
                    out.replace(k, finest[0])
                    out_nb[k], out_fixed[k] = finest[1], finest[2]
                if _in_band(out.rings[k], out_nb[k], boundary):
                    slot, settled = k, _settled(k, out, out_nb, out_fixed, boundary)
                    if settled is not None:
                        ring, nb, slot, absorbed = settled
                        out.absorb(slot, ring, absorbed)
                        out_nb[slot] = nb
                    if _in_band(out.rings[slot], out_nb[slot], boundary):
                        unpushed.append(out.rings[slot])
                else:
                    _prune_in_place(k, out, out_nb, out_fixed[k], boundary)
    # Every ring pruned once all are placed, whichever way: a settled ring kept a wall edge 7 mm
    # long that this drops (fuzz case 8067: at max_verts_per_poly 3 a triangle on it was a sliver,
    # which the polygon stage cut off into a crack). A ring's shared points are its borders' ends.
    for k, ring in enumerate(out.rings):
        if len(ring):
            _prune_in_place(k, out, out_nb, (out_nb[k] >= 0) | (ring_prev(out_nb[k]) >= 0), boundary)
    kept = [k for k, ring in enumerate(out.rings) if len(ring)]
    return [out.rings[k] for k in kept], [out_nb[k] for k in kept], unpushed


def _in_band(ring: np.ndarray, nb: np.ndarray, boundary: FloorBoundary) -> bool:
    """Does a wall edge of the ring come closer to the floor's boundary than agent_radius less
    _BAND_SLACK cells?"""
    wall = nb < 0
    if not wall.any():
        return False
    nxt = ring_next(ring)
    dist = boundary.distance(ring[wall, :2], nxt[wall, :2], ring[wall, 2], nxt[wall, 2])[0]
    return bool((dist < boundary.radius - _BAND_SLACK * boundary.cs).any())


def _settle(
    ring: np.ndarray, nb: np.ndarray, fixed: np.ndarray, boundary: FloorBoundary
) -> tuple[np.ndarray, np.ndarray]:
    """_settle_once, measured once per ring (FloorBoundary.memo): steep hills at radius 0.1 settled
    a third of their rings twice or more."""
    key = ("settle", ring.tobytes(), nb.tobytes(), fixed.tobytes())
    if key not in boundary.memo:
        boundary.memo[key] = _settle_once(ring, nb, fixed, boundary)
    settled, settled_nb = boundary.memo[key]
    return settled.copy(), settled_nb.copy()


def _settle_once(
    ring: np.ndarray, nb: np.ndarray, fixed: np.ndarray, boundary: FloorBoundary
) -> tuple[np.ndarray, np.ndarray]:
    """(ring, neighbours): a ring that no parallel push clears (its wall edges face walls on both
    sides, as a tip of floor between two pillars does) with each wall edge that dips into the band
    split where it comes closest, and the new point and every free point in the band moved straight
    away from the nearest wall to agent_radius, but never farther than that from where it was
    first (_away_from_walls). An edge a wall crosses (_wall_gap) is split where the wall reaches
    deepest past it, however little, and the new point first moved past the wall's end. The chords
    of the band's arcs shrink fourfold per round, so a few rounds leave no edge deeper than a small
    fraction of _BAND_SLACK. Points a shortcut can then skip are dropped (_prune)."""
    xy, z = ring[:, :2], ring[:, 2]
    origin = xy  # where each point was before it moved (a new point: where it split its edge)
    reach = _reach(boundary)
    for _ in range(_SETTLE_ROUNDS):
        wall = nb < 0
        dist, t = np.full(len(xy), np.inf), np.zeros(len(xy))
        dist[wall], t[wall] = _wall_gap(xy[wall], ring_next(xy)[wall], z[wall], ring_next(z)[wall], boundary)
        # An edge a wall crosses (dist < 0) is split however little the wall reaches past it: below
        # _SETTLE_DEPTH cells of radius, `reach` is negative.
        split = np.flatnonzero((dist < reach) | (dist < 0))
        if not split.size:
            break
        edge = ring_next(xy)[split] - xy[split]
        left = np.column_stack([-edge[:, 1], edge[:, 0]]) / np.hypot(*edge.T)[:, None]
        before = origin
        xy, z, nb, fixed, added = _split_edges(xy, z, nb, fixed, split, t[split])
        # A point splitting an edge that a wall crosses moves past the wall's end first: from the
        # wall's line its distance has no direction to move it along (a traced edge can cut
        # across the end of a wall of no thickness, and no push of a sliver around it cleared).
        crossed = dist[split] < 0
        xy[np.flatnonzero(added)[crossed]] -= dist[split][crossed, None] * left[crossed]
        origin = xy.copy()
        origin[~added] = before
        xy = _away_from_walls(xy, z, ~fixed, boundary, origin)
        # A new point that could not leave the band sits where walls on both sides are closer
        # than the agent: splitting there again would only double the points, round after round.
        new = np.flatnonzero(added)
        stuck = new[boundary.point_distance(xy[new], z[new], boundary.radius) < reach]
        if stuck.size:
            keep = np.ones(len(xy), dtype=bool)
            keep[stuck] = False
            xy, origin, z, nb, fixed = xy[keep], origin[keep], z[keep], nb[keep], fixed[keep]
    return _prune(np.column_stack([xy, z]), nb, fixed, boundary, reach)


def _prune_in_place(k: int, out: _RingBoxes, out_nb: list, fixed: np.ndarray, boundary: FloorBoundary) -> None:
    """Ring k, which clears the band, without the points _prune drops, if it still fits."""
    ring, nb = _prune(out.rings[k], out_nb[k], fixed, boundary, _reach(boundary))
    if len(ring) < len(out.rings[k]) and _fits(ring, k, out):
        out.replace(k, ring)
        out_nb[k] = nb


def _reach(boundary: FloorBoundary) -> float:
    """How far from the floor's boundary a settled or pruned edge must stay: agent_radius less
    _SETTLE_DEPTH cells."""
    return boundary.radius - _SETTLE_DEPTH * boundary.cs


def _still_fixed(pushed: np.ndarray, ring: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """Per point of the pushed ring: is it one of the ring's fixed (shared) points? The push never
    moves those, so they are found bit for bit."""
    shared = {tuple(p) for p in ring[fixed, :2].tolist()}
    return np.array([tuple(p) in shared for p in pushed[:, :2].tolist()], dtype=bool)


def _prune(ring: np.ndarray, nb: np.ndarray, fixed: np.ndarray, boundary: FloorBoundary, reach: float):
    """(ring, neighbours) without the free points between two wall edges whose neighbours can be
    joined directly: the shortcut stays `reach` from the floor's boundary, passes within
    _PRUNE_OFFSET cells of the point and adds no floor a wall lies in (swept.walls_swept: below
    _SETTLE_DEPTH cells of radius `reach` is negative, and shortcuts across the tip of a sliver
    round a wall of no thickness put the wall's end inside the floor). Settling splits edges on
    straight runs too, and its nearly collinear points would leave slivers between the polygons; a
    fine outline pushed off the walls rounds each corner of the band with a point per cell, a few
    centimetres apart, which would leave needles (and a convex polygon per point where the corner
    bulges into the floor)."""
    while len(ring) > 3:
        xy, z = ring[:, :2], ring[:, 2]
        prev, nxt = ring_prev(xy), ring_next(xy)
        cand = np.flatnonzero(~fixed & (nb < 0) & (ring_prev(nb) < 0))
        cand = cand[point_line_distance(xy[cand], prev[cand], nxt[cand]) <= _PRUNE_OFFSET * boundary.cs]
        if cand.size:
            dist = boundary.distance(prev[cand], nxt[cand], ring_prev(z)[cand], ring_next(z)[cand])[0]
            cand = cand[dist >= reach]
        if cand.size:
            corner = np.stack([ring_prev(ring)[cand], ring[cand], ring_next(ring)[cand]], axis=1).reshape(-1, 3)
            ends = 3 * np.arange(len(cand))
            cand = cand[~walls_swept(corner, ends, ends + 2, boundary, across_chord=True)]
        # Points apart from each other's edges: the first of each run of neighbours.
        drop = [int(i) for k, i in enumerate(cand) if k == 0 or cand[k - 1] != i - 1][: len(ring) - 3]
        if drop and drop[-1] == len(ring) - 1 and drop[0] == 0:
            drop.pop()
        if not drop:
            break
        keep = np.ones(len(ring), dtype=bool)
        keep[drop] = False
        # A tiny ring's shortcuts can turn it inside out (a hole into floor).
        if signed_area(ring[keep]) * signed_area(ring) <= 0:
            break
        # The edge into a dropped point now runs to the point after it: a wall edge, as both were.
        ring, nb, fixed = ring[keep], nb[keep], fixed[keep]
    return ring, nb


def _away_from_walls(
    xy: np.ndarray, z: np.ndarray, free: np.ndarray, boundary: FloorBoundary, origin: np.ndarray, beyond: float = 0.0
) -> np.ndarray:
    """The points, each free one closer than agent_radius (plus `beyond`, m) to the floor's
    boundary moved straight away from its nearest wall (the distance's gradient, by central
    differences) by the shortfall; a few times, for a point between two walls. No point ends
    farther than agent_radius from its origin: a point in the band leaves it within that, and one
    that would go farther is where the band closes, and would only wander along it off its own
    floor (its height stays as it was)."""
    xy = xy.copy()
    limit = 2.0 * boundary.radius
    target = boundary.radius + beyond
    for _ in range(_SETTLE_MOVES):
        dist = boundary.point_distance(xy, z, limit)
        move = np.flatnonzero(free & (dist < target - _PUSH_MARGIN))
        if not move.size:
            break
        p, zp, h = xy[move], z[move], _GRADIENT_STEP
        steps = np.array([[h, 0.0], [-h, 0.0], [0.0, h], [0.0, -h]])
        around = boundary.point_distance((p[:, None, :] + steps[None]).reshape(-1, 2), np.repeat(zp, 4), limit).reshape(
            -1, 4
        )
        grad = np.column_stack([around[:, 0] - around[:, 1], around[:, 2] - around[:, 3]])
        norm = np.hypot(*grad.T)
        ok = norm > 0
        shortfall = target - dist[move] + 2 * _PUSH_MARGIN
        xy[move[ok]] += grad[ok] / norm[ok, None] * shortfall[ok, None]
        moved = xy - origin
        far = np.hypot(*moved.T) / boundary.radius
        xy[far > 1.0] = origin[far > 1.0] + moved[far > 1.0] / far[far > 1.0, None]
    return xy


def _fits(ring: np.ndarray, slot: int, out: _RingBoxes, skip: set | frozenset = frozenset()) -> bool:
    """Ring `slot` of a region (0: the outer ring) could be this ring: it does not cross itself, nor
    meet the region's other rings (but those in skip), nor, as a hole, enclose one."""
    if _crossing_edges(ring[:, :2]).size:
        return False
    others = [out.rings[j] for j in out.touching(ring) if j != slot and j not in skip]
    return _fits_among(ring, others) if slot else not any(_crossing_rings(ring, other) for other in others)


def _fits_apart(ring: np.ndarray, slot: int, out: _RingBoxes, gap: float, skip: frozenset) -> bool:
    """_fits, and no point of the ring comes within `gap` of another ring's edges, nor theirs of its
    (but the rings in skip)."""
    if not _fits(ring, slot, out, skip):
        return False
    for j in out.touching(ring, gap):
        if j != slot and j not in skip and len(out.rings[j]):
            other = out.rings[j][:, :2]
            if min(_closest(ring[:, :2], other), _closest(other, ring[:, :2])) < gap:
                return False
    return True


def _make_room(
    k: int, ring: np.ndarray, nb: np.ndarray, out: _RingBoxes, out_nb: list, gap: float, later: frozenset, boundary
):
    """{slot: (ring, neighbours)}: ring k's settled outline (ring, nb) and the wall-only rings
    placed so far that come within `gap` of it, each with its points near the others moved back
    from them (_retreat) and settled again, so that all keep `gap` apart; None if that does not do
    it. A settled outline can keep points out in a narrow passage's free space, on the band of the
    walls across (a ring settled before its neighbour was placed does not see it): with the
    neighbour beside it, the passage would close."""
    near = [
        j for j in out.touching(ring, gap) if j != k and j not in later and len(out.rings[j]) and (out_nb[j] < 0).all()
    ]
    if not near:
        return None
    back = _ROOM * boundary.cs
    for j in near:
        ring = _retreat(ring, out.rings[j], back)
    room = {k: _settle(ring, nb, np.zeros(len(ring), dtype=bool), boundary)}
    ring = room[k][0]
    for j in near:
        moved = _retreat(out.rings[j], ring, back)
        if not np.array_equal(moved, out.rings[j]):
            room[j] = _settle(moved, out_nb[j], np.zeros(len(moved), dtype=bool), boundary)
            if signed_area(room[j][0]) * signed_area(out.rings[j]) <= 0:
                return None
    saved = {j: out.rings[j] for j in room if j != k}
    for j in saved:
        out.replace(j, room[j][0])
    fits = _fits_apart(ring, k, out, gap, later) and all(
        _fits_apart(room[j][0], j, out, gap, later | {k}) for j in saved
    )
    for j, old in saved.items():
        out.replace(j, old)
    return room if fits else None


def _retreat(ring: np.ndarray, other: np.ndarray, gap: float) -> np.ndarray:
    """The ring with each point nearer than `gap` to the other ring's edges moved straight away
    from the nearest of them, to `gap` from it."""
    ring = ring.copy()
    xy, a, b = ring[:, :2], other[:, :2], ring_next(other[:, :2])
    edge = point_segment_distance_matrix(xy, a, b).argmin(axis=1)
    dist, t = point_segment_distance(xy, a[edge], b[edge])
    near = np.flatnonzero((dist < gap) & (dist > 0))
    foot = a[edge[near]] + t[near, None] * (b[edge[near]] - a[edge[near]])
    xy[near] = foot + (xy[near] - foot) * (gap / dist[near])[:, None]
    return ring


def _closest(points: np.ndarray, ring: np.ndarray) -> float:
    """The least distance from the points to the ring's edges."""
    return float(point_segment_distance_matrix(points, ring, ring_next(ring)).min())


def _merged(k: int, option: tuple | None, out: _RingBoxes, out_nb: list, boundary: FloorBoundary):
    """(ring, its slot, the slots it replaces) for a wall-only ring k that cannot be pushed off the
    walls on its own because a wall-only ring of the region is too close (the floor between them is
    narrower than the agent): its outline `option` pushed once and the rings that crosses merged
    into one (_merge_rings) and pushed again, up to _MERGE_ROUNDS times; None if the result still
    does not clear and fit. One push, as the first one of _push_off_walls, measures each edge from
    where it was traced; later ones push an edge that faces a narrow gap into the wall across."""
    if option is None or (option[1] >= 0).any():
        return None
    ring, nb, fixed = option
    ring, merged = _push_off_walls(ring, nb, fixed, boundary, passes=1)[0], {k}
    for _ in range(_MERGE_ROUNDS):
        union = _merge_crossed(ring, merged, out, out_nb)
        if union is None:
            return None
        slot = min(merged)
        walls = np.full(len(union), -1, dtype=np.int64)
        ring, walls, cleared = _push_off_walls(union, walls, np.zeros(len(union), dtype=bool), boundary)
        fits = cleared and _fits(ring, slot, out, merged)
        if cleared and not fits:
            ring, walls = _untangle(ring, walls)
            fits = len(ring) > 0 and _fits(ring, slot, out, merged)
        if not len(ring) or _gives_up(union, ring, boundary):
            return None
        if fits:
            return ring, slot, merged
    return None


def _gives_up(ring: np.ndarray, pushed: np.ndarray, boundary: FloorBoundary) -> bool:
    """Did pushing the ring give up more floor than a strip _MERGE_MAX_SHIFT cells wide along it?
    Pushed lines of a ring with many notches (the holes of a colonnade merged across its pinches)
    can meet far out, cutting a wide swathe of floor away while clearing the walls."""
    edges = ring_next(ring[:, :2]) - ring[:, :2]
    strip = _MERGE_MAX_SHIFT * boundary.cs * float(np.hypot(*edges.T).sum())
    return abs(signed_area(pushed) - signed_area(ring)) > strip


def _merge_crossed(ring: np.ndarray, merged: set, out: _RingBoxes, out_nb: list) -> np.ndarray | None:
    """The ring merged (_merge_rings) with the first wall-only ring of the region it crosses that
    merges, which joins `merged`; None if there is none."""
    for j in out.touching(ring):
        if j not in merged and (out_nb[j] < 0).all() and _crossing_rings(ring, out.rings[j]):
            union = _merge_rings(ring, out.rings[j])
            if union is not None:
                merged.add(j)
                return union
    return None


def _settled(k: int, out: _RingBoxes, out_nb: list, out_fixed: list, boundary: FloorBoundary):
    """(ring, neighbours, its slot, the slots it replaces) for ring k, which no push clears: its
    outline settled onto the band's edge (_settle); if that crosses wall-only rings of the region (a
    hole whose band nearly touches the walls around it), merged with them and settled again, up to
    _MERGE_ROUNDS times. None if the result still does not fit or turns the other way."""
    (ring, nb), merged = _settle(out.rings[k], out_nb[k], out_fixed[k], boundary), {k}
    turn = np.sign(signed_area(out.rings[k]))
    for _ in range(_MERGE_ROUNDS + 1):
        # A tiny hole's points moved off the walls can pass each other: a hole turned into floor.
        if np.sign(signed_area(ring)) != turn:
            return None
        if _fits(ring, min(merged), out, merged):
            return ring, nb, min(merged), merged
        union = _merge_crossed(ring, merged, out, out_nb) if (nb < 0).all() else None
        if union is None:
            return None
        ring, nb = _settle(union, np.full(len(union), -1, dtype=np.int64), np.zeros(len(union), dtype=bool), boundary)
    return None


def _untangle(ring: np.ndarray, nb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A pushed ring with the loops cut off where its wall edges cross: the two sides of a pocket
    narrower than the push pass each other and leave a loop turning the other way, which is floor
    given up. Empty when edges of a shared border cross, or the ring splits into several loops
    turning its way (a pinch, not a pocket)."""
    none = (ring[:0], nb[:0])
    i, j = _crossing_pairs(ring[:, :2])
    if len(i) == 0 or (nb[i] >= 0).any() or (nb[j] >= 0).any():
        return none
    turn = np.sign(signed_area(ring))
    kept = [(p, lab) for p, lab in _split_at_crossings(ring, nb) if np.sign(signed_area(p)) == turn]
    if len(kept) != 1 or _crossing_edges(kept[0][0][:, :2]).size:
        return none
    return kept[0]


def _wall_gap(a: np.ndarray, b: np.ndarray, za: np.ndarray, zb: np.ndarray, boundary: FloorBoundary):
    """(gap, where) of edges a-b to the floor's boundary: its distance (FloorBoundary.distance), but
    for an edge a wall crosses, less than 0 by how far the wall reaches past it (its end, where the
    outline was cut short of it) and trace.OFF_WALL cells more, with where that reach is deepest.
    A crossing edge is then pushed clear of the wall in one go, and at radius 0 at all: by distance
    (0) it would move by agent_radius a pass, and not at all at radius 0, where a path then went
    through the wall near its end."""
    gap, where = boundary.distance(a, b, za, zb)
    touching = np.flatnonzero(gap == 0)
    depth, deepest = boundary.overreach(a[touching], b[touching], za[touching], zb[touching])
    crossed = touching[depth > 0]
    gap[crossed] = -(depth[depth > 0] + OFF_WALL * boundary.cs)
    where[crossed] = deepest[depth > 0]
    return gap, where


def _push_off_walls(
    ring: np.ndarray, nb: np.ndarray, fixed: np.ndarray, boundary: FloorBoundary, passes: int = _PUSH_PASSES
):
    """_push_passes run to the end, once per ring and number of passes (FloorBoundary.memo)."""
    key = _push_key(ring, nb, fixed, passes)
    if key not in boundary.memo:
        boundary.memo[key] = _pushed_together([_push_passes(ring, nb, fixed, boundary, passes)], boundary)[0]
    pushed, pushed_nb, cleared = boundary.memo[key]
    return pushed.copy(), pushed_nb.copy(), cleared


def _push_key(ring: np.ndarray, nb: np.ndarray, fixed: np.ndarray, passes: int) -> tuple:
    """The key of a push's result in FloorBoundary.memo."""
    return ("push", passes, ring.tobytes(), nb.tobytes(), fixed.tobytes())


def push_first_options(options: list[list[list]], boundary: FloorBoundary) -> None:
    """Push every ring's first outline to try off the walls (options: per outer ring of a region,
    per member ring, its outlines as _push_rings takes them), all regions' at once, into
    FloorBoundary.memo, where _push_rings finds them: each pass measures the edges of every ring
    still pushed in one call, instead of one call per ring and pass. A batch of rings of about
    _PUSH_BATCH_POINTS points at a time: each push holds its working arrays until it ends."""
    pushes: dict = {}
    points = 0
    for region in options:
        for ring_options in region:
            if ring_options and not callable(ring_options[0]):
                ring, nb, fixed = ring_options[0]
                key = _push_key(ring, nb, fixed, _PUSH_PASSES)
                if key not in boundary.memo and key not in pushes:
                    pushes[key] = _push_passes(ring, nb, fixed, boundary, _PUSH_PASSES)
                    points += len(ring)
                if points >= _PUSH_BATCH_POINTS:
                    boundary.memo.update(zip(pushes, _pushed_together(list(pushes.values()), boundary)))
                    pushes, points = {}, 0
    boundary.memo.update(zip(pushes, _pushed_together(list(pushes.values()), boundary)))


def _pushed_together(pushes: list, boundary: FloorBoundary) -> list[tuple]:
    """The results of _push_passes generators, run in step: the wall edges all of them ask about in
    a pass are measured (_wall_gap) in one call."""
    results: list = [None] * len(pushes)
    asked = {}
    for k, push in enumerate(pushes):
        try:
            asked[k] = next(push)
        except StopIteration as done:
            results[k] = done.value
    while asked:
        edges = [np.concatenate(part) for part in zip(*asked.values())]
        gap, where = _wall_gap(edges[0], edges[1], edges[2], edges[3], boundary)
        ends = np.cumsum([len(a) for a, _, _, _ in asked.values()])[:-1]
        answers = zip(asked, np.split(gap, ends), np.split(where, ends))
        asked = {}
        for k, push_gap, push_where in answers:
            try:
                asked[k] = pushes[k].send((push_gap, push_where))
            except StopIteration as done:
                results[k] = done.value
    return results


def _push_passes(ring: np.ndarray, nb: np.ndarray, fixed: np.ndarray, boundary: FloorBoundary, passes: int):
    """A generator (run by _pushed_together): it yields the wall edges (a, b, za, zb) it needs
    measured, is sent their (gap, where) as _wall_gap gives them, and returns
    (ring, neighbours, cleared) with every wall edge (nb < 0) at least agent_radius from the
    floor's boundary; cleared is False when the passes ran out before that held.

    Edges that come closer are pushed parallel onto the walkable side (left of the edge) by the
    shortfall: a tangent to the eroded boundary's arcs instead of a chord across them. A free
    vertex moves to where its two edges' lines meet after the push; shared points (fixed) never
    move, and an edge with one fixed end turns about it. An edge between two fixed points (a wall
    between two borders, as where an area's border meets an obstacle's band) cannot move: it is
    split at its closest approach, and its halves turn about their fixed ends. An edge the push
    would turn over is dropped instead (its lines' neighbours meet directly). Repeated until every
    wall edge clears, at most `passes` times.
    """
    if not (nb < 0).any():
        return ring, nb, True
    xy, z = ring[:, :2].copy(), ring[:, 2].copy()
    cleared = False
    for _ in range(passes):
        wall, fixed_next = nb < 0, ring_next(fixed)
        a, b = xy, ring_next(xy)
        dist, t = np.full(len(xy), np.inf), np.zeros(len(xy))
        dist[wall], t[wall] = yield a[wall], b[wall], z[wall], ring_next(z)[wall]
        short = wall & (dist < boundary.radius - _PUSH_MARGIN)
        if not short.any():
            cleared = True
            break
        pinned = np.flatnonzero(short & fixed & fixed_next)
        if pinned.size:
            # Measured again in the next pass, with a free point on each.
            xy, z, nb, fixed, _ = _split_edges(xy, z, nb, fixed, pinned, t[pinned])
            continue
        push = np.where(short, boundary.radius - dist + 2 * _PUSH_MARGIN, 0.0)
        at_start = np.where(fixed_next & ~fixed, push / np.maximum(1.0 - t, _PUSH_MIN_LEVER), push)
        at_end = np.where(fixed & ~fixed_next, push / np.maximum(t, _PUSH_MIN_LEVER), push)
        edge = b - a
        normal = np.column_stack([-edge[:, 1], edge[:, 0]]) / np.hypot(*edge.T)[:, None]
        # Vertex k joins edge k-1 (in) and edge k (out): it moves by d with n_in.d = o_in, n_out.d = o_out.
        n1, n2 = ring_prev(normal), normal
        o1, o2 = ring_prev(at_end), at_start
        sine = cross_vectors(n1, n2)
        cosine = np.einsum("ij,ij->i", n1, n2)
        straight = np.abs(sine) < _PUSH_STRAIGHT
        with np.errstate(divide="ignore", invalid="ignore"):
            general = np.column_stack([o1 * n2[:, 1] - o2 * n1[:, 1], n1[:, 0] * o2 - n2[:, 0] * o1]) / sine[:, None]
            even = np.maximum(o1, o2)[:, None] * (n1 + n2) / (1.0 + cosine)[:, None]
        spike = straight & (cosine <= 0)
        d = np.where((straight & ~spike)[:, None], even, general)
        # At a fold back (a spike), the pushed lines meet back along a walkable spike (its tip
        # retreats) but far out along a wall spike (it would grow): only a short retreat is taken.
        with np.errstate(invalid="ignore"):
            retreats = (np.einsum("ij,ij->i", d, edge) > 0) & (np.hypot(*d.T) <= _SPIKE_RETREAT * boundary.cs)
        d[fixed | ((o1 == 0) & (o2 == 0)) | (spike & ~retreats)] = 0.0
        moved = xy + d
        after = ring_next(moved) - moved
        flipped = np.flatnonzero(np.einsum("ij,ij->i", after, edge) <= 0)
        if flipped.size == 0:
            # A spike's tip retreats along its two edges, and so down (or up) the floor under them.
            back = spike & (d != 0).any(axis=1)
            if back.any():
                along = np.einsum("ij,ij->i", d[back], edge[back]) / np.einsum("ij,ij->i", edge[back], edge[back])
                z[back] += np.clip(along, 0.0, 1.0) * 0.5 * (ring_next(z)[back] + ring_prev(z)[back] - 2 * z[back])
            xy = moved
            continue
        # Drop one free end of each edge that would turn over, then measure again.
        drop = np.zeros(len(xy), dtype=bool)
        drop[np.where(fixed[flipped], (flipped + 1) % len(xy), flipped)] = True
        drop &= ~fixed
        if not drop.any() or len(xy) - drop.sum() < 3:
            break
        nb = np.where(drop | ring_next(drop), -1, nb)[~drop]
        xy, z, fixed = xy[~drop], z[~drop], fixed[~drop]
    return np.column_stack([xy, z]), nb, cleared


def _split_edges(xy: np.ndarray, z: np.ndarray, nb: np.ndarray, fixed: np.ndarray, edges: np.ndarray, t: np.ndarray):
    """(xy, z, neighbours, fixed, added) with a free point on each of the edges, at fraction t along
    it (kept _SETTLE_SPLIT_END of the edge from its ends); both halves keep the edge's neighbour.
    added marks the new points."""
    at = np.clip(t, _SETTLE_SPLIT_END, 1.0 - _SETTLE_SPLIT_END)
    new_xy = xy[edges] + at[:, None] * (ring_next(xy)[edges] - xy[edges])
    new_z = z[edges] + at * (ring_next(z)[edges] - z[edges])
    order = np.argsort(np.r_[np.arange(len(xy)), edges + 0.5], kind="stable")
    return (
        np.r_[xy, new_xy][order],
        np.r_[z, new_z][order],
        np.r_[nb, nb[edges]][order],
        np.r_[fixed, np.zeros(len(edges), dtype=bool)][order],
        order >= len(xy),
    )
