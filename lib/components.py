"""Connected components of a graph given as edge arrays, vectorised (used by several stages)."""

from __future__ import annotations

import numpy as np


def connected_components(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Label of each node = smallest node id in its component (hook to smaller root, pointer jumping)."""
    label = np.arange(n, dtype=np.int64)
    while True:
        lu, lv = label[u], label[v]
        diff = lu != lv
        if not diff.any():
            return label
        np.minimum.at(label, np.maximum(lu, lv)[diff], np.minimum(lu, lv)[diff])
        while True:
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped
