"""Batch API: many path queries at once, as arrays, through one NavMeshQuery and its path cache."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import NavMeshError
from .filter import QueryFilter

STATUS_CODES = {"found": 0, "partial": 1, "unreachable": 2}


@dataclass(frozen=True)
class BatchResult:
    """status (N,) codes 0 found / 1 partial / 2 unreachable; lengths (N,); path i is
    points[offsets[i]:offsets[i+1]]."""

    status: np.ndarray
    lengths: np.ndarray
    offsets: np.ndarray
    points: np.ndarray

    def path(self, i: int) -> np.ndarray:
        return self.points[self.offsets[i] : self.offsets[i + 1]]


def find_paths(query, starts, goals, radius=None, filter: QueryFilter | None = None) -> BatchResult:
    """Answer N start -> goal queries on a NavMeshQuery; radius is None, a scalar, or (N,) per query."""
    starts = np.asarray(starts, dtype=np.float64).reshape(-1, 3)
    goals = np.asarray(goals, dtype=np.float64).reshape(-1, 3)
    if len(starts) != len(goals):
        raise NavMeshError(f"batch has {len(starts)} starts but {len(goals)} goals")
    n = len(starts)
    radii = [None] * n if radius is None else np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,)).tolist()
    status = np.zeros(n, dtype=np.int64)
    lengths = np.zeros(n)
    chunks = []
    for i in range(n):
        res = query.find_path(starts[i], goals[i], radii[i], filter)
        status[i], lengths[i] = STATUS_CODES[res.status], res.length
        chunks.append(res.points)
    offsets = np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.int64)
    points = np.concatenate(chunks) if chunks else np.zeros((0, 3))
    return BatchResult(status, lengths, offsets, points.reshape(-1, 3))
