"""Convex pieces merged within the vertex limit (Hertel-Mehlhorn), three neighbours regrouped into
two, and what counts as a sliver."""

from __future__ import annotations

import heapq
import math
from collections.abc import Set as AbstractSet
from typing import cast

import numpy as np

from ..geometry import NONZERO_DIVISOR, narrower_than, signed_area, turn
from ..progress import SILENT, Progress
from ..triangulate import NEEDLE_FATNESS


def _is_sliver(pts: np.ndarray, thin: float) -> bool:
    """Needle-like polygon (area / perimeter² at most NEEDLE_FATNESS; an equilateral triangle has 0.048)
    or one narrower than `thin`."""
    return _fatness(pts) <= NEEDLE_FATNESS or narrower_than(pts, thin)


def _merge(
    pieces: list[list[int]],
    xy: np.ndarray,
    maxv: int,
    removable: AbstractSet[int] = frozenset(),
    progress: Progress = SILENT,
) -> list[list[int]]:
    """Hertel-Mehlhorn: remove diagonals (longest first) while the union stays convex and small.

    A vertex in `removable` (a Steiner vertex) that a union leaves straight and no other polygon
    uses is dropped from it.
    """
    polys: dict[int, list[int]] = {k: list(t) for k, t in enumerate(pieces)}
    uses: dict[int, int] = {}
    owner: dict[tuple[int, int], int] = {}
    for k, t in polys.items():
        for j, v in enumerate(t):
            owner[(v, t[(j + 1) % len(t)])] = k
            uses[v] = uses.get(v, 0) + 1
    heap: list[tuple[float, int, int]] = []
    for a, b in owner:
        if a < b and (b, a) in owner:
            heapq.heappush(heap, (-float(np.hypot(*(xy[a] - xy[b]))), a, b))
    next_id = len(pieces)
    diagonals = max(len(heap), 1)
    while heap:
        progress.at(1.0 - len(heap) / diagonals)
        _, a, b = heapq.heappop(heap)
        p, q = owner.get((a, b)), owner.get((b, a))
        if p is None or q is None or p == q:
            continue
        merged = _try_merge(polys[p], polys[q], a, b, xy, maxv, removable, uses)
        if merged is None:
            continue
        for poly in (polys.pop(p), polys.pop(q)):
            for j, v in enumerate(poly):
                owner.pop((v, poly[(j + 1) % len(poly)]), None)
                uses[v] -= 1
        polys[next_id] = merged
        for j, v in enumerate(merged):
            owner[(v, merged[(j + 1) % len(merged)])] = next_id
            uses[v] += 1
        for j in range(len(merged)):
            u, v = merged[j], merged[(j + 1) % len(merged)]
            if (v, u) in owner:
                heapq.heappush(heap, (-float(np.hypot(*(xy[u] - xy[v]))), min(u, v), max(u, v)))
        next_id += 1
    return [_rotate_min(poly) for poly in polys.values()]


def _rotate_min(poly: list[int]) -> list[int]:
    k = poly.index(min(poly))
    return poly[k:] + poly[:k]


def _try_merge(
    pp: list[int],
    qq: list[int],
    a: int,
    b: int,
    xy: np.ndarray,
    maxv: int,
    removable: AbstractSet[int],
    uses: dict[int, int],
) -> list[int] | None:
    """Union of two polygons sharing edge a->b (in pp) / b->a (in qq), or None if not convex / too big."""
    i = pp.index(a)
    pp = pp[i:] + pp[:i]  # a, b, ...
    j = qq.index(b)
    qq = qq[j:] + qq[:j]  # b, a, ...
    merged = pp[1:] + qq[1:]  # b ... (pp) ..., a ... (qq) ...
    if len(set(merged)) != len(merged):
        return None
    if removable:
        merged = [
            v
            for k, v in enumerate(merged)
            if not (
                v in removable
                and uses[v] == (v in pp) + (v in qq)
                and turn(xy[merged[k - 1]], xy[v], xy[merged[(k + 1) % len(merged)]]) == 0
            )
        ]
    if len(merged) > maxv:
        return None
    n = len(merged)
    if not all(_convex_corner(xy[merged[k - 1]], xy[merged[k]], xy[merged[(k + 1) % n]]) for k in range(n)):
        return None
    return merged


def _union_ring(group: list[list[int]]) -> list[int] | None:
    """Outline of adjacent polygons as one counter-clockwise ring; None if it is not a single simple loop."""
    edges = {(p[k], p[(k + 1) % len(p)]) for p in group for k in range(len(p))}
    nxt = {}
    for a, b in edges:
        if (b, a) not in edges:
            if a in nxt:
                return None
            nxt[a] = b
    if not nxt:
        return None
    start = next(iter(nxt))
    ring, v = [start], nxt[start]
    while v != start:
        if v not in nxt or len(ring) > len(nxt):
            return None
        ring.append(v)
        v = nxt[v]
    return ring if len(ring) == len(nxt) else None


