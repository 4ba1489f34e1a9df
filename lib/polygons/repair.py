"""Repairs of the decomposed polygons: slivers widened, T-junctions welded, straight vertices and
thin wall corners dropped."""

from __future__ import annotations

import heapq
import math
from collections.abc import Set as AbstractSet

import numpy as np

from ..geometry import (
    NONZERO_DIVISOR,
    convex_hull,
    cross_many,
    cross_vectors,
    in_triangle,
    is_straight,
    min_width,
    narrower_than,
    segments_meet_matrix,
    signed_area,
    turn,
)
from .decompose import _decompose, _split_convex
from .merge import _is_sliver, _union_ring

# A vertex closer than this (m, in 3D) to another polygon's edge, and more than _INSIDE_EDGE of
# the edge's length from its ends, lies inside that edge (a T-junction to weld).
_ON_EDGE = 1e-7


_INSIDE_EDGE = 1e-6
# A reflex ring corner beside a wall edge shorter than a sliver's width goes where its triangle
# is narrower than this fraction of that width (_trim_thin_corners): every triangle on that edge
# reaches a far vertex, a sliver the polygon stage would cut off into a crack.
_SHORT_EDGE_REFLEX = 0.5
# Two edges of a sliver face each other (_facing) when their directions are this close to opposite
# (cosine): its long sides. Edges meeting at a wider angle leave a notch, not a crack, once it goes.
_BACK_TO_BACK = 0.999


def _widen_slivers(
    polys: list[list[int]],
    xy: np.ndarray,
    maxv: int,
    thin: float,
    shared: AbstractSet[tuple[int, int]],
    min_lobe: float,
) -> list[list[int]]:
    """One region's polygons with slivers (_is_sliver) repaired where that is possible.

    A sliver is merged with a neighbour (across its longest edges first: a sliver lies along its
    longest edge), or with all of them, and the group is decomposed again over the same outline,
    so no other polygon sees a change; kept if that leaves no sliver. One that no regrouping
    repairs, that is narrower than `thin` and lies on the floor's edge (a spike of the outline, or
    the floor between two walls all but touching) is cut off: its neighbours see a wall there, so
    the slivers left among them are tried again; but not where two polygons across it would then
    face each other across its width (_facing: a crack no path crosses), unless it goes together
    with a lobe of floor smaller than `min_lobe` (region_min_area) that hangs on it alone. One with
    an edge on a border shared with another region (`shared`: directed edges) stays: the region
    across still has that edge, and would face a wall a hair away from its own."""
    current: list[list[int] | None] = list(polys)
    owner = {(poly[k - 1], poly[k]): p for p, poly in enumerate(polys) for k in range(len(poly))}
    pending = [p for p, poly in enumerate(polys) if _is_sliver(xy[poly], thin)]
    while pending:
        outcomes = {s: _repair_sliver(s, current, owner, xy, maxv, thin, shared, min_lobe) for s in pending}
        pending = [s for s, outcome in outcomes.items() if outcome == "kept"] if "cut" in outcomes.values() else []
    return [poly for poly in current if poly is not None]


def _repair_sliver(
    s: int,
    current: list[list[int] | None],
    owner: dict,
    xy: np.ndarray,
    maxv: int,
    thin: float,
    shared: AbstractSet[tuple[int, int]],
    min_lobe: float,
) -> str:
    """Regroup or cut off polygon s if it is still a sliver (_widen_slivers), updating `current`
    and `owner` (directed edge -> polygon); "repaired", "cut" or "kept"."""
    poly = current[s]
    if poly is None or not _is_sliver(xy[poly], thin):
        return "repaired"  # a repair of an earlier sliver took this one in
    edges = [(poly[k - 1], poly[k]) for k in range(len(poly))]
    edges.sort(key=lambda e: -float(np.hypot(*(xy[e[1]] - xy[e[0]]))))
    groups = [[n] for n in (owner.get((b, a)) for a, b in edges) if n is not None]
    if len(groups) > 1:
        groups.append([g[0] for g in groups])
    for group in groups:
        pieces = _recut([poly] + [_live(current, n) for n in group], xy, maxv, thin)
        if pieces is not None:
            _place(pieces, [s, *group], current, owner)
            return "repaired"
    # Cut off only at the floor's edge (a spike, a pinch between walls): one with polygons of the
    # region all round would leave a hole inside the floor, one on a shared border a crack.
    on_edge = any(owner.get((b, a)) is None for a, b in edges)
    if not (narrower_than(xy[poly], thin) and on_edge) or any(e in shared for e in edges):
        return "kept"
    # Cut off alone where no two polygons across it would face each other; else together with a
    # lobe of floor smaller than min_lobe that hangs on it (fuzz case 6827: a spike of floor).
    lobes: list[list[int] | None] = [[]] + [
        _lobe(s, n, current, owner, xy, shared, min_lobe) for n in dict.fromkeys(owner.get((b, a)) for a, b in edges)
    ]
    for lobe in (lobe for lobe in lobes if lobe is not None):
        if not _facing([(a, b) for a, b in edges if owner.get((b, a)) not in lobe], owner, xy, thin):
            _place([], [s, *lobe], current, owner)  # no pieces: the slots are emptied
            return "cut"
    return "kept"


