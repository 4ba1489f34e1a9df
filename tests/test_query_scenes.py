"""Hand-built navmeshes with exactly known free space, shared by the clearance and query tests.

A scene is a rectangular floor minus axis-aligned rectangular obstacles; the mesh is the grid of
rectangles cut by every obstacle coordinate (plus a regular split), so it covers the free space
exactly, has no T-junctions and is CCW seen from +Z.
"""

from __future__ import annotations

import heapq
from dataclasses import replace

import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Point, box

from blender_navmesh.clearance import compute_clearance
from blender_navmesh.navmesh import NavMesh
from blender_navmesh.params import BakeParams


def grid_mesh(floor, obstacles, r0: float = 0.0, step: float = 1.0, z=None) -> NavMesh:
    """NavMesh of floor (x0, y0, x1, y1) minus obstacle boxes; z(x, y) gives heights (default 0)."""
    x0, y0, x1, y1 = floor
    xs = set(np.arange(x0, x1, step).tolist()) | {x0, x1}
    ys = set(np.arange(y0, y1, step).tolist()) | {y0, y1}
    for ox0, oy0, ox1, oy1 in obstacles:
        xs |= {ox0, ox1}
        ys |= {oy0, oy1}
    xs = np.array(sorted(x for x in xs if x0 <= x <= x1))
    ys = np.array(sorted(y for y in ys if y0 <= y <= y1))
    nx, ny = len(xs) - 1, len(ys) - 1
    free = np.ones((nx, ny), dtype=bool)
    cx, cy = 0.5 * (xs[:-1] + xs[1:]), 0.5 * (ys[:-1] + ys[1:])
    for ox0, oy0, ox1, oy1 in obstacles:
        free &= ~(((cx > ox0) & (cx < ox1))[:, None] & ((cy > oy0) & (cy < oy1))[None, :])
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    zz = np.zeros_like(gx) if z is None else np.vectorize(z)(gx, gy)
    vertices = np.stack([gx.ravel(), gy.ravel(), zz.ravel()], axis=1)
    vid = lambda i, j: i * (ny + 1) + j  # noqa: E731
    cell_poly = -np.ones((nx, ny), dtype=np.int64)
    cells = np.argwhere(free)
    cell_poly[free] = np.arange(len(cells))
    polys, neigh = [], []
    for i, j in cells:
        polys += [vid(i, j), vid(i + 1, j), vid(i + 1, j + 1), vid(i, j + 1)]
        for di, dj in ((0, -1), (1, 0), (0, 1), (-1, 0)):
            a, b = i + di, j + dj
            neigh.append(int(cell_poly[a, b]) if 0 <= a < nx and 0 <= b < ny else -1)
    P = len(cells)
    mesh = NavMesh(
        vertices=vertices,
        poly_offsets=np.arange(0, 4 * P + 1, 4, dtype=np.int64),
        poly_vertices=np.array(polys, dtype=np.int64),
        neighbors=np.array(neigh, dtype=np.int64),
        regions=np.zeros(P, dtype=np.int64),
        areas=np.zeros(P, dtype=np.int64),
        params=BakeParams(agent_radius=r0),
    )
    return with_clearance(mesh)


def with_clearance(mesh: NavMesh) -> NavMesh:
    """A hand-built mesh with the clearances a bake computes for it."""
    clear = compute_clearance(mesh)
    return replace(mesh, edge_clearance=clear.edge, cross_clearance=clear.cross)


def free_space(floor, obstacles, r: float):
    """Exact free space for centre points of an agent of radius r."""
    region = box(*floor).buffer(-r, join_style="mitre")
    for o in obstacles:
        region = region.difference(box(*o).buffer(r))
    return region


def visibility_shortest(floor, obstacles, start, goal) -> float:
    """Exact shortest path length (r = 0) by Dijkstra over the visibility graph of obstacle corners."""
    region = free_space(floor, obstacles, 0.0).buffer(1e-9)
    nodes = [tuple(start[:2]), tuple(goal[:2])]
    nodes += [(x, y) for ox0, oy0, ox1, oy1 in obstacles for x in (ox0, ox1) for y in (oy0, oy1)]
    nodes = [n for n in nodes if region.covers(Point(n))]
    n = len(nodes)
    dist = [np.inf] * n
    dist[0] = 0.0
    heap = [(0.0, 0)]
    done = set()
    while heap:
        d, i = heapq.heappop(heap)
        if i in done:
            continue
        if i == 1:
            return d
        done.add(i)
        for j in range(n):
            if j in done or j == i:
                continue
            if region.covers(LineString([nodes[i], nodes[j]])):
                nd = d + float(np.hypot(nodes[i][0] - nodes[j][0], nodes[i][1] - nodes[j][1]))
                if nd < dist[j]:
                    dist[j] = nd
                    heapq.heappush(heap, (nd, j))
    return np.inf


