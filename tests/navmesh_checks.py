"""Checks of NavMesh invariants and geometry helpers shared by the generator and query tests."""

from __future__ import annotations

from collections import deque

import numpy as np

from blender_navmesh.geometry import STRAIGHT_ANGLE, meeting_boxes
from blender_navmesh.triangulate import NEEDLE_FATNESS, SLIVER_WIDTH

# Two wall edges run back to back when their directions are this close to opposite (cosine).
COSINE_BACK_TO_BACK = 0.999


def polygon_xy(mesh, p: int) -> np.ndarray:
    return mesh.vertices[mesh.polygon(p), :2]


def assert_valid_navmesh(mesh, known_gaps: frozenset = frozenset()) -> None:
    """Every structural invariant the generator promises (issues 2 and 12), with messages naming the
    polygon; `known_gaps`: kinds of violation a test knowingly lets pass."""
    found = [(kind, message) for kind, message in navmesh_violations(mesh) if kind not in known_gaps]
    assert not found, f"{found[0][0]}: {found[0][1]}" + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")


def navmesh_violations(mesh) -> list[tuple[str, str]]:
    """(kind, message) for every broken invariant: structure, too many vertices, not convex or not
    counter-clockwise, zero area, needle, sliver, a directed edge used twice, asymmetric adjacency,
    T-junction, straight vertex no neighbour needs, wall edge longer than max_edge_len."""
    out = []
    n_poly = mesh.polygon_count
    sizes = mesh.polygon_sizes
    if not (len(mesh.neighbors) == len(mesh.poly_vertices) and len(mesh.regions) == n_poly == len(mesh.areas)):
        return [("structure", "per-edge or per-polygon arrays have the wrong length")]
    if not np.all(np.isfinite(mesh.vertices)):
        out.append(("structure", "non-finite vertex"))
    if np.any(sizes < 3):
        out.append(("structure", f"polygon {int(np.argmin(sizes))} has fewer than 3 vertices"))
    if np.any(sizes > mesh.params.max_verts_per_poly):
        out.append(
            ("max_verts", f"polygon {int(np.argmax(sizes))} has {int(sizes.max())} vertices, over max_verts_per_poly")
        )
    used = np.zeros(len(mesh.vertices), dtype=bool)
    used[mesh.poly_vertices] = True
    if not used.all():
        out.append(("structure", f"vertex {int(np.argmin(used))} is not used by any polygon"))
    if out:
        return out
    cell = mesh.params.cell_size
    edges = {}
    for p in range(n_poly):
        poly = mesh.polygon(p)
        if len(set(poly.tolist())) != len(poly):
            out.append(("structure", f"polygon {p} repeats a vertex"))
        xy = polygon_xy(mesh, p)
        xy = xy - xy[0]  # about its own corner: far from the origin the shoelace sum loses the area
        d1 = np.roll(xy, -1, axis=0) - xy
        d2 = np.roll(d1, -1, axis=0)
        cross = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
        scale = max(float(np.abs(d1).max()), 1e-9)
        area = 0.5 * np.sum(xy[:, 0] * np.roll(xy[:, 1], -1) - np.roll(xy[:, 0], -1) * xy[:, 1])
        if np.any(cross < -1e-9 * scale * scale):
            out.append(("not_convex_ccw", f"polygon {p} is not convex or not counter-clockwise"))
        elif area <= 1e-12 * scale * scale:
            out.append(("zero_area", f"polygon {p} has no area"))
        elif area / np.linalg.norm(d1, axis=1).sum() ** 2 <= NEEDLE_FATNESS:
            out.append(
                (
                    "needle",
                    f"polygon {p} is a needle (area {area:.3g}, "
                    f"perimeter² {np.linalg.norm(d1, axis=1).sum() ** 2:.3g})",
                )
            )
        elif (width := min_width(xy)) < SLIVER_WIDTH * cell:
            out.append(("sliver", f"polygon {p} is a sliver: {width:.3g} m wide, under {SLIVER_WIDTH} cells"))
        for k in range(len(poly)):
            a, b = int(poly[k]), int(poly[(k + 1) % len(poly)])
            if (a, b) in edges:
                out.append(("edge_twice", f"directed edge {a}->{b} used by polygons {edges[(a, b)][0]} and {p}"))
            edges[(a, b)] = (p, mesh.poly_offsets[p] + k)
    for (a, b), (p, slot) in edges.items():
        q = int(mesh.neighbors[slot])
        twin = edges.get((b, a))
        if q >= 0:
            if twin is None or twin[0] != q:
                out.append(("adjacency", f"polygon {p} edge {a}->{b}: neighbour {q} has no matching edge"))
            elif int(mesh.neighbors[twin[1]]) != p:
                out.append(("adjacency", f"polygon {p} edge {a}->{b}: adjacency is not symmetric"))
        elif twin is not None:
            out.append(("adjacency", f"edge {a}->{b} is shared by polygons {p} and {twin[0]} but marked as boundary"))
    out += [("t_junction", m) for m in t_junctions(mesh)]
    out += [("straight_vertex", m) for m in unneeded_straight_vertices(mesh)]
    out += [("long_edge", m) for m in long_wall_edges(mesh)]
    out += [("crack", m) for m in cracks(mesh)]
    return out


