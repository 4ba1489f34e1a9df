"""Checks of NavMesh invariants and geometry helpers shared by the generator and query tests."""
from __future__ import annotations

from collections import deque

import numpy as np


def polygon_xy(mesh, p: int) -> np.ndarray:
    return mesh.vertices[mesh.polygon(p), :2]


def assert_valid_navmesh(mesh) -> None:
    """Every structural invariant the generator promises (issue 2), with messages naming the polygon."""
    n_poly = mesh.polygon_count
    assert len(mesh.neighbors) == len(mesh.poly_vertices)
    assert len(mesh.regions) == n_poly and len(mesh.areas) == n_poly
    assert np.all(np.isfinite(mesh.vertices))
    sizes = mesh.polygon_sizes
    assert np.all(sizes >= 3)
    assert np.all(sizes <= mesh.params.max_verts_per_poly), "polygon over max_verts_per_poly"
    used = np.zeros(len(mesh.vertices), dtype=bool)
    used[mesh.poly_vertices] = True
    assert used.all(), "vertices not used by any polygon"

    edges = {}
    for p in range(n_poly):
        poly = mesh.polygon(p)
        assert len(set(poly.tolist())) == len(poly), f"polygon {p} repeats a vertex"
        xy = polygon_xy(mesh, p)
        xy = xy - xy[0]  # about its own corner: far from the origin the shoelace sum loses the area
        d1 = np.roll(xy, -1, axis=0) - xy
        d2 = np.roll(d1, -1, axis=0)
        cross = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
        scale = max(float(np.abs(d1).max()), 1e-9)
        assert np.all(cross > -1e-9 * scale * scale), f"polygon {p} is not convex or not counter-clockwise"
        area = 0.5 * np.sum(xy[:, 0] * np.roll(xy[:, 1], -1) - np.roll(xy[:, 0], -1) * xy[:, 1])
        perimeter = np.linalg.norm(d1, axis=1).sum()
        assert area > 0, f"polygon {p} has no area"
        assert area / perimeter**2 > 2e-4, f"polygon {p} is a sliver (area {area:.3g}, perimeter {perimeter:.3g})"
        for k in range(len(poly)):
            a, b = int(poly[k]), int(poly[(k + 1) % len(poly)])
            assert (a, b) not in edges, f"directed edge {a}->{b} used twice"
            edges[(a, b)] = (p, mesh.poly_offsets[p] + k)
    for (a, b), (p, slot) in edges.items():
        q = int(mesh.neighbors[slot])
        twin = edges.get((b, a))
        if q >= 0:
            assert twin is not None and twin[0] == q, f"polygon {p} edge {a}->{b}: neighbour {q} has no matching edge"
            assert int(mesh.neighbors[twin[1]]) == p, "adjacency is not symmetric"
        else:
            assert twin is None, f"edge {a}->{b} is shared by polygons {p} and {twin[0]} but marked as boundary"
    assert_no_t_junctions(mesh)


def assert_no_t_junctions(mesh, tol: float = 1e-7) -> None:
    """No polygon edge runs along part of another polygon's edge with a vertex inside it: the two
    would share that stretch without sharing vertices, which breaks adjacency. (A vertex that only
    touches another polygon's wall edge at a point, two regions pinching together, shares nothing.)"""
    a = mesh.vertices[mesh.poly_vertices]
    b = mesh.vertices[mesh.edge_next_vertex]
    d = b - a
    length_sq = np.maximum((d**2).sum(1), 1e-30)
    for start in range(0, len(mesh.vertices), 256):
        v = mesh.vertices[start : start + 256]
        t = np.einsum("ekj,ej->ek", v[None, :, :] - a[:, None, :], d) / length_sq[:, None]
        closest = a[:, None, :] + t[..., None] * d[:, None, :]
        dist = np.linalg.norm(closest - v[None], axis=2)
        inside = (t > 1e-6) & (t < 1 - 1e-6) & (dist < tol)
        for e, k in zip(*np.nonzero(inside)):
            vertex = start + int(k)
            ends = np.concatenate([mesh.edge_next_vertex[mesh.poly_vertices == vertex],
                                   mesh.poly_vertices[mesh.edge_next_vertex == vertex]])
            rel = mesh.vertices[ends] - a[e]
            off_line = np.linalg.norm(rel - np.outer(rel @ d[e] / length_sq[e], d[e]), axis=1)
            assert not (off_line < tol).any(), (
                f"vertex {vertex} lies inside edge {int(e)} and an edge at it runs along that edge (T-junction)")


def polygons_at(mesh, x: float, y: float) -> list[int]:
    """Polygons whose top-view outline contains (x, y)."""
    hits = []
    for p in range(mesh.polygon_count):
        xy = polygon_xy(mesh, p)
        xy = xy - xy[0]  # about its own corner: far from the origin the shoelace sum loses the area
        d1 = np.roll(xy, -1, axis=0) - xy
        rel = np.array([x, y]) - xy
        if np.all(d1[:, 0] * rel[:, 1] - d1[:, 1] * rel[:, 0] >= -1e-9):
            hits.append(p)
    return hits


def polygon_at(mesh, x: float, y: float, z: float, z_tol: float = 0.6) -> int | None:
    """The polygon under (x, y) whose surface height there (from the detail mesh) is closest to z, within z_tol."""
    best, best_dz = None, z_tol
    tri = mesh.detail_vertices[mesh.detail_triangles]
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    det = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    safe = np.where(np.abs(det) > 1e-15, det, 1.0)
    u = ((x - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (y - a[:, 1])) / safe
    v = ((b[:, 0] - a[:, 0]) * (y - a[:, 1]) - (x - a[:, 0]) * (b[:, 1] - a[:, 1])) / safe
    inside = (np.abs(det) > 1e-15) & (u >= -1e-9) & (v >= -1e-9) & (u + v <= 1 + 1e-9)
    for t in np.flatnonzero(inside):
        height = a[t, 2] + u[t] * (b[t, 2] - a[t, 2]) + v[t] * (c[t, 2] - a[t, 2])
        if abs(height - z) <= best_dz:
            best, best_dz = int(mesh.detail_polygons[t]), abs(height - z)
    return best


def components(mesh) -> np.ndarray:
    """Connected component label per polygon, following neighbours."""
    label = np.full(mesh.polygon_count, -1)
    owner = mesh.edge_polygon
    adjacency = [[] for _ in range(mesh.polygon_count)]
    for slot, q in enumerate(mesh.neighbors):
        if q >= 0:
            adjacency[owner[slot]].append(int(q))
    current = 0
    for start in range(mesh.polygon_count):
        if label[start] >= 0:
            continue
        label[start] = current
        queue = deque([start])
        while queue:
            p = queue.popleft()
            for q in adjacency[p]:
                if label[q] < 0:
                    label[q] = current
                    queue.append(q)
        current += 1
    return label


def connected(mesh, a, b) -> bool:
    """Whether 3D points a and b lie on the mesh in the same connected component."""
    pa, pb = polygon_at(mesh, *a), polygon_at(mesh, *b)
    if pa is None or pb is None:
        return False
    labels = components(mesh)
    return bool(labels[pa] == labels[pb])


def as_shapely(mesh):
    """The mesh seen from above as one shapely geometry (single-floor scenes)."""
    from shapely.geometry import Polygon
    from shapely.ops import unary_union

    return unary_union([Polygon(polygon_xy(mesh, p)) for p in range(mesh.polygon_count)])