ROOM = (0.0, 0.0, 10.0, 10.0)
PILLARS = [(2.0, 2.0, 3.0, 6.0), (5.0, 1.0, 6.0, 4.0), (4.5, 6.0, 8.0, 7.0), (7.0, 2.5, 8.5, 4.5), (1.0, 7.5, 3.0, 8.5)]


def test_grid_mesh_covers_exactly_the_free_space():
    mesh = grid_mesh(ROOM, PILLARS)
    expected = free_space(ROOM, PILLARS, 0.0).area
    assert mesh.area_xy() == pytest.approx(expected)
    # Every interior edge is shared by exactly two polygons, both ways round.
    e = np.flatnonzero(mesh.neighbors >= 0)
    owner = mesh.edge_polygon
    for k in e:
        q = mesh.neighbors[k]
        assert owner[k] in mesh.neighbors[mesh.poly_offsets[q] : mesh.poly_offsets[q + 1]]


def test_visibility_reference_on_a_known_detour():
    # One 2 m wide block between start and goal: the shortest path touches two corners.
    walls = [(4.0, 0.0, 6.0, 6.0)]
    d = visibility_shortest(ROOM, walls, np.array([2.0, 2.0, 0]), np.array([8.0, 2.0, 0]))
    assert d == pytest.approx(2 * np.hypot(2.0, 4.0) + 2.0)
    assert shapely.is_valid(free_space(ROOM, walls, 0.3))


def combine(meshes: list[NavMesh], r0: float = 0.0) -> NavMesh:
    """One NavMesh from several: vertices welded by position, neighbours rebuilt from shared edges."""
    verts = np.concatenate([m.vertices for m in meshes])
    key, inverse = np.unique(np.round(verts, 9), axis=0, return_inverse=True)
    base = np.cumsum([0] + [len(m.vertices) for m in meshes])[:-1]
    poly_vertices = np.concatenate([inverse.ravel()[m.poly_vertices + b] for m, b in zip(meshes, base)])
    sizes = np.concatenate([m.polygon_sizes for m in meshes])
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    nxt = np.arange(1, len(poly_vertices) + 1)
    nxt[offsets[1:] - 1] = offsets[:-1]
    edge = {(int(u), int(w)): int(owner[e]) for e, (u, w) in enumerate(zip(poly_vertices, poly_vertices[nxt]))}
    neighbors = np.array(
        [edge.get((int(w), int(u)), -1) for u, w in zip(poly_vertices, poly_vertices[nxt])], dtype=np.int64
    )
    P = len(sizes)
    mesh = NavMesh(
        key,
        offsets,
        poly_vertices,
        neighbors,
        np.zeros(P, dtype=np.int64),
        np.zeros(P, dtype=np.int64),
        BakeParams(agent_radius=r0),
    )
    return with_clearance(mesh)


def two_floors() -> NavMesh:
    """Lower floor (0..12, 0..2) at z 0, a ramp (12..14, 0..8) up to z 3, upper floor (0..12, 0..8) at z 3 above it."""
    lower = grid_mesh((0.0, 0.0, 12.0, 2.0), [], step=1.0)
    ramp = grid_mesh((12.0, 0.0, 14.0, 8.0), [], step=1.0, z=lambda x, y: float(np.clip(0.75 * (y - 2.0), 0.0, 3.0)))
    upper = grid_mesh((0.0, 0.0, 12.0, 8.0), [], step=1.0, z=lambda x, y: 3.0)
    return combine([lower, ramp, upper])


def test_two_floors_connect_only_through_the_ramp():
    mesh = two_floors()
    assert mesh.polygon_count == 24 + 16 + 96
    crossing = np.flatnonzero(mesh.neighbors >= 0)
    z = mesh.vertices[mesh.poly_vertices[crossing], 2]
    assert len(crossing) and z.max() <= 3.0 and mesh.area_xy() == pytest.approx(24 + 16 + 96)
