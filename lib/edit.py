"""A navmesh edited by hand: polygons deleted, moved or repainted after the bake (Blender 2.79
let designers do this to its navmesh faces) become the navmesh, rebuilt around the edit.

Adjacency and clearance are computed afresh from the edited polygons. A polygon whose corners are
exactly those of a baked polygon keeps that polygon's detail surface; any other follows its own
corners (a fan), since there is no heightfield to sample after the bake. Off-mesh links are kept
where both their ends still lie on the edited polygons.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import clearance
from .detail.fan import _fan
from .errors import NavMeshError
from .geometry import STEP_NOISE, meeting_boxes
from .links import relocated
from .navmesh import DetailMesh, NavMesh, PolyMesh, check_convex

# Two polygons within a climb step of each other whose insides overlap by more than this (m, the
# least depth along any axis that could separate them) overlap: a face duplicated and moved.
OVERLAP_DEPTH = 1e-4


def from_edited_polygons(baked: NavMesh, vertices, polygons: list[list[int]], areas, regions) -> NavMesh:
    """The navmesh made of these polygons (vertex-index lists into vertices (V, 3), counter-clockwise
    seen from +Z, each convex), with their area and region ids; `baked` is the navmesh they were
    edited from (its parameters and detail surface; a vertex equal to a baked one at single
    precision is that vertex). NavMeshError naming a polygon that cannot be used."""
    vertices = _snapped(np.asarray(vertices, dtype=np.float64).reshape(-1, 3), baked.vertices)
    if not polygons:
        return NavMesh.empty(baked.params, "every navmesh polygon was deleted by hand")
    for p, poly in enumerate(polygons):
        if len(poly) < 3 or len(set(poly)) < len(poly):
            raise NavMeshError(
                f"edited navmesh polygon {p} has {len(set(poly))} distinct corners; a navmesh polygon needs at least 3"
            )
    mesh = PolyMesh.from_polygons(polygons, regions, areas, vertices, baked.params)
    try:
        check_convex(mesh.vertices, mesh.poly_offsets, mesh.poly_vertices)
    except NavMeshError as exc:
        raise NavMeshError(f"the edited navmesh cannot be used: {exc}; undo the edit or bake again") from None
    if np.any(np.bincount(_directed_edges(mesh), minlength=1) > 1):
        raise NavMeshError(
            "the edited navmesh cannot be used: two polygons overlap (they share an edge "
            "running the same way); undo the edit or bake again"
        )
    overlap = _overlapping_pair(mesh, float(baked.params.agent_max_climb) + STEP_NOISE)
    if overlap is not None:
        raise NavMeshError(
            f"the edited navmesh cannot be used: polygons {overlap[0]} and {overlap[1]} overlap on one floor; "
            "undo the edit or bake again"
        )
    surface = _detail(mesh, baked)
    edited = NavMesh.assemble(mesh, surface, clearance.compute_clearance(mesh), area_costs=baked.area_costs)
    return replace(edited, links=relocated(edited, baked.links))


def moved(mesh: NavMesh, angle: float, offset) -> NavMesh:
    """The navmesh turned by `angle` radians about the Z axis through the origin, then moved by
    `offset` (m): a rigid motion along the floor, which keeps every slope, clearance, polygon winding
    and adjacency (a tilt or a scale would not). The navmesh itself when it is no motion."""
    shift = np.asarray(offset, dtype=np.float64).reshape(3)
    if angle == 0.0 and not shift.any():
        return mesh
    c, s = np.cos(angle), np.sin(angle)
    turn = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])

    def place(points) -> np.ndarray:
        return np.asarray(points, dtype=np.float64).reshape(-1, 3) @ turn.T + shift

    links = tuple(
        replace(link, start=tuple(place(link.start)[0].tolist()), end=tuple(place(link.end)[0].tolist()))
        for link in mesh.links
    )
    return replace(mesh, vertices=place(mesh.vertices), detail_vertices=place(mesh.detail_vertices), links=links)


def _overlapping_pair(mesh: PolyMesh, climb: float) -> tuple[int, int] | None:
    """Two polygons whose insides overlap seen from above by more than OVERLAP_DEPTH, with heights
    within a climb step of each other (floors above one another may overlap), or None. Separating
    axes: convex polygons overlap unless the normal of an edge of one of them parts them."""
    polygons = [mesh.vertices[mesh.polygon(p)] for p in range(mesh.polygon_count)]
    boxes = np.array([[*pts[:, :2].min(axis=0), *pts[:, :2].max(axis=0)] for pts in polygons]).reshape(-1, 4)
    for i, j in zip(*meeting_boxes(boxes, boxes)):
        if i >= j:
            continue
        a, b = polygons[i], polygons[j]
        if a[:, 2].min() - b[:, 2].max() > climb or b[:, 2].min() - a[:, 2].max() > climb:
            continue
        normals = np.vstack([_edge_normals(a), _edge_normals(b)])
        pa, pb = a[:, :2] @ normals.T, b[:, :2] @ normals.T
        depth = np.minimum(pa.max(axis=0) - pb.min(axis=0), pb.max(axis=0) - pa.min(axis=0))
        if depth.min() > OVERLAP_DEPTH:
            return int(i), int(j)
    return None


def _edge_normals(points: np.ndarray) -> np.ndarray:
    """Unit normals (seen from above) of a polygon's edges."""
    edges = np.roll(points[:, :2], -1, axis=0) - points[:, :2]
    normals = np.column_stack([-edges[:, 1], edges[:, 0]])
    return normals / np.hypot(normals[:, 0], normals[:, 1])[:, None]


def _snapped(vertices: np.ndarray, baked: np.ndarray) -> np.ndarray:
    """Vertices that are a baked vertex stored at single precision (as a Blender mesh holds them)
    take the baked position back, so what the edit did not touch stays exactly as baked."""
    exact = {tuple(v): k for k, v in enumerate(baked.astype(np.float32).tolist())}
    out = vertices.copy()
    for i, v in enumerate(vertices.astype(np.float32).tolist()):
        k = exact.get(tuple(v))
        if k is not None:
            out[i] = baked[k]
    return out


def _directed_edges(mesh: PolyMesh) -> np.ndarray:
    """An id per directed edge (vertex a to vertex b), to find edges used twice."""
    a, b = mesh.poly_vertices, mesh.edge_next_vertex
    _, ids = np.unique(np.column_stack([a, b]), axis=0, return_inverse=True)
    return ids.reshape(-1)


def _detail(mesh: PolyMesh, baked: NavMesh) -> DetailMesh:
    """The edited polygons' detail surface: the baked polygon's where a polygon kept its corners exactly
    (a polygon deleted or repainted nearby changes nothing here), a fan of its corners elsewhere."""
    same = _unchanged_polygons(mesh, baked)
    # The baked detail triangles grouped by polygon: polygon q's are by_polygon[cuts[q]:cuts[q + 1]].
    by_polygon = np.argsort(baked.detail_polygons, kind="stable")
    cuts = np.searchsorted(baked.detail_polygons[by_polygon], np.arange(baked.polygon_count + 1))
    surfaces = []
    for p in range(mesh.polygon_count):
        q = same.get(p)
        if q is not None and cuts[q + 1] > cuts[q]:
            tris = by_polygon[cuts[q] : cuts[q + 1]]
            used, local = np.unique(baked.detail_triangles[tris], return_inverse=True)
            verts, local = baked.detail_vertices[used], local.reshape(-1, 3)
        else:
            verts = mesh.vertices[mesh.polygon(p)]
            local = np.array(_fan(len(verts), 0), dtype=np.int64)
        surfaces.append((verts, local))
    return DetailMesh.from_surfaces(mesh.vertices, surfaces)


def _unchanged_polygons(mesh: PolyMesh, baked: NavMesh) -> dict[int, int]:
    """Polygon of mesh -> the baked polygon with exactly the same corners in the same order."""

    def key(m: PolyMesh, p: int) -> tuple:
        corners = [tuple(c) for c in m.vertices[m.polygon(p)].tolist()]
        start = corners.index(min(corners))
        return tuple(corners[start:] + corners[:start])

    baked_keys = {key(baked, q): q for q in range(baked.polygon_count)}
    return {p: baked_keys[k] for p in range(mesh.polygon_count) if (k := key(mesh, p)) in baked_keys}