def cracks(mesh) -> list[str]:
    """Wall edges of two polygons that run back to back (opposite ways, floor on either side) closer
    than a sliver's width and at one height: a gap in the floor that no geometry makes and no path
    crosses, where two outlines should have shared a border. Floors either side of a real wall stay
    apart by twice the agent radius and the wall's thickness; at radius 0 a wall modelled as one
    face leaves them a hundredth of a cell either side of it, so no crack is looked for there."""
    p = mesh.params
    gap, climb = SLIVER_WIDTH * p.cell_size, p.agent_max_climb
    if p.agent_radius <= 0:
        return []
    wall = np.flatnonzero(mesh.neighbors < 0)
    a, b = mesh.vertices[mesh.poly_vertices[wall]], mesh.vertices[mesh.edge_next_vertex[wall]]
    box = np.column_stack([np.minimum(a[:, :2], b[:, :2]) - gap, np.maximum(a[:, :2], b[:, :2]) + gap])
    out = []
    for i, j in zip(*meeting_boxes(box, box)):
        if i >= j:
            continue
        d = b[i, :2] - a[i, :2]
        length = float(np.hypot(*d))
        e = b[j, :2] - a[j, :2]
        if length == 0 or np.hypot(*e) == 0 or np.dot(d, e) > -COSINE_BACK_TO_BACK * length * np.hypot(*e):
            continue
        u = d / length
        # j's ends along i's line and their offsets from it: j runs back to back with i where its
        # stretch overlaps i's and it stays on i's right (i's floor is on its left), within the gap.
        t = np.array([np.dot(b[j, :2] - a[i, :2], u), np.dot(a[j, :2] - a[i, :2], u)])
        off = np.array([np.cross(u, b[j, :2] - a[i, :2]), np.cross(u, a[j, :2] - a[i, :2])])
        lo, hi = max(t[0], 0.0), min(t[1], length)
        if hi - lo <= gap or t[1] == t[0]:
            continue
        side = off[0] + (np.array([lo, hi]) - t[0]) / (t[1] - t[0]) * (off[1] - off[0])
        z_i = a[i, 2] + np.array([lo, hi]) / length * (b[i, 2] - a[i, 2])
        z_j = b[j, 2] + (np.array([lo, hi]) - t[0]) / (t[1] - t[0]) * (a[j, 2] - b[j, 2])
        if np.all(side <= 0) and np.all(side > -gap) and np.all(np.abs(z_i - z_j) <= climb):
            out.append(
                f"wall edges of polygons {int(mesh.edge_polygon[wall[i]])} and {int(mesh.edge_polygon[wall[j]])} run"
                f" back to back {-float(side.min()):.3g} m apart over {hi - lo:.3g} m: a crack in the floor"
            )
    return out


def min_width(xy: np.ndarray) -> float:
    """Smallest width of a convex polygon: over its edges, the farthest vertex from that edge's line."""
    d = np.roll(xy, -1, axis=0) - xy
    length = np.maximum(np.linalg.norm(d, axis=1), 1e-300)
    rel = xy[None, :, :] - xy[:, None, :]
    dist = np.abs(d[:, None, 0] * rel[..., 1] - d[:, None, 1] * rel[..., 0]) / length[:, None]
    return float(dist.max(axis=1).min())