def _lobe(
    s: int,
    n: int | None,
    current: list[list[int] | None],
    owner: dict,
    xy: np.ndarray,
    shared: AbstractSet[tuple[int, int]],
    most: float,
) -> list[int] | None:
    """The polygons reached from n without crossing s or a shared border, if n is one and they
    hold less area than `most`: floor that hangs on s alone; else None."""
    if n is None:
        return None
    seen, stack, area = {n}, [n], 0.0
    while stack:
        poly = _live(current, stack.pop())
        area += abs(signed_area(xy[poly]))
        if area >= most:
            return None
        for k in range(len(poly)):
            if (poly[k - 1], poly[k]) in shared:
                return None
            q = owner.get((poly[k], poly[k - 1]))
            if q is not None and q != s and q not in seen:
                seen.add(q)
                stack.append(q)
    return sorted(seen)


def _facing(edges: list[tuple[int, int]], owner: dict, xy: np.ndarray, thin: float) -> bool:
    """Do two edges of a sliver with polygons across them run back to back within `thin` of each
    other (its two long sides)? Cut off, it would leave those polygons facing each other across
    its width, over more than `thin`: a crack (fuzz cases 6827, 8890: a triangle whose longest
    edge has a polygon across, and one of its others). A strip's two ends run opposite ways too,
    but its length apart; two edges at a corner of a triangle (49706) meet at an angle."""
    across = [(xy[a], xy[b]) for a, b in edges if owner.get((b, a)) is not None]
    for i, (a, b) in enumerate(across):
        u = b - a
        length = float(np.hypot(*u))
        if length == 0:
            continue
        u = u / length
        for c, d in across[i + 1 :]:
            t = np.array([np.dot(c - a, u), np.dot(d - a, u)])
            off = np.abs(cross_vectors(u, np.array([c - a, d - a])))
            facing = np.dot(d - c, u) < -_BACK_TO_BACK * float(np.hypot(*(d - c)))
            if facing and min(t.max(), length) - max(t.min(), 0.0) > thin and off.max() < thin:
                return True
    return False


def _regrouped_across_borders(
    polys: list[list[int]], regions: list[int], areas: list[int], xy: np.ndarray, maxv: int, thin: float
) -> tuple[list[list[int]], list[int], list[int]]:
    """(polygons, region of each, area of each) with each sliver left on a border between two regions
    regrouped with the polygon across that border (`_recut`, as a region regroups its own). Its
    region's own regrouping cannot do this (the border's edges must stay), and a region's wall
    coming within millimetres of its border with another region leaves floor that thin along it
    (fuzz case 23145: a strip of floor under a ramp, 5 mm wide at its tip; 37228 the same where
    two area ids meet). The pieces take the region and area of the polygon across: a
    sliver is narrower than a twentieth of a cell, and an area's border is placed to a cell.
    One that no regrouping repairs is cut off if it lies on the floor's edge and no two of its
    edges with polygons across run opposite ways (_facing; 44679, at three vertices per polygon:
    a triangle along a wall): the polygons across it then see a wall where it was, not each other
    across a crack."""
    current: list[list[int] | None] = list(polys)
    regions, areas = list(regions), list(areas)
    owner = {(poly[k - 1], poly[k]): p for p, poly in enumerate(polys) for k in range(len(poly))}
    changed = True
    while changed:  # a regrouping can bring another sliver to a border: every change removes one
        changed = False
        for s in [p for p, poly in enumerate(current) if poly is not None and _is_sliver(xy[poly], thin)]:
            changed |= _sliver_across_border(s, current, regions, areas, owner, xy, maxv, thin)
    kept = [p for p, poly in enumerate(current) if poly is not None]
    return [_live(current, p) for p in kept], [regions[p] for p in kept], [areas[p] for p in kept]