def _split_in_two(ring: list[int], xy: np.ndarray, maxv: int, thin: float) -> list[list[int]] | None:
    """The ring as one convex polygon, or cut by its fattest chord into two, each within maxv
    vertices; None if neither is possible.

    A chord only changes the corners at its ends, so it must end at every reflex corner: none
    (already convex), one (chords from it) or two (the chord between them).
    """
    n = len(ring)
    if n > 2 * maxv - 2:
        return None
    pts = [tuple(xy[v]) for v in ring]
    reflex = [k for k in range(n) if not _convex_corner(pts[k - 1], pts[k], pts[(k + 1) % n])]
    if not reflex:
        return [ring] if n <= maxv else None
    if len(reflex) > 2:
        return None
    if len(reflex) == 2:
        chords = [tuple(reflex)]
    else:
        chords = [(min(reflex[0], j), max(reflex[0], j)) for j in range(n) if (j - reflex[0]) % n not in (0, 1, n - 1)]
    best, best_fat = None, NEEDLE_FATNESS
    for i, j in chords:
        if j - i < 2 or j - i > n - 2:
            continue
        first, second = ring[i : j + 1], ring[j:] + ring[: i + 1]
        if len(first) > maxv or len(second) > maxv:
            continue
        if not all(
            _convex_corner(*corner)
            for corner in (
                (pts[j - 1], pts[j], pts[i]),
                (pts[j], pts[i], pts[i + 1]),
                (pts[i - 1], pts[i], pts[j]),
                (pts[i], pts[j], pts[(j + 1) % n]),
            )
        ):
            continue
        fat = min(_fatness(xy[first]), _fatness(xy[second]))
        if fat > best_fat and not (_is_sliver(xy[first], thin) or _is_sliver(xy[second], thin)):
            best, best_fat = [first, second], fat
    return best


def _convex_corner(o, v, w) -> bool:
    """Left turn at v, or straight on (not back)."""
    bend = turn(o, v, w)
    return bend > 0 or (bend == 0 and (v[0] - o[0]) * (w[0] - v[0]) + (v[1] - o[1]) * (w[1] - v[1]) > 0)


def _fatness(pts: np.ndarray) -> float:
    """Area / perimeter², signed (0.048 for an equilateral triangle, 0.0625 for a square)."""
    p = pts[:, :2].tolist()
    perimeter = sum(math.dist(p[k - 1], p[k]) for k in range(len(p)))
    return signed_area(pts) / max(perimeter * perimeter, NONZERO_DIVISOR)


def _regroup(
    pieces: list[list[int]],
    xy: np.ndarray,
    maxv: int,
    thin: float,
    removable: AbstractSet[int] = frozenset(),
    progress: Progress = SILENT,
) -> list[list[int]]:
    """Local search after merging: three adjacent polygons whose outline one chord cuts into two
    convex polygons (each within maxv) become those two, until no such triple is left."""
    polys: dict[int, list[int]] = dict(enumerate(pieces))
    owner: dict[tuple[int, int], int] = {}
    uses: dict[int, int] = {}
    for k, p in polys.items():
        for j, v in enumerate(p):
            owner[(v, p[(j + 1) % len(p)])] = k
            uses[v] = uses.get(v, 0) + 1
    next_id = len(pieces)
    tried: set[frozenset] = set()

    def neighbours(k: int) -> set[int]:
        p = polys[k]
        found = {owner.get((p[(j + 1) % len(p)], v)) for j, v in enumerate(p)}
        found.discard(None)
        return cast(set[int], found)

    changed = True
    while changed:
        changed = False
        order = list(polys)
        for k, a in enumerate(order):
            progress.at(k / len(order))
            if a not in polys:
                continue
            near_a = neighbours(a)
            triples = {frozenset((a, b, c)) for b in near_a for c in (near_a | neighbours(b)) - {a, b}}
            for triple in triples - tried:
                tried.add(triple)
                group = [polys[k] for k in triple]
                ring = _union_ring(group)
                if ring is None:
                    continue
                inside: dict[int, int] = {}
                for p in group:
                    for v in p:
                        inside[v] = inside.get(v, 0) + 1
                ring = [
                    v
                    for k, v in enumerate(ring)
                    if not (
                        v in removable
                        and uses[v] == inside[v]
                        and turn(xy[ring[k - 1]], xy[v], xy[ring[(k + 1) % len(ring)]]) == 0
                    )
                ]
                split = _split_in_two(ring, xy, maxv, thin)
                if split is None:
                    continue
                for k in triple:
                    p = polys.pop(k)
                    for j, v in enumerate(p):
                        owner.pop((v, p[(j + 1) % len(p)]), None)
                        uses[v] -= 1
                for p in split:
                    polys[next_id] = p
                    for j, v in enumerate(p):
                        owner[(v, p[(j + 1) % len(p)])] = next_id
                        uses[v] = uses.get(v, 0) + 1
                    next_id += 1
                changed = True
                break
    return [_rotate_min(p) for p in polys.values()]
