"""The benchmark's query figures count each path status on its own."""

from __future__ import annotations

import numpy as np

import blender_navmesh as lib
from bench.run import query_figures
from levels import Scene


def test_found_counts_only_found_paths_and_partial_ones_apart():
    """Two floors with no way between: a path on one floor is found, one to the other floor partial
    (it has points, ending at the nearest reachable point); `found` must not count the partial one."""
    scene = Scene().floor(0, 0, 4, 4).floor(8, 0, 12, 4)
    mesh = lib.generate(scene.vertices, scene.triangles, lib.BakeParams(agent_radius=0.3))
    queries = np.array([[1.0, 1.0, 0.0, 3.0, 3.0, 0.0], [1.0, 2.0, 0.0, 10.0, 2.0, 0.0]])
    figures = query_figures(mesh, queries)
    assert (figures["found"], figures["partial"], figures["reached"]) == (1, 1, 1)