def _sliver_across_border(
    s: int,
    current: list[list[int] | None],
    regions: list[int],
    areas: list[int],
    owner: dict,
    xy: np.ndarray,
    maxv: int,
    thin: float,
) -> bool:
    """Regroup sliver s with a polygon of another region across one of its edges (longest first),
    or cut it off (_regrouped_across_borders), updating the lists and `owner`; whether it did."""
    poly = current[s]
    if poly is None or not _is_sliver(xy[poly], thin):
        return False
    edges = sorted(((poly[k - 1], poly[k]) for k in range(len(poly))), key=lambda e: -math.dist(xy[e[0]], xy[e[1]]))
    others = [n for n in (owner.get((b, a)) for a, b in edges) if n is not None and regions[n] != regions[s]]
    if not others:
        return False  # its region's own repair (_widen_slivers) has had it
    for n in others:
        pieces = _recut([poly, _live(current, n)], xy, maxv, thin)
        if pieces is not None:
            slots = _place(pieces, [s, n], current, owner)
            regions.extend([regions[n]] * (len(current) - len(regions)))
            areas.extend([areas[n]] * (len(current) - len(areas)))
            for slot in slots:
                regions[slot], areas[slot] = regions[n], areas[n]
            return True
    on_edge = any(owner.get((b, a)) is None for a, b in edges)
    if on_edge and narrower_than(xy[poly], thin) and not _facing(edges, owner, xy, thin):
        _place([], [s], current, owner)
        return True
    return False


def _recut(group: list[list[int]], xy: np.ndarray, maxv: int, thin: float) -> list[list[int]] | None:
    """Adjacent polygons' union decomposed again, or None unless that leaves no sliver and keeps
    every edge of the union's outline (a vertex skipped would be a T-junction; the polygons around
    see no change)."""
    ring = _union_ring(group)
    found = None if ring is None else _decompose([ring], xy, maxv, thin)
    if ring is None or found is None:
        return None
    pieces = found[0]
    outline = {(ring[k - 1], ring[k]) for k in range(len(ring))}
    if not outline <= {(piece[k - 1], piece[k]) for piece in pieces for k in range(len(piece))}:
        return None
    return None if any(_is_sliver(xy[piece], thin) for piece in pieces) else pieces


def _place(pieces: list[list[int]], slots: list[int], current: list[list[int] | None], owner: dict) -> list[int]:
    """Put the pieces in place of the polygons in these slots (new slots at the end of `current`
    for pieces beyond them; slots left over stay empty), updating `owner` (directed edge ->
    polygon); the slots the pieces took."""
    extra = max(len(pieces) - len(slots), 0)
    slots = [*slots, *range(len(current), len(current) + extra)]
    current.extend([None] * extra)
    for slot in slots:
        old = current[slot] or []
        for k in range(len(old)):
            del owner[(old[k - 1], old[k])]
        current[slot] = None
    for slot, piece in zip(slots, pieces):
        current[slot] = piece
        for k in range(len(piece)):
            owner[(piece[k - 1], piece[k])] = slot
    return slots[: len(pieces)]


def _weld_t_junctions(
    polys: list[list[int]], xyz: np.ndarray, maxv: int, thin: float
) -> tuple[list[list[int]], list[int]]:
    """(polygons, the polygon each came from) with every T-junction welded: where polygons on one
    side of a line end at a vertex strictly inside an edge of a polygon on the other side (a
    decomposition that cut a chord through a vertex straight to float noise), that vertex is
    inserted into the edge, so the two sides share it. A polygon the insertion takes over maxv
    vertices is cut by chords (_split_convex); one that cannot be is left as it was."""
    directed = {(poly[k - 1], poly[k]) for poly in polys for k in range(len(poly))}
    unpaired = [(p, k, poly[k - 1], poly[k]) for p, poly in enumerate(polys) for k in range(len(poly))]
    unpaired = [(p, k, u, v) for p, k, u, v in unpaired if (v, u) not in directed]
    if not unpaired:
        return polys, list(range(len(polys)))
    along: dict[int, list[int]] = {}  # vertex -> the other ends of its unpaired edges
    for _, _, u, v in unpaired:
        along.setdefault(u, []).append(v)
        along.setdefault(v, []).append(u)
    ends = np.array(sorted(along), dtype=np.int64)
    ends = ends[np.argsort(xyz[ends, 0], kind="stable")]
    end_x = xyz[ends, 0]
    inserts: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for p, k, u, v in unpaired:
        a, d = xyz[u], xyz[v] - xyz[u]
        length_sq = float(d @ d)
        if length_sq <= _ON_EDGE**2:
            continue
        lo, hi = np.searchsorted(end_x, [min(a[0], a[0] + d[0]) - _ON_EDGE, max(a[0], a[0] + d[0]) + _ON_EDGE])
        cand = ends[lo:hi]
        rel = xyz[cand] - a
        t = rel @ d / length_sq
        off = np.linalg.norm(rel - np.outer(t, d), axis=1)
        inside = (t > _INSIDE_EDGE) & (t < 1 - _INSIDE_EDGE) & (off < _ON_EDGE)
        for w, tw in zip(cand[inside].tolist(), t[inside].tolist()):
            # Only where an unpaired edge at the vertex runs along this one (not a mere touch).
            rel_o = xyz[along[w]] - a
            if (np.linalg.norm(rel_o - np.outer(rel_o @ d / length_sq, d), axis=1) < _ON_EDGE).any():
                inserts.setdefault((p, k), []).append((tw, w))
    if not inserts:
        return polys, list(range(len(polys)))
    out, source = [], []
    for p, poly in enumerate(polys):
        welded = []
        for k, v in enumerate(poly):
            welded += [w for _, w in sorted(inserts.get((p, k), []))]
            welded.append(v)
        pieces = [welded] if len(welded) <= maxv else _split_convex(welded, xyz[:, :2], maxv, thin) or [poly]
        out += pieces
        source += [p] * len(pieces)
    return out, source


def _live(polys: list[list[int] | None], p: int) -> list[int]:
    """Polygon p, which an edge owner names and so is still there."""
    poly = polys[p]
    assert poly is not None
    return poly


def _drop_straight_vertices(polys: list[list[int]], xy: np.ndarray, max_edge_len: float) -> list[list[int]]:
    """The polygons without the straight vertices no polygon needs.

    A vertex is needed where some polygon turns at it, or where the two edges of a polygon that
    meet at it have different neighbours (a portal or a wall starts there): dropping it there would
    leave a T-junction or merge a wall edge into a portal. It is also needed between two wall
    edges that dropping it would join into one longer than max_edge_len. Elsewhere it is dropped
    from every polygon at once, so shared edges stay shared."""
    owner = {(poly[k - 1], poly[k]): p for p, poly in enumerate(polys) for k in range(len(poly))}
    pts = xy.tolist()
    straight, needed = set(), set()
    for p, poly in enumerate(polys):
        n = len(poly)
        for k, v in enumerate(poly):
            a, b = poly[k - 1], poly[(k + 1) % n]
            if is_straight(pts[a], pts[v], pts[b]) and owner.get((v, a)) == owner.get((b, v)):
                straight.add((p, v))
            else:
                needed.add(v)
    drop = {(p, v) for p, v in straight if v not in needed}
    if not drop:
        return polys
    out = []
    for p, poly in enumerate(polys):
        on_wall = [owner.get((v, poly[k - 1])) is None for k, v in enumerate(poly)]
        dropped = _keep_walls_short(poly, [(p, v) in drop for v in poly], on_wall, xy, max_edge_len)
        kept = [v for v, gone in zip(poly, dropped) if not gone]
        out.append(kept if len(kept) >= 3 else poly)
    return out


def _keep_walls_short(
    ring: list[int], drop: list[bool], on_wall: list[bool], xy: np.ndarray, max_edge_len: float
) -> list[bool]:
    """`drop` (per vertex of `ring`) less the wall vertices (on_wall: between two wall edges)
    whose dropping would join wall edges into one longer than max_edge_len (0: no limit)."""
    if max_edge_len <= 0 or all(drop) or not any(d and w for d, w in zip(drop, on_wall)):
        return drop
    drop, n = list(drop), len(ring)
    start = drop.index(False)
    last = ring[start]
    for k in range(start + 1, start + n):
        i = k % n
        if drop[i] and on_wall[i] and math.dist(xy[last], xy[ring[(i + 1) % n]]) > max_edge_len:
            drop[i] = False
        if not drop[i]:
            last = ring[i]
    return drop


def _drop_free_collinear(
    idx: list[int], nb: np.ndarray, xy: np.ndarray, uses: np.ndarray, max_edge_len: float
) -> list[int]:
    """Remove straight-angle vertices between two wall edges that nothing else uses, unless that
    would join them into a wall edge longer than max_edge_len.

    Such vertices only cost polygon vertex budget; vertices on shared borders (or used by another
    ring) must stay, or the neighbour region would see a T-junction.
    """
    n = len(idx)
    if n <= 3 or len(nb) != n:
        return idx
    drop = []
    for i in range(n):
        a, v, b = idx[i - 1], idx[i], idx[(i + 1) % n]
        free = nb[i - 1] == -1 and nb[i] == -1 and uses[v] == 1
        drop.append(free and turn(xy[a], xy[v], xy[b]) == 0 and np.dot(xy[v] - xy[a], xy[b] - xy[v]) > 0)
    drop = _keep_walls_short(idx, drop, [True] * n, xy, max_edge_len)
    return [v for v, gone in zip(idx, drop) if not gone]


def _trim_thin_corners(
    rings: list[list[int]],
    xy: np.ndarray,
    uses: np.ndarray,
    shared: set,
    thin: float,
    reflex_thin: float,
    max_edge_len: float,
) -> list[list[int]]:
    """The region's rings without the convex wall corners whose triangle with their two
    neighbours is narrower than `thin`: a spike, a chamfer edge shorter than that, a point all but
    on its neighbours' line. Polygons at such corners tend to be slivers or needles (every triangle
    on an edge that short is one). Each is cut off, thinnest first, where no other ring point lies
    in the floor given up and the floor given up so far stays a strip thinner than `thin`: the
    convex hull of the new edge's ends and the points cut on the corner's side of it, measured from
    the edge's segment (a point beyond its end would count its distance to that end). Points cut
    on the other side changed the floor there, not the strip this cut adds to (fuzz case 300455:
    a spike given up beside a reflex corner all but straight kept that corner, and its 0.8 mm edge).
    Reflex corners are dropped the same way only when their triangle is narrower than
    `reflex_thin`, the floor gained reaching that far into the agent's band at most (fuzz case
    20872: a hole's corner 0.3 mm off its neighbours' line left an edge 9 mm long, whose only
    triangle was a sliver; cut off, it left a crack), or half `thin` beside a wall edge shorter
    than `thin` (26942: 2-3 mm beside a 6 mm edge), and only where no other ring passes through
    the new edge's ends (5797: a ring touching itself there had its other edges cross the floor
    gained). Corners on a shared border or used by another ring stay, and those whose cut would
    be a wall edge longer than max_edge_len (0: no limit)."""
    every = np.array([v for ring in rings for v in ring], dtype=np.int64)
    pts = {v: xy[v].tolist() for v in every.tolist()}  # this region's points only
    out = []
    for ring in rings:
        n = len(ring)
        prv, nxt = [(k - 1) % n for k in range(n)], [(k + 1) % n for k in range(n)]
        alive = n

        def width(k: int) -> float | None:
            """Least width of the corner's triangle if it may be cut, else None (called for this
            ring only)."""
            a, v, b = ring[prv[k]], ring[k], ring[nxt[k]]  # noqa: B023
            if uses[v] != 1 or (a, v) in shared or (v, b) in shared:
                return None
            bend = turn(xy[a], xy[v], xy[b])
            if bend == 0 or 0 < max_edge_len < math.dist(pts[a], pts[b]):
                return None
            if bend < 0 and (uses[a] != 1 or uses[b] != 1):
                return None  # floor added at a point another ring passes through could overlap it
            w = min_width([pts[a], pts[v], pts[b]])
            return w if w < limit(a, v, b, bend) else None

        def limit(a: int, v: int, b: int, bend: int) -> float:
            """How thin the corner's triangle must be to go: `thin` at a convex corner; at a
            reflex one `reflex_thin`, or half `thin` beside a wall edge shorter than `thin`."""
            if bend > 0:
                return thin
            if min(math.dist(pts[a], pts[v]), math.dist(pts[v], pts[b])) < thin:
                return max(reflex_thin, _SHORT_EDGE_REFLEX * thin)
            return reflex_thin

        heap = [(w, k) for k in range(n) if (w := width(k)) is not None]
        heapq.heapify(heap)
        gone = [False] * n
        while heap and alive > 3:
            w, k = heapq.heappop(heap)
            if gone[k] or width(k) != w:
                continue
            a, b = prv[k], nxt[k]
            pa, pv, pb = xy[ring[a]], xy[ring[k]], xy[ring[b]]
            between = [ring[(a + j) % n] for j in range(1, (b - a) % n)]
            others = every[~np.isin(every, [ring[a], ring[k], ring[b]])]
            inside = in_triangle(pa, pv, pb, xy[others])
            # The floor given up (or gained, at a reflex corner) between the new edge's ends: the
            # points cut so far on the corner's side of it (one cut the other way, as a spike
            # given up beside a corner all but straight, changed the floor on the other side).
            cut = xy[between]
            side = cross_many(pa, pb, cut) * cross_many(pa, pb, pv)
            changed = np.vstack([pa, cut[side > 0], pb])
            most = limit(ring[a], ring[k], ring[b], turn(pa, pv, pb))
            if inside.any() or min_width(changed[convex_hull(changed)]) >= most:
                continue
            gone[k] = True
            alive -= 1
            nxt[a], prv[b] = b, a
            for j in (a, b):
                if (wj := width(j)) is not None:
                    heapq.heappush(heap, (wj, j))
        out.append([v for k, v in enumerate(ring) if not gone[k]])
    return out