def unneeded_straight_vertices(mesh) -> list[str]:
    """Straight vertices that no polygon needs: a vertex is needed where some polygon turns at it,
    where the two edges of a polygon meeting at it have different neighbours (a portal ends
    there), or between two wall edges that would join into one longer than max_edge_len. Detour
    counts every vertex against its 6-vertex budget, so others are waste."""
    offs = mesh.poly_offsets
    owner = mesh.edge_polygon
    prev_slot = np.arange(len(mesh.poly_vertices)) - 1
    first = offs[:-1][owner] == np.arange(len(owner))
    prev_slot[first] = offs[1:][owner[first]] - 1
    v = mesh.poly_vertices
    here = mesh.vertices[v, :2]
    d_in = here - mesh.vertices[mesh.poly_vertices[prev_slot], :2]
    d_out = mesh.vertices[mesh.edge_next_vertex, :2] - here
    cross = d_in[:, 0] * d_out[:, 1] - d_in[:, 1] * d_out[:, 0]
    dot = (d_in * d_out).sum(1)
    straight = (np.abs(cross) <= STRAIGHT_ANGLE * np.linalg.norm(d_in, axis=1) * np.linalg.norm(d_out, axis=1)) & (
        dot > 0
    )
    needs = ~straight | (mesh.neighbors[prev_slot] != mesh.neighbors)
    if mesh.params.max_edge_len > 0:
        joined = np.linalg.norm(d_in + d_out, axis=1)
        needs |= (mesh.neighbors[prev_slot] < 0) & (mesh.neighbors < 0) & (joined > mesh.params.max_edge_len)
    needed = np.zeros(len(mesh.vertices), dtype=bool)
    needed[v[needs]] = True
    waste = np.flatnonzero(straight & ~needed[v])
    return [f"vertex {int(v[s])} of polygon {int(owner[s])} is straight and no neighbour needs it" for s in waste]


def long_wall_edges(mesh) -> list[str]:
    """Wall edges longer (seen from above) than max_edge_len, when it is set."""
    limit = mesh.params.max_edge_len
    if limit <= 0:
        return []
    length = np.linalg.norm(mesh.vertices[mesh.edge_next_vertex, :2] - mesh.vertices[mesh.poly_vertices, :2], axis=1)
    long = np.flatnonzero((mesh.neighbors < 0) & (length > limit * (1 + 1e-9)))
    return [
        f"wall edge of polygon {int(mesh.edge_polygon[s])} is {length[s]:.4g} m long, over max_edge_len {limit:g}"
        for s in long
    ]


def assert_no_t_junctions(mesh, tol: float = 1e-7) -> None:
    found = t_junctions(mesh, tol)
    assert not found, found[0]


def t_junctions(mesh, tol: float = 1e-7) -> list[str]:
    """No polygon edge runs along part of another polygon's edge with a vertex inside it: the two
    would share that stretch without sharing vertices, which breaks adjacency. (A vertex that only
    touches another polygon's wall edge at a point, two regions pinching together, shares nothing.)"""
    out = []
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
            ends = np.concatenate(
                [
                    mesh.edge_next_vertex[mesh.poly_vertices == vertex],
                    mesh.poly_vertices[mesh.edge_next_vertex == vertex],
                ]
            )
            rel = mesh.vertices[ends] - a[e]
            off_line = np.linalg.norm(rel - np.outer(rel @ d[e] / length_sq[e], d[e]), axis=1)
            if (off_line < tol).any():
                out.append(
                    f"vertex {vertex} lies inside edge {int(e)} and an edge at it runs along that edge (T-junction)"
                )
    return out


def polygons_at(mesh, x: float, y: float) -> list[int]:
    """Polygons whose top-view outline contains (x, y)."""
    hits = []
    for p in range(mesh.polygon_count):
        xy = polygon_xy(mesh, p)
        corner = xy[0]
        xy = xy - corner  # about its own corner: far from the origin the sums lose the digits that count
        d1 = np.roll(xy, -1, axis=0) - xy
        rel = (np.array([x, y]) - corner) - xy
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
