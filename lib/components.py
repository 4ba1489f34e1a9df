"""Helpers shared by the stages and the queries, vectorised: connected components of a graph
given as edge arrays, the twin of each directed edge, partners among items with equal keys
(the faces on either side of an undirected edge), and runs laid end to end (each item's place in
its run, every cell of each box)."""

from __future__ import annotations

import numpy as np


def index_dtype(n: int) -> np.dtype:
    """int32 for ids below n when they fit (half the memory of int64 on per-span tables), else int64."""
    return np.dtype(np.int32 if n < 2**31 else np.int64)


def run_positions(counts: np.ndarray) -> np.ndarray:
    """For runs of counts[j] items laid end to end, each item's place within its run (0, 1, ...)."""
    counts = np.asarray(counts)
    return np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)


def box_cells(first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(box, x, y) of every grid cell of each box of cells first[k]..last[k] ((K, 2) inclusive
    x, y ranges), box by box and row by row (x fastest)."""
    width = last[:, 0] - first[:, 0] + 1
    count = width * (last[:, 1] - first[:, 1] + 1)
    box = np.repeat(np.arange(len(first)), count)
    k = run_positions(count)
    return box, first[box, 0] + k % width[box], first[box, 1] + k // width[box]


def connected_components(n: int, u: np.ndarray, v: np.ndarray, narrow: bool = False) -> np.ndarray:
    """Label of each node = smallest node id in its component (hook to smaller root, pointer jumping).

    Labels only ever join, so an edge whose ends share a label is done and dropped; int32 while the
    ids fit (this runs on every span of a level). The labels come back as int64, or with narrow in
    that int32 while they fit (per-span labels of a large level: half the memory)."""
    small = index_dtype(n)
    label = np.arange(n, dtype=small)
    u, v = np.asarray(u, dtype=small), np.asarray(v, dtype=small)
    while True:
        # Edge-sized temporaries a chunk of edges at a time: on a large level the first passes hold
        # every link. The labels found are the same however the hooking is split (each component's
        # smallest node), as every label is a node of its component and the smallest keeps its own.
        diff = np.empty(len(u), dtype=bool)
        for start in range(0, len(u), _EDGE_CHUNK):
            part = slice(start, start + _EDGE_CHUNK)
            diff[part] = label[u[part]] != label[v[part]]
        if not diff.any():
            return label if narrow else label.astype(np.int64)
        if not diff.all():  # the first pass keeps every edge: no copy of them
            u, v = u[diff], v[diff]
        del diff
        for start in range(0, len(u), _EDGE_CHUNK):
            part = slice(start, start + _EDGE_CHUNK)
            # Each edge's two labels, the smaller in lu and the larger in lv: hook lv to lu.
            lu, lv = label[u[part]], label[v[part]]
            high = np.maximum(lu, lv)
            np.minimum(lu, lv, out=lu)
            np.minimum.at(label, high, lu)
        _to_roots(label)


def _to_roots(label: np.ndarray) -> None:
    """Point every node at the root of its tree, in place. A node's parent never has a larger id,
    so ids taken block by block in order jump only within their block: the blocks before point at
    roots already. Pointer jumping over every node took a pass per halving of the trees' depth (17
    on a 500 m floor, where each cell hooks to the one beside it and chains run across the grid)."""
    for start in range(0, len(label), _ROOT_CHUNK):
        part = label[start : start + _ROOT_CHUNK]
        while True:
            jumped = label[part]
            if np.array_equal(jumped, part):
                break
            part[...] = jumped


# Edges connected_components hooks at once (bounds its temporaries).
_EDGE_CHUNK = 1 << 18
# Nodes _to_roots points at their roots at once: few enough that a block holds short chains.
_ROOT_CHUNK = 1 << 14


def find_sorted(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The position of each wanted key in `keys` (ascending), or -1 where it is not there."""
    wanted = np.asarray(wanted)
    if len(keys) == 0:
        return np.full(len(wanted), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[at] == wanted, at, -1)


def sorted_starts(ids: np.ndarray, count: int) -> np.ndarray:
    """(count + 1,) for ascending ids in [0, count): id c's entries are start[c]:start[c + 1].
    Each run's first position is written at its id, then every id not present takes the next
    one's start (a minimum accumulated from the end): one pass over the ids and one over the range,
    no search per id. int32 while positions fit; the ids are read in chunks (bounded temporaries)."""
    start = np.full(count + 1, len(ids), dtype=index_dtype(len(ids) + 1))
    for first in reversed(range(0, len(ids), _IDS_PER_CHUNK)):  # earlier chunks overwrite a run's later part
        part = ids[first : first + _IDS_PER_CHUNK]
        new = np.ones(len(part), dtype=bool)
        np.not_equal(part[1:], part[:-1], out=new[1:])
        at = np.flatnonzero(new)
        start[part[at]] = at + first
    reverse = start[::-1]
    np.minimum.accumulate(reverse, out=reverse)
    return start


# Ids sorted_starts reads at once (bounds its temporaries).
_IDS_PER_CHUNK = 1 << 16


def unique_pairs(pairs: np.ndarray) -> np.ndarray:
    """The distinct rows of pairs (K, 2) of non-negative ids, sorted, in their dtype: what
    np.unique(pairs, axis=0) gives, through one int64 key per row (a sort of K integers, not of K
    row records, in place)."""
    n = int(pairs.max(initial=0)) + 1
    key = pairs[:, 0].astype(np.int64)
    key *= n
    key += pairs[:, 1]
    key.sort()
    key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key
    out = np.empty((len(key), 2), dtype=pairs.dtype)
    out[:, 0] = key // n
    out[:, 1] = key % n
    return out


def twin_edges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each directed edge starts[e] -> ends[e] (vertex ids), the first edge listed that runs the
    other way, ends[e] -> starts[e]; -1 where none does. One sort of the edge keys."""
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    if len(starts) == 0:
        return np.zeros(0, dtype=np.int64)
    n = int(max(starts.max(), ends.max())) + 1
    key = starts * n + ends
    order = np.argsort(key, kind="stable")
    at = find_sorted(key[order], ends * n + starts)
    return np.where(at >= 0, order[at], -1)


def partners(*keys: np.ndarray) -> np.ndarray:
    """For items whose keys (arrays, the first the most significant) are all equal, each one's
    partner: the item before it in listing order, and for the first of a run the one after; -1 for
    an item whose keys no other shares. An edge shared by two faces pairs them; an edge of
    more (non-manifold) pairs some of them."""
    order = np.lexsort(keys[::-1])
    same = np.logical_and.reduce([k[order][1:] == k[order][:-1] for k in keys])
    partner = np.full(len(order), -1, dtype=np.int64)
    first, second = order[:-1][same], order[1:][same]
    partner[first] = second
    partner[second] = first
    return partner