def _close_pinches(
    rings: list[list[int]], xy: np.ndarray, uses: np.ndarray, shared: set, thin: float
) -> tuple[list[list[int]], np.ndarray] | None:
    """The region's rings with each pinch narrower than `thin` closed, and their points' top views:
    a reflex wall corner within `thin` of another wall edge across the floor, its foot at least
    `thin` from the edge's ends, moves onto its foot and the edge passes through it, so the floor
    pinches to that one point. Every convex polygon across such a gap is a sliver (at
    max_verts_per_poly 3 nothing avoids one, fuzz case 393512); closed, the floor gives up at most
    the gap's width beside the walls, so the outline keeps as far from them as it was. Corners on
    a shared border or used by another ring stay. None if no pinch is closed, or if closing them
    would make the rings cross."""
    wall = [(ring[k], ring[(k + 1) % len(ring)]) for ring in rings for k in range(len(ring))]
    wall = [(a, b) for a, b in wall if (a, b) not in shared]
    if not wall:
        return None
    wall_a, wall_b = np.array([a for a, _ in wall]), np.array([b for _, b in wall])
    a_xy, b_xy = xy[wall_a], xy[wall_b]
    ab = b_xy - a_xy
    length = np.hypot(*ab.T)
    closes: list[tuple[float, int, int, np.ndarray]] = []
    for ring in rings:
        for k, v in enumerate(ring):
            p, n = ring[k - 1], ring[(k + 1) % len(ring)]
            if uses[v] != 1 or (p, v) in shared or (v, n) in shared or turn(xy[p], xy[v], xy[n]) >= 0:
                continue
            rel = xy[v] - a_xy
            along = (rel * ab).sum(axis=1) / np.maximum(length, NONZERO_DIVISOR)
            across = cross_vectors(ab, rel) / np.maximum(length, NONZERO_DIVISOR)
            near = (across > 0) & (across < thin) & (along >= thin) & (along <= length - thin)
            near &= (wall_a != v) & (wall_b != v)
            if near.any():
                e = int(np.flatnonzero(near)[np.argmin(across[near])])
                closes.append((float(across[e]), v, e, a_xy[e] + along[e] / length[e] * ab[e]))
    moved = xy.copy()
    after: dict[tuple[int, int], int] = {}
    used: set[int] = set()
    for _, v, e, foot in sorted(closes, key=lambda c: c[0]):
        if v in used or wall[e][0] in used or wall[e][1] in used or wall[e] in after:
            continue
        used.update((v, *wall[e]))
        moved[v] = foot
        after[wall[e]] = v
    if not after:
        return None
    out = []
    for ring in rings:
        new_ring = []
        for k, a in enumerate(ring):
            new_ring.append(a)
            if (a, ring[(k + 1) % len(ring)]) in after:
                new_ring.append(after[(a, ring[(k + 1) % len(ring)])])
        out.append(new_ring)
    return None if _rings_cross(out, moved, set(after.values())) else (out, moved)


def _rings_cross(rings: list[list[int]], xy: np.ndarray, moved: set[int]) -> bool:
    """Does an edge at a moved point meet an edge of these rings that shares no point with it?"""
    edges = np.array([(ring[k], ring[(k + 1) % len(ring)]) for ring in rings for k in range(len(ring))])
    mine = edges[np.isin(edges, list(moved)).any(axis=1)]
    meet = segments_meet_matrix(xy[mine[:, 0]], xy[mine[:, 1]], xy[edges[:, 0]], xy[edges[:, 1]])
    common = (mine[:, None, :, None] == edges[None, :, None, :]).any(axis=(2, 3))
    return bool((meet & ~common).any())
