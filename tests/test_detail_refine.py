"""Detail refinement (lib.detail.refine): the samples of a large polygon are located without
(triangles x samples) temporaries, and located exactly where measuring them all at once puts them."""

from __future__ import annotations

import tracemalloc

import numpy as np

from blender_navmesh.detail import refine


def _rolling(x, y):
    return 2.0 * np.sin(x / 7.0) * np.cos(y / 9.0) + 0.3 * np.sin(x / 1.3) * np.cos(y / 1.1)


def _large_polygon(size: float, spacing: float, edge_points: int):
    """A size x size square on rolling ground: its corners, its floor samples at column centres
    `spacing` apart, and `edge_points` points along each edge (as edges.py gives them)."""
    corners = np.array([(0, 0), (size, 0), (size, size), (0, size)], dtype=np.float64)
    poly = np.column_stack([corners, _rolling(corners[:, 0], corners[:, 1])])
    c = (np.arange(int(size / spacing)) + 0.5) * spacing
    xx, yy = np.meshgrid(c, c)
    samples = np.column_stack([xx.ravel(), yy.ravel(), _rolling(xx.ravel(), yy.ravel())])
    t = (np.arange(edge_points) + 1.0) / (edge_points + 1)
    on_edges = []
    for k in range(4):
        a, b = corners[k], corners[(k + 1) % 4]
        xy = a + t[:, None] * (b - a)
        on_edges.append(np.column_stack([xy, _rolling(xy[:, 0], xy[:, 1])]))
    return poly, samples, on_edges


def test_a_large_polygon_is_refined_without_triangles_by_samples_temporaries():
    """A 60 m square sampled every 0.3 m (40,000 samples) with 30 points along each edge (122
    triangles before any sample is inserted): each sample was measured against every triangle at
    once, (122, 40,000) arrays of 39 MB, a dozen of them alive together (the 1 km rolling terrain
    of 1M cells, 250k samples in a polygon, peaked at 5.5 GB in the detail stage). The refinement's
    own arrays are 64 bytes a sample; the temporaries stay within a few _PAIRS_PER_CHUNK arrays."""
    poly, samples, on_edges = _large_polygon(60.0, 0.3, 30)
    tracemalloc.start()
    try:
        verts, tris, _ = refine._refine(poly, 0, samples, 0.05, on_edges)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(tris) > 200  # refined up to its cap
    assert peak < 64 * len(samples) + 16 * 8 * (1 << 17), peak / 2**20


def test_samples_are_located_in_blocks_where_measuring_all_at_once_puts_them(monkeypatch):
    """Blocks of samples are measured against the triangles whose bounding boxes meet theirs, and
    after an insertion the samples round it against the triangle whose angle round the new vertex
    holds them; a sample on an edge is measured against all of them again. The surface is the one
    measuring every sample against every triangle gives, vertex for vertex (column centres on a
    0.25 m grid lie on many edges, and the fan's corners and edge points on grid lines too)."""
    poly, samples, on_edges = _large_polygon(20.0, 0.25, 12)
    blocked = refine._refine(poly, 0, samples, 0.02, on_edges)
    monkeypatch.setattr(refine, "_PAIRS_PER_CHUNK", 1 << 40)
    monkeypatch.setattr(refine, "_locate_around", lambda tin, new, samples, *rest: refine._locate(tin, samples, *rest))
    at_once = refine._refine(poly, 0, samples, 0.02, on_edges)
    assert blocked[2] == at_once[2]
    assert np.array_equal(blocked[0], at_once[0]) and np.array_equal(blocked[1], at_once[1])


def test_samples_round_an_inserted_vertex_are_measured_against_one_triangle_each(monkeypatch):
    """After an insertion, each sample of the triangles it changed was measured against all of them
    (8 on average): the 60 m square's refinement measured 100 (triangle, sample) pairs a sample.
    The triangles round the new vertex are sorted by angle, and a sample is measured against the
    one its direction falls in (again against all only on an edge): 42 a sample."""
    poly, samples, on_edges = _large_polygon(60.0, 0.3, 30)
    weights, pairs = refine._weights, []

    def counting(corner, qx, qy):
        out = weights(corner, qx, qy)
        pairs.append(out[0].size)
        return out

    monkeypatch.setattr(refine, "_weights", counting)
    refine._refine(poly, 0, samples, 0.05, on_edges)
    assert sum(pairs) < 60 * len(samples)
